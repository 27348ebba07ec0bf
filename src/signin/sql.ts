// Hot-path statements of the token endpoint and the session lookup, written once as SQL for both
// dialects. Building and compiling a Kysely query costs more than running these indexed statements
// on SQLite, and every bearer request and token exchange goes through them.
import { CompiledQuery, type QueryResult } from 'kysely';
import type { AppContext } from '../context.ts';
import { preparePostgres, type Statement, statement } from '../db/index.ts';

/**
 * A prepared statement written with numbered `$n` parameters, as PostgreSQL runs it, and its SQLite
 * text written the same way: SQLite gets positional `?`, with the parameters repeated in the order
 * they appear. The two texts may differ (the PostgreSQL one takes its row through a CTE below).
 */
function numbered(pg: string, sqlite: string): Statement {
  preparePostgres(pg);
  const order = [...sqlite.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]) - 1);
  const positional = sqlite.replace(/\$\d+/g, '?');
  return (dialect, params) =>
    dialect === 'postgres'
      ? CompiledQuery.raw(pg, params as unknown[])
      : CompiledQuery.raw(
          positional,
          order.map((i) => params[i]),
        );
}

/** Runs a hot statement: synchronously on SQLite's fast path when Kysely is idle, else through Kysely. */
export function execute<R>(ctx: AppContext, query: CompiledQuery): QueryResult<R> | Promise<QueryResult<R>> {
  return ctx.sqlite?.run<R>(query) ?? ctx.db.executeQuery<R>(query);
}

export const FIND_APP = statement('select * from signin_apps where client_id = ?');

/** The columns the token endpoint checks and answers with (not the signed message, nor the token hashes). */
const GRANT_COLUMNS =
  'authorization_id, client_id, redirect_uri, scopes, code_challenge, address, platform_address, chain, created_at, code_expires_at, expires_at, revoked_at, refresh_expires_at, oidc_nonce';

export const FIND_CODE = statement(`select ${GRANT_COLUMNS} from signin_authorizations where code_hash = ?`);

/**
 * The single-use consumption and the token issue in one conditional UPDATE: of concurrent
 * exchanges of one code, exactly one sees an affected row.
 */
export const CONSUME_CODE = statement(
  `update signin_authorizations
   set code_consumed_at = ?, expires_at = ?, access_hash = ?, access_scopes = ?, access_expires_at = ?, refresh_hash = ?, refresh_expires_at = ?
   where authorization_id = ? and code_consumed_at is null and revoked_at is null`,
);

/**
 * The whole exchange in one statement, for a request whose checks can all be conditions (tokens.ts):
 * the code of this client, unused, not revoked, not expired, issued at or after the window's start,
 * without a PKCE challenge, and without a redirect_uri (EXCHANGE_CODE) or with the request's
 * (EXCHANGE_CODE_REDIRECT). It consumes the code and stores the token pair only if all of them
 * hold, and answers the row. Parameters: code_consumed_at, expires_at, access_hash,
 * access_expires_at, refresh_hash, refresh_expires_at, code_hash, client_id, now, earliest
 * created_at[, redirect_uri].
 */
const exchangeInOne = (redirect: (column: string) => string): Statement => {
  const set = `set code_consumed_at = $1, expires_at = $2, access_hash = $3, access_scopes = scopes, access_expires_at = $4, refresh_hash = $5, refresh_expires_at = $6`;
  const returning =
    'returning authorization_id, client_id, scopes, address, platform_address, chain, created_at, oidc_nonce';
  // PostgreSQL: the row is found by its code hash alone, in a CTE; the checks of its fixed columns
  // (client, expiry, issue time, challenge, redirect) apply to that row, and the UPDATE takes it by
  // its primary key, rechecking the columns concurrent requests change (consumed, revoked). Written
  // with the hash beside client_id and created_at in one WHERE, a generic plan made while the table
  // had no statistics (a new deployment; pooled connections keep it) chose the (client_id,
  // created_at) index and read all of the client's authorizations on every exchange.
  // The statement commits alone, before the caller parses `scopes`: the cast makes a row whose
  // scopes are not JSON fail the statement (nothing written), as a failed parse rolls back the
  // transaction on the full path.
  const pg = `with code as materialized (
       select authorization_id as id, client_id as cid, code_expires_at as expiry, created_at as issued,
         code_challenge as challenge, redirect_uri as redirect
       from signin_authorizations where code_hash = $7)
     update signin_authorizations
     ${set}
     from code
     where authorization_id = code.id and code_consumed_at is null and revoked_at is null
       and code.cid = $8 and code.expiry > $9 and code.issued >= $10 and code.challenge is null and ${redirect('code.redirect')}
     ${returning}, json_typeof(scopes::json) as scopes_type`;
  // SQLite plans each statement when it is prepared, and an equality on the unique code hash always
  // wins there; the materialized CTE and UPDATE … FROM cost it about four times the plain UPDATE
  // (an ephemeral table per run). It runs inside the caller's transaction.
  const sqlite = `update signin_authorizations
     ${set}
     where code_hash = $7 and client_id = $8 and code_expires_at > $9 and created_at >= $10
       and code_challenge is null and ${redirect('redirect_uri')} and code_consumed_at is null and revoked_at is null
     ${returning}`;
  return numbered(pg, sqlite);
};
export const EXCHANGE_CODE = exchangeInOne((column) => `${column} is null`);
export const EXCHANGE_CODE_REDIRECT = exchangeInOne((column) => `${column} = $11`);

