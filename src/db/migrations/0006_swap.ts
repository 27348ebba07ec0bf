import type { Kysely } from 'kysely';

// Pools imported with `platform import-pools FILE`: one row per pool (its chain JSON as text), and
// one state row whose revision every running service polls to pick up a new import.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('swap_pools')
    .addColumn('pool_id', 'text', (c) => c.primaryKey())
    .addColumn('pool_json', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('swap_import_state')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('revision', 'bigint', (c) => c.notNull())
    .addColumn('taker_fees_json', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('swap_import_state').execute();
  await db.schema.dropTable('swap_pools').execute();
}
