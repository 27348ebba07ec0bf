// The token endpoint (authorization_code and refresh_token grants), revocation and bearer sessions.
// Every validation runs before anything is consumed, so a bad request cannot burn a good code or
// refresh token; consumption is a conditional UPDATE (… WHERE consumed_at IS NULL) whose row count
// decides the single winner. A reused code or refresh token revokes its whole authorization.
//
// Access and refresh tokens are `<authorization_id>.<verifier>`: the row's primary key as a
// selector, then 32 fresh random bytes. Only SHA-256(verifier) is stored, in columns without an
// index; a lookup reads the row by primary key and compares the hashes in constant time. A token
// whose selector exists but whose verifier does not match is an unknown token: the selector alone
// (which is no secret) never acts on an authorization.
import { createHash, randomFillSync } from 'node:crypto';
import type { AppContext } from '../context.ts';
import type { Chain } from '../shared/addresses.ts';
import { safeEqual, sha256Hex } from '../shared/crypto.ts';
import type { Session } from '../shared/session.ts';
import { clientLists, findAppRowCached, secretMatches, type GrantType, GRANT_TYPES } from './apps.ts';
import { ACCESS_TOKEN_TTL_MS, DEFAULT_ISSUED_AT_WINDOW_MS, REFRESH_TOKEN_TTL_MS } from './lifetimes.ts';
import { groupTransaction, type Program } from './group-commit.ts';
import { OPENID_SCOPE, signIdToken } from './id-token.ts';
import { oauthError } from './oauth-errors.ts';
import type { ApiError } from '../shared/errors.ts';
import {
  CONSUME_CODE,
  EXCHANGE_CODE,
  EXCHANGE_CODE_REDIRECT,
  execute,
  FIND_ACCESS,
  FIND_BY_REFRESH,
  FIND_CODE,
  FIND_ROTATED,
  FIND_TOKEN_OWNER,
  INSERT_ROTATED,
  REVOKE_AUTHORIZATION,
  ROTATE,
  ROTATE_IN_ONE,
} from './sql.ts';
import { parseList, type SigninAppTable, type SigninAuthorizationTable } from './storage.ts';

export interface TokenRequest {
  grant_type?: string;
  code?: string;
  redirect_uri?: string;
  client_id?: string;
  client_secret?: string;
  refresh_token?: string;
  code_verifier?: string;
  scope?: string;
  options?: { issuedAtTimeWindowMs?: number };
}

export interface TokenResponse {
  address: string;
  chain: Chain;
  platformAddress: string;
  verificationResponse: { success: boolean; errorMessage?: string };
  access_token: string;
  token_type: 'Bearer';
  /** UNIX ms as a decimal string. */
  access_token_expires_at: string;
  refresh_token: string;
  refresh_token_expires_at: string;
  /** Seconds until the access token expires (RFC 6749 §5.1). */
  expires_in: number;
  /** Granted scope ids, space-separated. */
  scope: string;
  /** OpenID Connect: when the access token holds the `openid` scope. */
  id_token?: string;
}

// ---------------------------------------------------------------------------------------------
// Client authentication (RFC 6749 §2.3.1): client_secret_post or client_secret_basic, never both.

interface ClientCredentials {
  clientId: string;
  clientSecret: string | undefined;
  basic: boolean;
}

/** RFC 6749 Appendix B: Basic credentials are form-urlencoded before base64. */
function formDecode(s: string): string {
  return decodeURIComponent(s.replace(/\+/g, ' '));
}

