import type { Kysely } from 'kysely';

// Failed password/code guesses per claim, counted in one-minute windows per bucket (the whole claim,
// one client IP, one claiming address) so that every process sharing the database sees one budget;
// plus a running total per claim (window_start 0) that the claim's owner reads.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('claim_guess_failures')
    .addColumn('claim_id', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('claim_guess_failures_pk', ['claim_id', 'scope', 'window_start'])
    .execute();
  // the sweep deletes ended windows by age
  await db.schema
    .createIndex('claim_guess_failures_window')
    .on('claim_guess_failures')
    .column('window_start')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('claim_guess_failures').execute();
}
