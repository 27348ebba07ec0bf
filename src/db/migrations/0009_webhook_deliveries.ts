// Status webhook outbox (issue 11): one row per delivery, written in the transaction that
// resolves the claim attempt, sent by the `webhook-deliveries` background loop. A row is taken
// by a lease (lease_owner + lease_until), so processes sharing the database never send one
// delivery at the same time, and a process killed mid-send leaves a lease that expires.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('delivery_id', 'text', (c) => c.primaryKey())
    .addColumn('plugin_id', 'text', (c) => c.notNull())
    .addColumn('claim_id', 'text', (c) => c.notNull())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('claim_attempt_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    // the JSON payload, encrypted (it carries private params); its pluginSecret is filled in at send time
    .addColumn('body_enc', 'text', (c) => c.notNull())
    // headerField values of the payload (they may be private params), encrypted; null when none
    .addColumn('headers_enc', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('retries', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_try_at', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('last_status', 'integer')
    .addColumn('last_try_at', 'bigint')
    .addColumn('delivered_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['status', 'next_try_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_plugin')
    .on('webhook_deliveries')
    .columns(['plugin_id', 'created_at', 'delivery_id'])
    .execute();
  // one delivery per resolved attempt and instance, however often a resolution is replayed
  await db.schema
    .createIndex('webhook_deliveries_attempt')
    .unique()
    .on('webhook_deliveries')
    .columns(['claim_attempt_id', 'instance_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute();
}
