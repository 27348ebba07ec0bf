// The guess throttle's attempts in flight per claiming address (claims/guess-throttle.ts): an
// address's row counts real wrong answers in `failures`, and its evaluations still running in
// `in_flight` (valid until `in_flight_until`, so that one a crashed process left behind expires).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('claim_guess_buckets')
    .addColumn('in_flight', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('claim_guess_buckets')
    .addColumn('in_flight_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('claim_guess_buckets').dropColumn('in_flight_until').execute();
  await db.schema.alterTable('claim_guess_buckets').dropColumn('in_flight').execute();
}
