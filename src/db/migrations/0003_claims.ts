// Claims: claim documents, plugin state, the ledger of used claim numbers, and attempts (the
// durable queue: a queued attempt row IS the queue entry).
import { PostgresAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;

  await db.schema
    .createTable('claims')
    .addColumn('claim_id', 'text', (c) => c.primaryKey())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('managed_by', 'text', (c) => c.notNull())
    .addColumn('collection_id', 'text', (c) => c.notNull())
    .addColumn('standalone_claim', 'integer', (c) => c.notNull())
    .addColumn('tracker_details', 'text')
    .addColumn('tracker_key', 'text')
    .addColumn('plugins', 'text', (c) => c.notNull())
    .addColumn('private_params', 'text', (c) => c.notNull())
    .addColumn('seed_code', 'text')
    .addColumn('use_creator_address_as_leaf', 'integer', (c) => c.notNull())
    .addColumn('assign_method', 'text', (c) => c.notNull())
    .addColumn('satisfy_method', 'text')
    .addColumn('details', 'text', (c) => c.notNull())
    .addColumn('name_search', 'text', (c) => c.notNull())
    .addColumn('show_in_search', 'integer', (c) => c.notNull())
    .addColumn('lane', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_updated', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at', 'bigint')
    .addColumn('test_expires_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('claims_search')
    .on('claims')
    .columns(['show_in_search', 'created_at', 'claim_id'])
    .execute();
  await db.schema.createIndex('claims_tracker').on('claims').column('tracker_key').execute();

  await db.schema
    .createTable('claim_state')
    .addColumn('claim_id', 'text', (c) => c.notNull())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('claim_state_pk', ['claim_id', 'instance_id', 'key'])
    .execute();

  // The primary key is the last guard against handing a claim number out twice.
  await db.schema
    .createTable('claim_numbers')
    .addColumn('claim_id', 'text', (c) => c.notNull())
    .addColumn('claim_number', 'integer', (c) => c.notNull())
    .addColumn('platform_address', 'text', (c) => c.notNull())
    .addColumn('claim_attempt_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('claim_numbers_pk', ['claim_id', 'claim_number'])
    .execute();
  await db.schema
    .createIndex('claim_numbers_address')
    .on('claim_numbers')
    .columns(['claim_id', 'platform_address', 'claim_number'])
    .execute();

  // seq: arrival order (the order attempts became durable) within a lane.
  let attempts = db.schema.createTable('claim_attempts');
  attempts = pg
    ? attempts.addColumn('seq', sql`bigserial`, (c) => c.primaryKey())
    : attempts.addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement());
  await attempts
    .addColumn('claim_attempt_id', 'text', (c) => c.notNull().unique())
    .addColumn('claim_id', 'text', (c) => c.notNull())
    .addColumn('lane', 'text', (c) => c.notNull())
    .addColumn('platform_address', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('success', 'integer')
    .addColumn('error', 'text', (c) => c.notNull())
    .addColumn('claim_number', 'integer', (c) => c.notNull())
    .addColumn('payload', 'text')
    .addColumn('attempted_at', 'bigint', (c) => c.notNull())
    .addColumn('resolved_at', 'bigint')
    .execute();
  await db.schema.createIndex('claim_attempts_queue').on('claim_attempts').columns(['status', 'lane', 'seq']).execute();
  await db.schema
    .createIndex('claim_attempts_claim')
    .on('claim_attempts')
    .columns(['claim_id', 'attempted_at', 'seq'])
    .execute();
  await db.schema
    .createIndex('claim_attempts_address')
    .on('claim_attempts')
    .columns(['claim_id', 'platform_address', 'attempted_at', 'seq'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['claim_attempts', 'claim_numbers', 'claim_state', 'claims']) await db.schema.dropTable(t).execute();
}