// Access and refresh tokens are `<authorization_id>.<verifier>` (see tokens.ts): every token lookup
// reads the row by its primary key, and the caller compares the stored SHA-256 of the verifier in
// constant time. The token hashes carry no index, so issuing and rotating tokens writes no random
// index pages.

/** The row a refresh token's selector names, with its current refresh hash to compare. */
export const FIND_BY_REFRESH = statement(
  `select ${GRANT_COLUMNS}, refresh_hash from signin_authorizations where authorization_id = ?`,
);

/** Rotation: only the caller presenting the current refresh token replaces it. */
export const ROTATE = statement(
  `update signin_authorizations
   set access_hash = ?, access_scopes = ?, access_expires_at = ?, refresh_hash = ?, refresh_expires_at = ?
   where authorization_id = ? and refresh_hash = ? and revoked_at is null`,
);

/**
 * The usual rotation in one statement, for a request without `scope` (tokens.ts): only when the
 * presented refresh token is the current one of this client's family, not revoked and not expired
 * (refresh token, family end), it stores the new pair (access scopes: the grant's; lifetimes from
 * now, capped at the family's end) and answers the row. No row: nothing was written and the full
 * path finds out why. On PostgreSQL a data-modifying CTE remembers the replaced token in the same
 * statement, which then commits alone (one round trip); SQLite runs it and INSERT_ROTATED in the
 * group transaction. Parameters: $1 access_hash, $2 now + access lifetime, $3 refresh_hash, $4 now
 * + refresh lifetime, $5 authorization_id, $6 presented refresh hash, $7 client_id, $8 now.
 */
const rotateSet = `update signin_authorizations
   set access_hash = $1, access_scopes = scopes,
     access_expires_at = case when expires_at < $2 then expires_at else $2 end,
     refresh_hash = $3,
     refresh_expires_at = case when expires_at < $4 then expires_at else $4 end`;
const rotateChecks = `refresh_hash = $6 and revoked_at is null
     and refresh_expires_at > $8 and (expires_at is null or expires_at > $8)`;
const rotateReturning =
  'returning authorization_id, client_id, scopes, address, platform_address, chain, created_at, expires_at';
// PostgreSQL: the family's client is checked on the row the primary key finds (a materialized CTE),
// not as a condition beside the key: the generic plan made before the table had statistics took the
// (client_id, created_at) index for `client_id = $7` and read every authorization of the client.
// As EXCHANGE_CODE, the cast makes a row whose scopes are not JSON fail the statement.
const rotatePg = `with family as materialized (
     select authorization_id as id, client_id as cid from signin_authorizations where authorization_id = $5),
   rotated as (${rotateSet}
     from family where authorization_id = family.id and family.cid = $7 and ${rotateChecks}
     ${rotateReturning}, json_typeof(scopes::json) as scopes_type),
   remembered as (insert into signin_rotated_tokens (authorization_id, token_hash, rotated_at)
     select authorization_id, $6, $8 from rotated)
   select * from rotated`;
// SQLite: the plain UPDATE by primary key (as EXCHANGE_CODE, the CTE costs SQLite several times the statement)
export const ROTATE_IN_ONE = numbered(
  rotatePg,
  `${rotateSet} where authorization_id = $5 and client_id = $7 and ${rotateChecks} ${rotateReturning}`,
);

/** Keyed (authorization_id, token_hash): a family's rotated tokens sit together in the primary key. */
export const INSERT_ROTATED = statement(
  'insert into signin_rotated_tokens (authorization_id, token_hash, rotated_at) values (?, ?, ?)',
);

/** Whether (authorization_id, verifier hash) is a refresh token of that family already rotated away. */
export const FIND_ROTATED = statement(
  'select 1 as rotated from signin_rotated_tokens where authorization_id = ? and token_hash = ?',
);

/** The session an access token's selector names, with its current access hash to compare. */
export const FIND_ACCESS = statement(
  `select authorization_id, client_id, address, chain, platform_address, message, access_scopes, access_expires_at, revoked_at, access_hash
   from signin_authorizations where authorization_id = ?`,
  true,
);

/** Revocation: the row a token's selector names, with both current hashes to compare. */
export const FIND_TOKEN_OWNER = statement(
  'select authorization_id, client_id, access_hash, refresh_hash from signin_authorizations where authorization_id = ?',
);

export const REVOKE_AUTHORIZATION = statement(
  'update signin_authorizations set revoked_at = ? where authorization_id = ? and revoked_at is null',
);