export function clientCredentials(
  body: { client_id?: string; client_secret?: string },
  authorization: string | undefined,
): ClientCredentials {
  if (typeof authorization === 'string' && /^basic\b/i.test(authorization)) {
    const m = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(authorization.trim());
    const decoded = m ? Buffer.from(m[1], 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    if (!m || colon < 0)
      throw oauthError(
        'invalid_request',
        'Invalid Authorization header: expected Basic base64(client_id:client_secret).',
      );
    let clientId: string;
    let clientSecret: string;
    try {
      clientId = formDecode(decoded.slice(0, colon));
      clientSecret = formDecode(decoded.slice(colon + 1));
    } catch {
      throw oauthError('invalid_request', 'Invalid Authorization header: the credentials are not form-urlencoded.');
    }
    if (body.client_secret !== undefined) {
      throw oauthError(
        'invalid_request',
        'Client authentication must use only one mechanism: HTTP Basic or client_secret in the body, not both.',
      );
    }
    if (body.client_id !== undefined && body.client_id !== clientId)
      throw oauthError('invalid_request', 'client_id in the body does not match the HTTP Basic client_id.');
    if (clientSecret === '')
      throw oauthError('invalid_client', 'Client authentication failed: empty client secret.', { basicAuthUsed: true });
    return { clientId, clientSecret, basic: true };
  }
  if (body.client_id === undefined) throw oauthError('invalid_request', 'client_id is required.');
  return { clientId: body.client_id, clientSecret: body.client_secret, basic: false };
}

/** The authenticated client's app row; 401 invalid_client for an unknown client or a wrong or missing secret. */
export async function authenticateClient(ctx: AppContext, creds: ClientCredentials): Promise<SigninAppTable> {
  const app = await findAppRowCached(ctx, creds.clientId);
  if (!app || creds.clientSecret === undefined || !secretMatches(app, creds.clientSecret)) {
    const why = !app
      ? 'unknown client'
      : creds.clientSecret === undefined
        ? 'client_secret is required'
        : 'invalid client secret';
    throw oauthError('invalid_client', `Client authentication failed: ${why}.`, { basicAuthUsed: creds.basic });
  }
  return app;
}

// ---------------------------------------------------------------------------------------------

const VERIFIER_RE = /^[A-Za-z0-9._~-]{43,128}$/;
const s256 = (verifier: string) => createHash('sha256').update(verifier, 'ascii').digest('base64url');

async function revokeAuthorization(ctx: AppContext, authorizationId: string, now: number): Promise<void> {
  await execute(ctx, REVOKE_AUTHORIZATION(ctx.dialect, [now, authorizationId]));
}

const affected = (r: { numAffectedRows?: bigint }) => Number(r.numAffectedRows ?? 0);

/** What FIND_CODE and FIND_BY_REFRESH read (FIND_BY_REFRESH adds `refresh_hash`). */
type GrantRow = Pick<
  SigninAuthorizationTable,
  | 'authorization_id'
  | 'client_id'
  | 'redirect_uri'
  | 'scopes'
  | 'code_challenge'
  | 'address'
  | 'platform_address'
  | 'chain'
  | 'created_at'
  | 'code_expires_at'
  | 'expires_at'
  | 'revoked_at'
  | 'refresh_expires_at'
  | 'oidc_nonce'
>;

// Token bytes come from a pool of CSPRNG output refilled 4 KiB at a time: one randomFillSync per 64
// token pairs instead of one per pair (a call costs several times the hex encoding of its bytes).
// Each byte is handed out once and zeroed in the pool as it is taken.
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/** `bytes` fresh random bytes as hex. */
function randomTokenHex(bytes: number): string {
  if (poolAt + bytes > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const hex = pool.toString('hex', poolAt, poolAt + bytes);
  pool.fill(0, poolAt, poolAt + bytes);
  poolAt += bytes;
  return hex;
}

/** `<authorization_id: 32 hex>.<verifier: 64 hex>`, lowercase, nothing else. */
const TOKEN_RE = /^[0-9a-f]{32}\.[0-9a-f]{64}$/;
const TOKEN_LENGTH = 32 + 1 + 64;

/**
 * An access or refresh token's selector (the authorization id) and the SHA-256 hex of its verifier,
 * or null when the token is not exactly of that shape (then it is simply an unknown token).
 */
function parseToken(token: string): { authorizationId: string; verifierHash: string } | null {
  if (token.length !== TOKEN_LENGTH || !TOKEN_RE.test(token)) return null;
  return { authorizationId: token.slice(0, 32), verifierHash: sha256Hex(token.slice(33)) };
}

/** Whether a presented verifier's hash is the stored one (constant time; a null column matches nothing). */
const hashMatches = (verifierHash: string, stored: string | null): boolean =>
  stored !== null && safeEqual(verifierHash, stored);

/** Two fresh verifiers (32 random bytes each, as hex) and the SHA-256 hex of each, as stored. */
function freshVerifiers() {
  const random = randomTokenHex(64);
  const access = random.slice(0, 64);
  const refresh = random.slice(64);
  return { access, refresh, accessHash: sha256Hex(access), refreshHash: sha256Hex(refresh) };
}

type Verifiers = ReturnType<typeof freshVerifiers>;

/** When a new pair's tokens expire: both count from now (rotation resets them, docs/signin.md), within the family's end if any. */
function pairLifetimes(now: number, familyExpiresAt: number | null) {
  return {
    accessExpiresAt: Math.min(now + ACCESS_TOKEN_TTL_MS, familyExpiresAt ?? Infinity),
    refreshExpiresAt: Math.min(now + REFRESH_TOKEN_TTL_MS, familyExpiresAt ?? Infinity),
  };
}

/**
 * A fresh access/refresh pair for an authorization (or the pair of verifiers `v` already drawn):
 * the values for the response, the verifier hashes for storage. `accessScopesJson` is the JSON of
 * `accessScopes` when the caller already holds it.
 */
function tokenPair(
  authorizationId: string,
  now: number,
  accessScopes: string[],
  familyExpiresAt: number | null,
  accessScopesJson = JSON.stringify(accessScopes),
  v: Verifiers = freshVerifiers(),
) {
  const accessToken = `${authorizationId}.${v.access}`;
  const refreshToken = `${authorizationId}.${v.refresh}`;
  const { accessExpiresAt, refreshExpiresAt } = pairLifetimes(now, familyExpiresAt);
  // column order of CONSUME_CODE / ROTATE: access_hash, access_scopes, access_expires_at, refresh_hash, refresh_expires_at
  const columns = [v.accessHash, accessScopesJson, accessExpiresAt, v.refreshHash, refreshExpiresAt];
  return { columns, accessToken, refreshToken, accessExpiresAt, refreshExpiresAt };
}

type TokenPair = ReturnType<typeof tokenPair>;

/** What EXCHANGE_CODE answers: the columns of GrantRow that a successful exchange uses. */
type ExchangedRow = Pick<
  GrantRow,
  'authorization_id' | 'client_id' | 'scopes' | 'address' | 'platform_address' | 'chain' | 'created_at' | 'oidc_nonce'
>;

function respond(
  a: { address: string; chain: Chain; platform_address: string },
  t: ReturnType<typeof tokenPair>,
  scopes: string[],
  now: number,
): TokenResponse {
  return {
    address: a.address,
    chain: a.chain,
    platformAddress: a.platform_address,
    verificationResponse: { success: true },
    access_token: t.accessToken,
    token_type: 'Bearer',
    access_token_expires_at: String(t.accessExpiresAt),
    refresh_token: t.refreshToken,
    refresh_token_expires_at: String(t.refreshExpiresAt),
    expires_in: Math.max(0, Math.floor((t.accessExpiresAt - now) / 1000)),
    scope: scopes.join(' '),
  };
}

/**
 * The response, with an id_token when the new access token holds `openid` (OpenID Connect Core
 * §3.1.3.3, §12.2): `sub` and `auth_time` (the approval) are the family's, the nonce only on the
 * code exchange.
 */
async function answer(
  ctx: AppContext,
  a: Omit<ExchangedRow, 'oidc_nonce'>,
  t: TokenPair,
  scopes: string[],
  now: number,
  nonce: string | null,
): Promise<TokenResponse> {
  const res = respond(a, t, scopes, now);
  if (!scopes.includes(OPENID_SCOPE)) return res;
  res.id_token = await signIdToken(ctx, {
    clientId: a.client_id,
    address: a.address,
    chain: a.chain,
    platformAddress: a.platform_address,
    authTime: a.created_at,
    nonce,
    accessToken: t.accessToken,
    now,
  });
  return res;
}

export async function tokenEndpoint(
  ctx: AppContext,
  body: TokenRequest,
  authorization: string | undefined,
): Promise<TokenResponse> {
  const app = await authenticateClient(ctx, clientCredentials(body, authorization));
  if (body.grant_type === undefined) throw oauthError('invalid_request', 'grant_type is required.');
  if (!GRANT_TYPES.includes(body.grant_type as GrantType)) {
    throw oauthError(
      'unsupported_grant_type',
      `Unsupported grant_type ${JSON.stringify(body.grant_type)}: use authorization_code or refresh_token.`,
    );
  }
  if (!clientLists(app).grantTypes.includes(body.grant_type)) {
    throw oauthError('unauthorized_client', `This client is not allowed to use the ${body.grant_type} grant.`);
  }
  return body.grant_type === 'authorization_code' ? exchangeCode(ctx, app, body) : refresh(ctx, app, body);
}

/** Why a code cannot be exchanged by this request, or null when every check passes. */
function codeProblem(
  a: GrantRow,
  app: SigninAppTable,
  body: TokenRequest,
  now: number,
  window: number,
): ApiError | null {
  if (a.client_id !== app.client_id)
    return oauthError('invalid_grant', 'The authorization code was issued to another client.');
  if (a.revoked_at !== null) return oauthError('invalid_grant', 'The authorization of this code has been revoked.');
  if (now >= a.code_expires_at) return oauthError('invalid_grant', 'The authorization code has expired.');
  if (window > 0 && now - a.created_at > window) {
    return oauthError(
      'invalid_grant',
      `Not recent enough. The code was issued at ${new Date(a.created_at).toISOString()}, outside options.issuedAtTimeWindowMs (${window} ms).`,
    );
  }
  if (a.redirect_uri !== null) {
    if (body.redirect_uri === undefined)
      return oauthError('invalid_request', 'redirect_uri is required: the code was issued with one.');
    if (body.redirect_uri !== a.redirect_uri)
      return oauthError('invalid_grant', 'redirect_uri does not match the one of the authorization request.');
    if (!clientLists(app).redirectUris.includes(a.redirect_uri))
      return oauthError('invalid_grant', 'redirect_uri is no longer registered for this client.');
  } else if (body.redirect_uri !== undefined) {
    return oauthError('invalid_grant', 'redirect_uri was not part of the authorization request.');
  }
  // PKCE (RFC 7636 §4.6; RFC 9700 §2.1.1: a verifier for a code without a challenge is a downgrade).
  if (a.code_challenge !== null) {
    if (body.code_verifier === undefined)
      return oauthError('invalid_grant', 'code_verifier is required: the authorization request used PKCE.');
    if (!safeEqual(s256(body.code_verifier), a.code_challenge))
      return oauthError('invalid_grant', 'code_verifier does not match the code_challenge.');
  } else if (body.code_verifier !== undefined) {
    return oauthError(
      'invalid_grant',
      'code_verifier was provided but the authorization request had no code_challenge.',
    );
  }
  return null;
}

async function exchangeCode(ctx: AppContext, app: SigninAppTable, body: TokenRequest): Promise<TokenResponse> {
  if (!body.code) throw oauthError('invalid_request', 'code is required for the authorization_code grant.');
  const window = body.options?.issuedAtTimeWindowMs ?? DEFAULT_ISSUED_AT_WINDOW_MS;
  if (!Number.isSafeInteger(window) || window < 0)
    throw oauthError('invalid_request', 'options.issuedAtTimeWindowMs must be a non-negative integer.');
  if (body.code_verifier !== undefined && !VERIFIER_RE.test(body.code_verifier)) {
    throw oauthError(
      'invalid_request',
      'code_verifier must be 43 to 128 characters from A-Z a-z 0-9 - . _ ~ (RFC 7636 §4.1).',
    );
  }
  const now = ctx.clock.now();
  const codeHash = sha256Hex(body.code);
  const maxAge = ctx.config.signinSessionMaxAgeMs;
  const familyExpiresAt = maxAge === null ? null : now + maxAge;
  // The usual exchange is one statement: when every check of codeProblem can be a condition of the
  // UPDATE (no PKCE verifier to compare in constant time; a redirect_uri, if any, still registered
  // for the client), the code is consumed and the tokens stored only if all hold, and the row comes
  // back. No row: nothing was written, and the full path below finds out why (or exchanges it).
  const fast =
    body.code_verifier === undefined &&
    (body.redirect_uri === undefined || clientLists(app).redirectUris.includes(body.redirect_uri));
  const v = fast ? freshVerifiers() : null;
  const exchangeInOne = () => {
    const { accessExpiresAt, refreshExpiresAt } = pairLifetimes(now, familyExpiresAt);
    const params = [
      now,
      familyExpiresAt,
      v!.accessHash,
      accessExpiresAt,
      v!.refreshHash,
      refreshExpiresAt,
      codeHash,
      app.client_id,
      now,
      window > 0 ? now - window : Number.MIN_SAFE_INTEGER,
    ];
    return body.redirect_uri === undefined
      ? EXCHANGE_CODE(ctx.dialect, params)
      : EXCHANGE_CODE_REDIRECT(ctx.dialect, [...params, body.redirect_uri]);
  };
  const issued = (a: ExchangedRow) => {
    const scopes = parseList(a.scopes);
    return { a, t: tokenPair(a.authorization_id, now, scopes, familyExpiresAt, a.scopes, v!), scopes };
  };
  // PostgreSQL: the one statement commits alone (no BEGIN/COMMIT round trips); SQLite: it runs in
  // the shared group commit like every write of the token endpoint.
  if (fast && ctx.dialect !== 'sqlite') {
    const a = (await execute<ExchangedRow>(ctx, exchangeInOne())).rows[0];
    if (a) {
      const r = issued(a);
      return answer(ctx, a, r.t, r.scopes, now, a.oidc_nonce);
    }
  }
  // Read, check and consume in one transaction (shared with concurrent exchanges on SQLite): every
  // check runs before anything is written, so a bad request cannot burn a good code, and the
  // conditional UPDATE decides the single winner among concurrent exchanges of one code.
  const outcome = await groupTransaction(ctx, function* (): Program<
    { problem: ApiError } | { a: ExchangedRow; t: TokenPair; scopes: string[] }
  > {
    if (fast && ctx.dialect === 'sqlite') {
      const one = (yield exchangeInOne()).rows[0] as ExchangedRow | undefined;
      if (one) return issued(one);
    }
    const a = (yield FIND_CODE(ctx.dialect, [codeHash])).rows[0] as GrantRow | undefined;
    if (!a) return { problem: oauthError('invalid_grant', 'Invalid authorization code.') };
    const problem = codeProblem(a, app, body, now, window);
    if (problem) return { problem };
    const scopes = parseList(a.scopes);
    const t = tokenPair(a.authorization_id, now, scopes, familyExpiresAt, a.scopes);
    if (affected(yield CONSUME_CODE(ctx.dialect, [now, familyExpiresAt, ...t.columns, a.authorization_id])) !== 1) {
      // RFC 6749 §4.1.2: a second use is denied and the tokens already issued from the code revoked.
      yield REVOKE_AUTHORIZATION(ctx.dialect, [now, a.authorization_id]);
      return {
        problem: oauthError(
          'invalid_grant',
          'The authorization code has already been used; its tokens have been revoked.',
        ),
      };
    }
    return { a, t, scopes };
  });
  if ('problem' in outcome) throw outcome.problem;
  return answer(ctx, outcome.a, outcome.t, outcome.scopes, now, outcome.a.oidc_nonce);
}

type RefreshRow = GrantRow & { refresh_hash: string | null };
const REUSED_REFRESH = 'The refresh token has already been used; the authorization has been revoked.';

async function refresh(ctx: AppContext, app: SigninAppTable, body: TokenRequest): Promise<TokenResponse> {
  if (!body.refresh_token)
    throw oauthError('invalid_request', 'refresh_token is required for the refresh_token grant.');
  const now = ctx.clock.now();
  const token = parseToken(body.refresh_token);
  if (!token) throw oauthError('invalid_grant', 'Invalid refresh token.');
  const hash = token.verifierHash;
  // no scope: the grant's scopes (an empty one was dropped as omitted, RFC 6749 §3.1, by the route)
  const requested = body.scope === undefined ? null : [...new Set(body.scope.split(/[\s,]+/).filter(Boolean))];
  // The usual rotation (no `scope`) is one statement whose conditions are every check below: it
  // rotates only the current refresh token of this client's live family, and answers the row. No
  // row: nothing was written, and the full path finds out why (reuse, expiry, another client…).
  const fast = requested === null;
  const v = fast ? freshVerifiers() : null;
  const rotateInOne = () =>
    ROTATE_IN_ONE(ctx.dialect, [
      v!.accessHash,
      now + ACCESS_TOKEN_TTL_MS,
      v!.refreshHash,
      now + REFRESH_TOKEN_TTL_MS,
      token.authorizationId,
      hash,
      app.client_id,
      now,
    ]);
  type Rotated = Omit<ExchangedRow, 'oidc_nonce'> & { expires_at: number | null };
  const issued = (a: Rotated) => {
    const scopes = parseList(a.scopes);
    return { a, t: tokenPair(a.authorization_id, now, scopes, a.expires_at, a.scopes, v!), scopes };
  };
  // PostgreSQL: the statement (with the insert of the replaced token) commits alone; SQLite: it
  // runs in the shared group commit, followed by the insert.
  if (fast && ctx.dialect !== 'sqlite') {
    const a = (await execute<Rotated>(ctx, rotateInOne())).rows[0];
    if (a) {
      const r = issued(a);
      return answer(ctx, a, r.t, r.scopes, now, null);
    }
  }
  // Read, check and rotate in one transaction, as for codes: only the caller presenting the current
  // refresh token replaces it (conditional UPDATE), and the replaced one is remembered.
  const outcome = await groupTransaction(ctx, function* (): Program<
    { problem: ApiError } | { a: Omit<ExchangedRow, 'oidc_nonce'>; t: TokenPair; scopes: string[] }
  > {
    if (fast && ctx.dialect === 'sqlite') {
      const one = (yield rotateInOne()).rows[0] as Rotated | undefined;
      if (one) {
        const r = issued(one);
        yield INSERT_ROTATED(ctx.dialect, [one.authorization_id, hash, now]);
        return r;
      }
    }
    const a = (yield FIND_BY_REFRESH(ctx.dialect, [token.authorizationId])).rows[0] as RefreshRow | undefined;
    if (!a) return { problem: oauthError('invalid_grant', 'Invalid refresh token.') };
    if (!hashMatches(hash, a.refresh_hash)) {
      // Not the current refresh token: reuse when it is one this family rotated away (RFC 9700
      // §4.14.2: treated as theft, the family is revoked), else an unknown token.
      if (
        a.client_id === app.client_id &&
        (yield FIND_ROTATED(ctx.dialect, [a.authorization_id, hash])).rows.length > 0
      ) {
        yield REVOKE_AUTHORIZATION(ctx.dialect, [now, a.authorization_id]);
        return { problem: oauthError('invalid_grant', REUSED_REFRESH) };
      }
      return { problem: oauthError('invalid_grant', 'Invalid refresh token.') };
    }
    if (a.client_id !== app.client_id)
      return { problem: oauthError('invalid_grant', 'The refresh token was issued to another client.') };
    if (a.revoked_at !== null)
      return { problem: oauthError('invalid_grant', 'The authorization of this refresh token has been revoked.') };
    const familyExpiresAt = a.expires_at; // null: no absolute end
    if (now >= (a.refresh_expires_at ?? 0) || (familyExpiresAt !== null && now >= familyExpiresAt))
      return { problem: oauthError('invalid_grant', 'The refresh token has expired.') };
    const granted = parseList(a.scopes);
    const extra = requested?.filter((s) => !granted.includes(s)) ?? [];
    if (extra.length)
      return {
        problem: oauthError('invalid_scope', `The refresh token was not granted the scope(s): ${extra.join(', ')}.`),
      };
    const scopes = requested ?? granted;
    const t = tokenPair(a.authorization_id, now, scopes, familyExpiresAt, requested === null ? a.scopes : undefined);
    if (affected(yield ROTATE(ctx.dialect, [...t.columns, a.authorization_id, hash])) !== 1) {
      yield REVOKE_AUTHORIZATION(ctx.dialect, [now, a.authorization_id]);
      return { problem: oauthError('invalid_grant', REUSED_REFRESH) };
    }
    yield INSERT_ROTATED(ctx.dialect, [a.authorization_id, hash, now]);
    return { a, t, scopes };
  });
  if ('problem' in outcome) throw outcome.problem;
  return answer(ctx, outcome.a, outcome.t, outcome.scopes, now, null);
}

/** Whether `verifierHash` is a refresh token of the authorization that was already rotated away. */
async function isRotated(ctx: AppContext, authorizationId: string, verifierHash: string): Promise<boolean> {
  return (await execute(ctx, FIND_ROTATED(ctx.dialect, [authorizationId, verifierHash]))).rows.length > 0;
}

// ---------------------------------------------------------------------------------------------

/**
 * Revokes the whole authorization an access or refresh token (current or rotated) belongs to.
 * Unknown tokens are not an error (RFC 7009 §2.2). When the caller authenticated as a client,
 * another client's token is left alone.
 */
export async function revokeToken(ctx: AppContext, token: string, clientId?: string): Promise<void> {
  const parsed = parseToken(token);
  if (!parsed) return;
  type Owner = { authorization_id: string; client_id: string; access_hash: string | null; refresh_hash: string | null };
  const row = (await execute<Owner>(ctx, FIND_TOKEN_OWNER(ctx.dialect, [parsed.authorizationId]))).rows[0];
  if (!row) return;
  // both compared, so the timing does not tell which of the two matched
  const current =
    Number(hashMatches(parsed.verifierHash, row.access_hash)) |
    Number(hashMatches(parsed.verifierHash, row.refresh_hash));
  if (!current && !(await isRotated(ctx, row.authorization_id, parsed.verifierHash))) return;
  if (clientId !== undefined && row.client_id !== clientId) return;
  await revokeAuthorization(ctx, row.authorization_id, ctx.clock.now());
}

export interface AccessTokenInfo {
  session: Session;
  message: string;
}

interface AccessRow {
  authorization_id: string;
  client_id: string;
  address: string;
  chain: Chain;
  platform_address: string;
  message: string;
  access_scopes: string;
  access_expires_at: number;
  revoked_at: number | null;
  access_hash: string | null;
}

/** The live session of an access token, or null for an unknown, expired, replaced or revoked one. */
export async function lookupAccessToken(ctx: AppContext, token: string): Promise<AccessTokenInfo | null> {
  const parsed = parseToken(token);
  if (!parsed) return null;
  const row = (await execute<AccessRow>(ctx, FIND_ACCESS(ctx.dialect, [parsed.authorizationId]))).rows[0];
  if (!row || !hashMatches(parsed.verifierHash, row.access_hash)) return null;
  if (row.revoked_at !== null || ctx.clock.now() >= row.access_expires_at) return null;
  return {
    session: {
      platformAddress: row.platform_address,
      address: row.address,
      chain: row.chain,
      scopes: parseList(row.access_scopes),
      clientId: row.client_id,
      authorizationId: row.authorization_id,
    },
    message: row.message,
  };
}
