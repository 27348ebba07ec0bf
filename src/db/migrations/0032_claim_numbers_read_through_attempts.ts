// The claim ledger (claim_numbers) loses its address index `claim_numbers_by_address`
// (platform_address, claim_id, claim_number) from 0024. Each successfully resolved attempt inserted
// one entry into it at a place set by a random address, inside the queue worker's batch
// transaction, so a batch dirtied more pages as the ledger grew and a backlog drained slower than a
// small queue (bench/backlog.ts, docs/benchmarks.md "Issue 33: the ledger's address index").
//
// An address's claim numbers are now read through its attempts, whose address indexes are written
// when an attempt is accepted (outside the worker's batch) and were there already:
// `claim_attempts_address` (claim_id, platform_address, attempted_at, seq) from 0003 for one claim,
// `claim_attempts_account` (platform_address, attempted_at, seq) from 0011 for every claim. Each
// attempt found looks its number up by the ledger's primary key (claim_id, claim_number) and counts
// only if that ledger row still carries the attempt's id (claims/hot-sql.ts, ADDRESS_NUMBERS).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('claim_numbers_by_address').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('claim_numbers_by_address')
    .on('claim_numbers')
    .columns(['platform_address', 'claim_id', 'claim_number'])
    .execute();
}
