// The IP of the end user behind a request, for per-user limits (the guess throttle). A backend
// serving many users from one address can be marked by the operator as a trusted backend
// (`platform api-key create --trusted-backend`); requests with its key may then name the end user's
// IP in `x-end-user-ip`, so that one user's guessing does not use up the others' budget. For any
// other caller the header is ignored: otherwise anyone could name a fresh IP on every request.
import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { badRequest } from '../shared/errors.ts';

export const END_USER_IP_HEADER = 'x-end-user-ip';
const INVALID = "The x-end-user-ip header must be one IPv4 or IPv6 address (the end user's, sent by a trusted backend)";

/** The request's IP (socket or trusted proxy), or a trusted backend's x-end-user-ip; 400 when that is not one address. */
export function endUserIp(request: FastifyRequest): string {
  if (!request.apiKeyTrustedBackend) return request.ip;
  const header = request.headers[END_USER_IP_HEADER];
  if (header === undefined) return request.ip;
  // one address, in its plain form: no list, no zone index, no port
  if (typeof header !== 'string' || isIP(header) === 0 || header.includes('%')) throw badRequest(INVALID);
  return header;
}
