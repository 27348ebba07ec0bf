// Operator tokens: a session for an address minted by the operator (`platform token create`), for
// backends and scripts that act as an address without a wallet at hand. Each is an ordinary
// authorization row, so every route, scope check and revocation treats it like a wallet session:
// - client_id is OPERATOR_CLIENT_ID, which no developer app can have (app ids are 64 hex);
// - the code is consumed at creation (its hash is of random bytes nobody holds);
// - there is no refresh token: nobody could authenticate as the client to refresh it, and the
//   operator mints a new one instead; the access token lives until --expires;
// - `message` records who minted it and why, where a wallet session holds its signed message.
// The token is `<authorization_id>.<verifier>` like every access token; only SHA-256(verifier) is stored.
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { parseAddress } from '../shared/addresses.ts';
import { randomHex, sha256Hex } from '../shared/crypto.ts';
import { badRequest } from '../shared/errors.ts';
import { DAY } from './lifetimes.ts';
import { SCOPE_IDS } from './scopes.ts';

export const OPERATOR_CLIENT_ID = 'operator';
export const DEFAULT_OPERATOR_TOKEN_TTL_MS = 30 * DAY;
export const MAX_OPERATOR_TOKEN_TTL_MS = 366 * DAY;

export interface OperatorToken {
  id: string;
  address: string;
  platformAddress: string;
  scopes: string[];
  label: string;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
}

/** `90m`, `12h`, `30d` (or plain milliseconds) → milliseconds. */
export function parseDuration(text: string): number | null {
  const m = /^(\d{1,9})(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) return null;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: DAY }[(m[2] ?? 'ms') as 'ms'];
  return Number(m[1]) * unit;
}

const messageFor = (label: string, now: number) =>
  `Operator token "${label}" minted with the platform CLI at ${new Date(now).toISOString()}`;
const labelOf = (message: string) => /^Operator token "(.*)" minted/s.exec(message)?.[1] ?? '';

export async function createOperatorToken(
  ctx: AppContext,
  input: { address: string; scopes: string[]; ttlMs?: number; label?: string },
): Promise<OperatorToken & { accessToken: string }> {
  const parsed = parseAddress(input.address, '--address');
  const scopes = [...new Set(input.scopes)];
  if (scopes.length === 0) throw badRequest(`--scopes needs at least one of ${SCOPE_IDS.join(', ')}`);
  const unknown = scopes.filter((s) => !SCOPE_IDS.includes(s));
  if (unknown.length) throw badRequest(`Unknown scope(s) ${unknown.join(', ')}: use ${SCOPE_IDS.join(', ')}`);
  const ttl = input.ttlMs ?? DEFAULT_OPERATOR_TOKEN_TTL_MS;
  if (!(ttl > 0 && ttl <= MAX_OPERATOR_TOKEN_TTL_MS))
    throw badRequest('--expires must be more than 0 and at most 366d');
  const label = input.label ?? '';
  if (label.length > 200 || /[\u0000-\u001f"]/.test(label))
    throw badRequest('--label must be at most 200 characters, without quotes or control characters');
  const now = ctx.clock.now();
  const id = randomHex(16);
  const verifier = randomBytes(32).toString('hex');
  const address = parsed.chain === 'ETH' ? parsed.evmAddress : parsed.platformAddress;
  const expiresAt = now + ttl;
  await ctx.db
    .insertInto('signin_authorizations')
    .values({
      authorization_id: id,
      code_hash: sha256Hex(randomHex(32)),
      client_id: OPERATOR_CLIENT_ID,
      redirect_uri: null,
      scopes: JSON.stringify(scopes),
      code_challenge: null,
      address,
      platform_address: parsed.platformAddress,
      chain: parsed.chain,
      message: messageFor(label, now),
      created_at: now,
      code_expires_at: now,
      code_consumed_at: now,
      expires_at: expiresAt,
      revoked_at: null,
      access_hash: sha256Hex(verifier),
      access_scopes: JSON.stringify(scopes),
      access_expires_at: expiresAt,
      refresh_hash: null,
      refresh_expires_at: null,
    })
    .execute();
  ctx.log.warn(
    { operatorToken: id, platformAddress: parsed.platformAddress, scopes, expiresAt },
    'operator token created',
  );
  return {
    id,
    address,
    platformAddress: parsed.platformAddress,
    scopes,
    label,
    createdAt: now,
    expiresAt,
    revokedAt: null,
    accessToken: `${id}.${verifier}`,
  };
}

export async function listOperatorTokens(ctx: AppContext): Promise<OperatorToken[]> {
  const rows = await ctx.db
    .selectFrom('signin_authorizations')
    .select([
      'authorization_id',
      'address',
      'platform_address',
      'access_scopes',
      'message',
      'created_at',
      'expires_at',
      'revoked_at',
    ])
    .where('client_id', '=', OPERATOR_CLIENT_ID)
    .orderBy('created_at')
    .orderBy('authorization_id')
    .execute();
  return rows.map((r) => ({
    id: r.authorization_id,
    address: r.address,
    platformAddress: r.platform_address,
    scopes: JSON.parse(r.access_scopes ?? '[]'),
    label: labelOf(r.message),
    createdAt: r.created_at,
    expiresAt: r.expires_at ?? r.created_at,
    revokedAt: r.revoked_at,
  }));
}

/** Revokes an operator token by id; false when there is no live operator token with that id. */
export async function revokeOperatorToken(ctx: AppContext, id: string): Promise<boolean> {
  const now = ctx.clock.now();
  const r = await ctx.db
    .updateTable('signin_authorizations')
    .set({ revoked_at: now })
    .where('authorization_id', '=', id)
    .where('client_id', '=', OPERATOR_CLIENT_ID)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  const revoked = Number(r.numUpdatedRows) === 1;
  if (revoked) ctx.log.warn({ operatorToken: id }, 'operator token revoked');
  return revoked;
}
