// The queue's index holds the queued attempts only: `(lane, seq) where status = 'queued'` on
// PostgreSQL (the head of one lane, and the lane list by a skip scan over its lanes), `(seq) where
// status = 'queued'` on SQLite (its one writer takes the oldest of all lanes). It replaces
// `claim_attempts_queue`, which also kept an entry for every resolved attempt.
//
// Why: with a backlog and statistics taken during it (as autovacuum does), PostgreSQL planned the
// head of a lane as a walk of the primary key that filtered out every resolved row first, and the
// lane list as a read of every queued row. A partial index serves a query only when the query's
// condition is literally the index's, so the statements that read the queue (src/claims/hot-sql.ts)
// write `status = 'queued'` as a constant, never as a parameter (a prepared statement's generic
// plan cannot match a parameter to a partial index).
import { PostgresAdapter, sql, type Kysely } from 'kysely';

const isPostgres = (db: Kysely<any>) => db.getExecutor().adapter instanceof PostgresAdapter;

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('claim_attempts_queued')
    .on('claim_attempts')
    .columns(isPostgres(db) ? ['lane', 'seq'] : ['seq'])
    .where(sql.ref('status'), '=', 'queued')
    .execute();
  await db.schema.dropIndex('claim_attempts_queue').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('claim_attempts_queue')
    .on('claim_attempts')
    .columns(isPostgres(db) ? ['status', 'lane', 'seq'] : ['status', 'seq'])
    .execute();
  await db.schema.dropIndex('claim_attempts_queued').execute();
}
