import { sql, type Kysely } from 'kysely';

// The guess throttle's state per claim (claims/guess-throttle.ts), one row per bucket:
// - `address:<address>`: the wrong answers in a row and when the address may try again;
// - `ip:<IPv4 or IPv6 /64>`: a rolling limit (GCRA: `tat` is the theoretical arrival time);
// - `net:<IPv6 /48>`: only when it last answered wrong (who took part in guessing);
// - `claim`: the claim-wide rolling limit, and in `failures` the total since creation;
// - `minute:<start>`: wrong answers in that minute (`tat` holds its start), for the owner's last hour.
// It replaces the fixed one-minute windows of `claim_guess_failures`; the owner's counts move over.
// `api_keys.trusted_backend` (1 = yes): the key's caller forwards its end users' IPs.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('claim_guess_buckets')
    .addColumn('claim_id', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('tat', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('last_failure_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('claim_guess_buckets_pk', ['claim_id', 'scope'])
    .execute();
  // the sweep deletes rows idle for an hour
  await db.schema.createIndex('claim_guess_buckets_idle').on('claim_guess_buckets').column('last_failure_at').execute();
  await sql`insert into claim_guess_buckets (claim_id, scope, tat, failures, last_failure_at)
    select claim_id, 'claim', 0, failures, 0 from claim_guess_failures where scope = 'total'`.execute(db);
  await sql`insert into claim_guess_buckets (claim_id, scope, tat, failures, last_failure_at)
    select claim_id, 'minute:' || cast(window_start as text), window_start, failures, window_start
    from claim_guess_failures where scope = 'claim' and window_start > 0`.execute(db);
  await db.schema.dropTable('claim_guess_failures').execute();
  await db.schema
    .alterTable('api_keys')
    .addColumn('trusted_backend', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('trusted_backend').execute();
  await db.schema
    .createTable('claim_guess_failures')
    .addColumn('claim_id', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('claim_guess_failures_pk', ['claim_id', 'scope', 'window_start'])
    .execute();
  await db.schema
    .createIndex('claim_guess_failures_window')
    .on('claim_guess_failures')
    .column('window_start')
    .execute();
  await sql`insert into claim_guess_failures (claim_id, scope, window_start, failures)
    select claim_id, 'total', 0, failures from claim_guess_buckets where scope = 'claim'`.execute(db);
  await sql`insert into claim_guess_failures (claim_id, scope, window_start, failures)
    select claim_id, 'claim', tat, failures from claim_guess_buckets where scope like 'minute:%'`.execute(db);
  await db.schema.dropTable('claim_guess_buckets').execute();
}
