// SQLite's worker takes the oldest queued attempts of all lanes at once (`status = 'queued'
// order by seq`). Over (status, lane, seq) that read sorted every queued row to return 100, so a
// pass got slower as the backlog grew. Over (status, seq) it reads the 100 it returns.
// PostgreSQL reads one lane at a time, which (status, lane, seq) serves in order: unchanged.
import { PostgresAdapter, type Kysely } from 'kysely';

const isPostgres = (db: Kysely<any>) => db.getExecutor().adapter instanceof PostgresAdapter;

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) return;
  await db.schema.dropIndex('claim_attempts_queue').execute();
  await db.schema.createIndex('claim_attempts_queue').on('claim_attempts').columns(['status', 'seq']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) return;
  await db.schema.dropIndex('claim_attempts_queue').execute();
  await db.schema.createIndex('claim_attempts_queue').on('claim_attempts').columns(['status', 'lane', 'seq']).execute();
}
