// Connection requests bound to the browser that proves the wallet (issue 29). A request is now
// created by `start` with a public id, proven at the service's own page (a console session of the
// wallet, or the wallet's signature of the text built from `nonce`, `issued_at` and `expires_at`),
// and only then gets its `state` and the hash of the browser's binding cookie. Pending requests
// live ten minutes, so the old table is dropped rather than converted: a flow in progress during
// the upgrade ends with "unknown, used or expired. Start again."
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('connection_requests').execute();
  await db.schema
    .createTable('connection_requests')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('platform_address', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('chain', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('issued_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('proven_at', 'bigint')
    .addColumn('state_hash', 'text')
    .addColumn('binding_hash', 'text')
    .addColumn('code_verifier_enc', 'text')
    .execute();
  await db.schema.createIndex('connection_requests_expires').on('connection_requests').column('expires_at').execute();
  await db.schema
    .createIndex('connection_requests_state')
    .on('connection_requests')
    .column('state_hash')
    .unique()
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('connection_requests').execute();
  await db.schema
    .createTable('connection_requests')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('platform_address', 'text', (c) => c.notNull())
    .addColumn('code_verifier_enc', 'text')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('connection_requests_expires').on('connection_requests').column('expires_at').execute();
}
