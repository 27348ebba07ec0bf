// Bearer sessions, as every capability sees them. The sign-in capability issues tokens and
// installs the resolver (`ctx.sessionResolver`); routes call `requireSession` / `getSession`.
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import type { Chain } from './addresses.ts';
import { forbidden, unauthorized } from './errors.ts';

export interface Session {
  /** Canonical (native) address of the signed-in user. */
  platformAddress: string;
  /** The address as the user signed in with it. */
  address: string;
  chain: Chain;
  /** Approved scope ids (camelCase). */
  scopes: string[];
  clientId: string;
  /** The authorization (code → token family) the token belongs to. */
  authorizationId: string;
}

export type SessionResolver = (accessToken: string) => Promise<Session | null>;

declare module 'fastify' {
  interface FastifyRequest {
    sessionPromise?: Promise<Session | null>;
  }
}

/** Without sign-in registered there are no sessions: every token resolves to null. */
export const noSessions: SessionResolver = async () => null;

/** Installed by the sign-in capability for its application context. */
export function setSessionResolver(r: SessionResolver, ctx: Pick<AppContext, 'sessionResolver'>): void {
  ctx.sessionResolver = r;
}

export function bearerToken(request: FastifyRequest): string | null {
  const h = request.headers.authorization;
  if (typeof h !== 'string') return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : null;
}

/** The request's session, or null (no token, or an expired, revoked or unknown one). */
export function getSession(request: FastifyRequest): Promise<Session | null> {
  if (!request.sessionPromise) {
    const token = bearerToken(request);
    request.sessionPromise = token ? request.server.ctx.sessionResolver(token) : Promise.resolve(null);
  }
  return request.sessionPromise;
}

/** A session holding every scope named; 401 without a valid session, 403 for a missing scope. */
export async function requireSession(request: FastifyRequest, ...scopes: string[]): Promise<Session> {
  const session = await getSession(request);
  if (!session)
    throw unauthorized(
      'Unauthorized request. This route requires a signed-in session (Authorization: Bearer <access token>).',
    );
  const missing = scopes.filter((s) => !session.scopes.includes(s));
  if (missing.length) throw forbidden(`This route requires the session to hold the scope(s): ${missing.join(', ')}`);
  return session;
}
