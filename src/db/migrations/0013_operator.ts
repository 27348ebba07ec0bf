// Rate limits shared by every process on one database: one row per (bucket, one-minute window)
// holding how much of the window's budget the processes have taken (src/api-keys/rate-limit.ts).
// A bucket is `key:<api key id>` or `ip:<address or IPv6 /64>`. Rows of past windows are deleted
// by the processes as windows turn over.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rate_limit_windows')
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull()) // UNIX ms
    .addColumn('taken', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_limit_windows_pk', ['bucket', 'window_start'])
    .execute();
  await db.schema
    .createIndex('rate_limit_windows_window_start')
    .on('rate_limit_windows')
    .column('window_start')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rate_limit_windows').execute();
}
