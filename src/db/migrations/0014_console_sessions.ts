// The web console (src/portal): browser sessions set after a wallet proof, API keys owned by a
// user (created in the console) with their last use, the built-in "console" sign-in client whose
// challenges become console sessions, and an index for an app's recent sign-ins and a user's
// signed-in apps, and one for "my claims".
import { randomBytes, createHash } from 'node:crypto';
import type { Kysely } from 'kysely';

export const CONSOLE_CLIENT_ID = 'console';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('console_sessions')
    .addColumn('session_id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('platform_address', 'text', (c) => c.notNull())
    .addColumn('chain', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('console_sessions_expires_at').on('console_sessions').column('expires_at').execute();

  await db.schema.alterTable('api_keys').addColumn('owner', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('last_used_at', 'bigint').execute();
  await db.schema.createIndex('api_keys_owner').on('api_keys').columns(['owner', 'created_at']).execute();

  await db.schema
    .createIndex('signin_authorizations_client_created')
    .on('signin_authorizations')
    .columns(['client_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('claims_created_by')
    .on('claims')
    .columns(['created_by', 'created_at', 'claim_id'])
    .execute();
  await db.schema
    .createIndex('signin_authorizations_user')
    .on('signin_authorizations')
    .columns(['platform_address', 'created_at'])
    .execute();

  // The console signs users in through the ordinary challenge route with this client id. Its
  // secret is random and never shown: its codes cannot be exchanged at the token endpoint; only
  // POST /api/v0/console/session turns its approved challenges into console sessions.
  const now = Date.now();
  await db
    .insertInto('signin_apps')
    .values({
      client_id: CONSOLE_CLIENT_ID,
      client_secret_hash: createHash('sha256').update(randomBytes(32).toString('hex')).digest('hex'),
      name: 'Developer Console',
      description: 'The web console of this service.',
      image: '',
      redirect_uris: '[]',
      grant_types: '["authorization_code"]',
      created_by: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('signin_apps').where('client_id', '=', CONSOLE_CLIENT_ID).execute();
  await db.schema.dropIndex('signin_authorizations_user').execute();
  await db.schema.dropIndex('claims_created_by').execute();
  await db.schema.dropIndex('signin_authorizations_client_created').execute();
  await db.schema.dropIndex('api_keys_owner').execute();
  await db.schema.alterTable('api_keys').dropColumn('last_used_at').execute();
  await db.schema.alterTable('api_keys').dropColumn('owner').execute();
  await db.schema.dropTable('console_sessions').execute();
}
