// Sign-in: developer apps (OAuth clients), pending sign-in requests (challenges), authorizations
// (one per authorization code, holding the live tokens issued from it) and rotated refresh tokens.
// Every secret, code and token is stored only as its SHA-256 hex.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('signin_apps')
    .addColumn('client_id', 'text', (c) => c.primaryKey())
    .addColumn('client_secret_hash', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('image', 'text', (c) => c.notNull())
    .addColumn('redirect_uris', 'text', (c) => c.notNull()) // JSON array of strings
    .addColumn('grant_types', 'text', (c) => c.notNull()) // JSON array of strings
    .addColumn('created_by', 'text') // platformAddress; null when created by the operator CLI
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('signin_apps_created_by')
    .on('signin_apps')
    .columns(['created_by', 'created_at', 'client_id'])
    .execute();

  await db.schema
    .createTable('signin_requests')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text')
    .addColumn('scopes', 'text', (c) => c.notNull()) // JSON array of scope ids
    .addColumn('state', 'text')
    .addColumn('code_challenge', 'text')
    .addColumn('code_challenge_method', 'text')
    .addColumn('address', 'text', (c) => c.notNull()) // as it appears in the message
    .addColumn('platform_address', 'text', (c) => c.notNull())
    .addColumn('chain', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('issued_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema.createIndex('signin_requests_expires_at').on('signin_requests').column('expires_at').execute();

  // One row per authorization code and the token family issued from it. The live access and refresh
  // tokens are columns of the row, so a code exchange is one conditional UPDATE and a bearer lookup
  // one indexed read; refresh rotation replaces them and records the old refresh token below.
  await db.schema
    .createTable('signin_authorizations')
    .addColumn('authorization_id', 'text', (c) => c.primaryKey())
    .addColumn('code_hash', 'text', (c) => c.notNull().unique())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text')
    .addColumn('scopes', 'text', (c) => c.notNull()) // granted scope ids (JSON)
    .addColumn('code_challenge', 'text')
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('platform_address', 'text', (c) => c.notNull())
    .addColumn('chain', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull()) // code issued
    .addColumn('code_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('code_consumed_at', 'bigint')
    .addColumn('expires_at', 'bigint') // absolute cap of the family, set at the first grant
    .addColumn('revoked_at', 'bigint')
    .addColumn('access_hash', 'text', (c) => c.unique())
    .addColumn('access_scopes', 'text') // may be narrower than `scopes` after a refresh
    .addColumn('access_expires_at', 'bigint')
    .addColumn('refresh_hash', 'text', (c) => c.unique())
    .addColumn('refresh_expires_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('signin_authorizations_code_expires_at')
    .on('signin_authorizations')
    .column('code_expires_at')
    .execute();
  await db.schema
    .createIndex('signin_authorizations_client_id')
    .on('signin_authorizations')
    .column('client_id')
    .execute();

  // Refresh tokens already rotated away: presenting one again is reuse, and revokes the family.
  await db.schema
    .createTable('signin_rotated_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('authorization_id', 'text', (c) => c.notNull())
    .addColumn('rotated_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['signin_rotated_tokens', 'signin_authorizations', 'signin_requests', 'signin_apps'])
    await db.schema.dropTable(t).execute();
}
