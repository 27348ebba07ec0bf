// Social connections (issue 13): the pending authorization requests of the connections flow
// (state → wallet, one-time, short-lived) and the links of a wallet to provider accounts.
// No provider token is stored: the callback reads the account with it and drops it.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('connection_requests')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('platform_address', 'text', (c) => c.notNull())
    .addColumn('code_verifier_enc', 'text')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('connection_requests_expires').on('connection_requests').column('expires_at').execute();

  await db.schema
    .createTable('social_connections')
    .addColumn('platform_address', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_user_id', 'text', (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('linked_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('social_connections_pk', ['platform_address', 'provider'])
    .execute();
  await db.schema
    .createIndex('social_connections_account')
    .on('social_connections')
    .columns(['provider', 'provider_user_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('social_connections').execute();
  await db.schema.dropTable('connection_requests').execute();
}
