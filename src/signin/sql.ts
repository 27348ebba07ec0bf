// Hot-path statements of the token endpoint and the session lookup, written once as SQL for both
// dialects. Building and compiling a Kysely query costs more than running these indexed statements
// on SQLite, and every bearer request and token exchange goes through them.
import { CompiledQuery } from 'kysely';
import type { DialectName } from '../db/index.ts';

export type Statement = (dialect: DialectName, params: readonly unknown[]) => CompiledQuery;

/** `?` placeholders for SQLite; numbered `$n` for PostgreSQL (computed once). */
export function statement(text: string): Statement {
  let n = 0;
  const pg = text.replace(/\?/g, () => `$${++n}`);
  return (dialect, params) => CompiledQuery.raw(dialect === 'postgres' ? pg : text, params as unknown[]);
}

export const FIND_APP = statement('select * from signin_apps where client_id = ?');

/** The columns the token endpoint checks and answers with (not the signed message, nor the token hashes). */
const GRANT_COLUMNS =
  'authorization_id, client_id, redirect_uri, scopes, code_challenge, address, platform_address, chain, created_at, code_expires_at, expires_at, revoked_at, refresh_expires_at';

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

export const FIND_BY_REFRESH = statement(`select ${GRANT_COLUMNS} from signin_authorizations where refresh_hash = ?`);

/** Rotation: only the caller presenting the current refresh token replaces it. */
export const ROTATE = statement(
  `update signin_authorizations
   set access_hash = ?, access_scopes = ?, access_expires_at = ?, refresh_hash = ?, refresh_expires_at = ?
   where authorization_id = ? and refresh_hash = ? and revoked_at is null`,
);

export const INSERT_ROTATED = statement('insert into signin_rotated_tokens (token_hash, authorization_id, rotated_at) values (?, ?, ?)');

export const FIND_ROTATED = statement(
  `select a.authorization_id, a.client_id from signin_rotated_tokens r
   inner join signin_authorizations a on a.authorization_id = r.authorization_id where r.token_hash = ?`,
);

export const FIND_ACCESS = statement(
  `select authorization_id, client_id, address, chain, platform_address, message, access_scopes, access_expires_at, revoked_at
   from signin_authorizations where access_hash = ?`,
);

export const FIND_TOKEN_OWNER = statement('select authorization_id, client_id from signin_authorizations where access_hash = ? or refresh_hash = ?');

export const REVOKE_AUTHORIZATION = statement('update signin_authorizations set revoked_at = ? where authorization_id = ? and revoked_at is null');
