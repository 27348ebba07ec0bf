// Dynamic stores (issue 5): the store documents, their members (one row per store and
// address, so a membership check is a primary-key probe), and the per-store activity history.
import { sql, SqliteAdapter, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // SQLite: the members table is nothing but its key, so store it as a clustered index
  // (WITHOUT ROWID) instead of a rowid table plus a second index of the same data.
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;

  await db.schema
    .createTable('dynamic_stores')
    .addColumn('dynamic_data_id', 'text', (c) => c.primaryKey())
    .addColumn('handler_id', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('data_secret_enc', 'text', (c) => c.notNull())
    .addColumn('data_secret_hash', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('managed_by', 'text', (c) => c.notNull())
    .addColumn('public_use_in_claims', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('activity_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_updated', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('dynamic_stores_created_by')
    .on('dynamic_stores')
    .columns(['created_by', 'created_at'])
    .execute();
  await db.schema
    .createIndex('dynamic_stores_managed_by')
    .on('dynamic_stores')
    .columns(['managed_by', 'created_at'])
    .execute();

  await db.schema
    .createTable('dynamic_store_members')
    .addColumn('dynamic_data_id', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('dynamic_store_members_pk', ['dynamic_data_id', 'address'])
    .$call((b) => (sqlite ? b.modifyEnd(sql`without rowid`) : b))
    .execute();

  await db.schema
    .createTable('dynamic_store_activity')
    .addColumn('dynamic_data_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('actions', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('dynamic_store_activity_pk', ['dynamic_data_id', 'seq'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('dynamic_store_activity').execute();
  await db.schema.dropTable('dynamic_store_members').execute();
  await db.schema.dropTable('dynamic_stores').execute();
}
