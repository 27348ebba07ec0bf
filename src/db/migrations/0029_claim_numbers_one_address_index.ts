// claim_numbers had two indexes keyed by the claimer's address: (claim_id, platform_address,
// claim_number) from 0003 and (platform_address, claim_id, claim_number) from 0024 (eligibility).
// Every query that used the first (an address's numbers on one claim: equality on both leading
// columns, ordered by claim_number) is served as well by the second, so the first only cost
// writes: each successful attempt inserted one more entry on a random page of it, which made the
// queue's batches dirty more pages as the ledger grew (bench/backlog.ts, docs/benchmarks.md).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('claim_numbers_address').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('claim_numbers_address')
    .on('claim_numbers')
    .columns(['claim_id', 'platform_address', 'claim_number'])
    .execute();
}
