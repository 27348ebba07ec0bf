// One value sealed with the service's key (SECRET_KEY), so that a process started with another
// key refuses to start instead of answering 500 wherever it meets data the first key sealed
// (src/ops/secret-key-check.ts).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('secret_key_check')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('sealed', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('secret_key_check').execute();
}
