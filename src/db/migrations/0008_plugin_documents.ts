// Plugin documents (issue 11): the documents (one row per localised plugin id), their versions
// (append-only; a finalized version's config never changes), and the plugin error records that
// custom plugin calls write and owners read through /api/v0/plugins/errors.
import { sql, PostgresAdapter, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;

  await db.schema
    .createTable('plugin_docs')
    .addColumn('plugin_id', 'text', (c) => c.primaryKey())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('managed_by', 'text', (c) => c.notNull())
    .addColumn('locale', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('name_search', 'text', (c) => c.notNull())
    .addColumn('to_publish', 'integer', (c) => c.notNull())
    .addColumn('review_completed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('approved_users', 'text', (c) => c.notNull())
    .addColumn('plugin_secret_enc', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_updated', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema.createIndex('plugin_docs_owner').on('plugin_docs').columns(['created_by', 'created_at']).execute();
  await db.schema
    .createIndex('plugin_docs_search')
    .on('plugin_docs')
    .columns(['to_publish', 'created_at', 'plugin_id'])
    .execute();

  await db.schema
    .createTable('plugin_versions')
    .addColumn('plugin_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('finalized', 'integer', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_updated', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('plugin_versions_pk', ['plugin_id', 'version'])
    .execute();

  let errors = db.schema.createTable('plugin_errors');
  errors = pg
    ? errors.addColumn('seq', sql`bigserial`, (c) => c.primaryKey())
    : errors.addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement());
  await errors
    .addColumn('plugin_id', 'text', (c) => c.notNull())
    .addColumn('timestamp', 'bigint', (c) => c.notNull())
    .addColumn('error', 'text', (c) => c.notNull())
    .addColumn('claim_id', 'text', (c) => c.notNull())
    .addColumn('claim_attempt_id', 'text', (c) => c.notNull())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('plugin_errors_plugin')
    .on('plugin_errors')
    .columns(['plugin_id', 'timestamp', 'seq'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['plugin_errors', 'plugin_versions', 'plugin_docs']) await db.schema.dropTable(t).execute();
}
