// What the console shows of the people who claim:
// - `claim_attempts.claimer_address`: the address as the claimer sent it (the checksummed 0x form,
//   or the native form), beside the canonical `platform_address`; '' for attempts made before.
// - `claim_refusals`: the recent refused completes of each claim (src/claims/refusals.ts), a
//   bounded log (the newest REFUSALS_PER_CLAIM per claim) that the claim's owner reads.
import { PostgresAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .alterTable('claim_attempts')
    .addColumn('claimer_address', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  let refusals = db.schema.createTable('claim_refusals');
  refusals = pg
    ? refusals.addColumn('seq', sql`bigserial`, (c) => c.primaryKey())
    : refusals.addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement());
  await refusals
    .addColumn('claim_id', 'text', (c) => c.notNull())
    .addColumn('refused_at', 'bigint', (c) => c.notNull())
    .addColumn('platform_address', 'text', (c) => c.notNull())
    .addColumn('claimer_address', 'text', (c) => c.notNull())
    .addColumn('instance_id', 'text', (c) => c.notNull())
    .addColumn('plugin_id', 'text', (c) => c.notNull())
    .addColumn('error', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('claim_refusals_claim').on('claim_refusals').columns(['claim_id', 'seq']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('claim_refusals').execute();
  await db.schema.alterTable('claim_attempts').dropColumn('claimer_address').execute();
}
