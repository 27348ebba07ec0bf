// The statements every claim attempt runs, from complete to resolved, written once as SQL for both
// dialects: a claim state value read (the pre-check and the worker), the claim's version check, the
// head of the queue and the status read. Building and compiling a Kysely query costs about as much
// as running one of these indexed statements on SQLite. Through the deployment's own handle they
// run synchronously on SQLite's fast path when Kysely does not hold the connection; inside a
// transaction (or on PostgreSQL) they go through Kysely, compiled already.
import { PostgresAdapter } from 'kysely';
import type { AppContext } from '../context.ts';
import { type DB, type DialectName, type Statement, type Tx, statement } from '../db/index.ts';

export const READ_STATE = statement('select value from claim_state where claim_id = ? and instance_id = ? and key = ?');
export const CLAIM_HEAD = statement(
  'select version, last_updated, deleted_at, test_expires_at from claims where claim_id = ?',
);
export const CLAIM_HEAD_FOR_UPDATE = statement(
  'select version, last_updated, deleted_at, test_expires_at from claims where claim_id = ? for update',
);
/**
 * The claim ledger's numbers of one address, read through its attempts: the ledger keeps no
 * address index (migration 0032), because each resolved attempt would insert into it at a random
 * place inside the queue's batch transaction; the attempts' address indexes are written when an
 * attempt is accepted. Each attempt of the address looks its number up by the ledger's primary key
 * (claim_id, claim_number), and counts only while that ledger row carries this attempt: the ledger
 * is the truth, since clearing it (documents.ts, `clearLedger`) leaves the attempts, and a cleared
 * number may be handed to another attempt later. A failed or queued attempt's number is -1, which
 * the ledger never holds. On one claim `claim_attempts_address` (claim_id, platform_address,
 * attempted_at, seq) finds the attempts; on every claim `claim_attempts_account` (platform_address,
 * attempted_at, seq). A CROSS JOIN because SQLite then keeps the attempts as the outer loop: without
 * statistics (the service never runs ANALYZE) it planned an inner join as a read of the claim's
 * whole ledger, looking each row's attempt up by its id. PostgreSQL plans a CROSS JOIN with
 * conditions as an inner join. Plans on both databases: test/claims/ledger-plan.test.ts.
 */
const LEDGER_OF_ADDRESS = `from claim_attempts a cross join claim_numbers n
  where a.platform_address = ? and n.claim_id = a.claim_id and n.claim_number = a.claim_number
    and n.claim_attempt_id = a.claim_attempt_id and n.platform_address = a.platform_address`;
/** Params: platform address, claim id. */
export const ADDRESS_NUMBERS_ON_CLAIM = statement(
  `select n.claim_number ${LEDGER_OF_ADDRESS} and a.claim_id = ? order by n.claim_number`,
);
/** Params: platform address. */
export const ADDRESS_NUMBERS = statement(
  `select n.claim_id, n.claim_number ${LEDGER_OF_ADDRESS} order by n.claim_id, n.claim_number`,
);
export const ATTEMPT_STATUS = statement(
  'select claim_id, platform_address, status, error, claim_number from claim_attempts where claim_attempt_id = ?',
);

// The queue's reads name `status = 'queued'` as a constant: that is the condition of the partial
// index claim_attempts_queued (migration 0031), and a prepared statement's generic plan cannot
// match a parameter to it. Read through that index they never meet a resolved attempt, whatever
// the table's statistics say.
const QUEUED =
  "select seq, claim_attempt_id, claim_id, platform_address, payload from claim_attempts where status = 'queued'";
/**
 * SQLite: the oldest queued attempts of every lane (its one writer takes them all in order). Its
 * planner, once ANALYZE has run, prefers a walk of the table in rowid (seq) order that filters, which
 * reads every resolved attempt before the first queued one; `indexed by` holds it to the index.
 */
export const QUEUE_HEAD = statement(
  `${QUEUED.replace('from claim_attempts', 'from claim_attempts indexed by claim_attempts_queued')} order by seq limit ?`,
);
export const QUEUE_HEAD_FOR_UPDATE = statement(`${QUEUED} order by seq limit ? for update`);
/**
 * PostgreSQL: the oldest queued attempts of one lane, locked. Written as `lane >= ? and lane <= ?
 * order by lane, seq` (the same rows as `lane = ? order by seq`) so that only the partial index
 * yields the order: with `lane = ?` the planner drops `lane` from the order, and since it assumes
 * queued rows are spread evenly over the table, a walk of the primary key that filters looks as
 * cheap, while in a backlog it reads every resolved attempt before the first queued one. Now the
 * primary key would have to read and sort the whole table. Parameters: lane, lane, limit.
 */
export const LANE_HEAD_FOR_UPDATE = statement(
  `${QUEUED} and lane >= ? and lane <= ? order by lane, seq limit ? for update`,
);
/**
 * PostgreSQL: the lanes with queued attempts, those whose oldest is oldest first. A skip scan over
 * the partial index: one probe per lane for the next lane, one for its oldest attempt, instead of
 * a read of every queued attempt (`group by lane`). A lane's oldest is found as in
 * LANE_HEAD_FOR_UPDATE, for the same reason.
 */
export const LANE_LIST = statement(`with recursive lanes(lane) as (
  (select lane from claim_attempts where status = 'queued' order by lane limit 1)
  union all
  select (select a.lane from claim_attempts a where a.status = 'queued' and a.lane > l.lane order by a.lane limit 1)
  from lanes l where l.lane is not null
)
select lane, (select a.seq from claim_attempts a
  where a.status = 'queued' and a.lane >= lanes.lane and a.lane <= lanes.lane order by a.lane, a.seq limit 1) as first
from lanes where lane is not null order by first limit ?`);

/**
 * A multi-row insert of `columns` into `table`, its text built once per dialect and row count (the
 * accepted attempts of one turn; the claim numbers of one batch). With `notify` (PostgreSQL only),
 * the same statement also sends a NOTIFY on the channel given as its last parameter: one statement,
 * one transaction, and the notification is delivered when the rows commit, or never.
 */
export function insertRows(
  table: string,
  columns: readonly string[],
  opts: { notify?: boolean } = {},
): (rows: number) => Statement {
  const texts = new Map<number, Statement>();
  const row = `(${columns.map(() => '?').join(', ')})`;
  return (rows) => {
    let stmt = texts.get(rows);
    if (!stmt) {
      const insert = `insert into ${table} (${columns.join(', ')}) values ${Array(rows).fill(row).join(', ')}`;
      // a data-modifying WITH runs to completion whether or not the query reads it
      stmt = statement(opts.notify ? `with inserted as (${insert}) select pg_notify(?, '')` : insert);
      if (texts.size < 1000) texts.set(rows, stmt);
    }
    return stmt;
  };
}

const dialectOf = (db: DB | Tx): DialectName =>
  db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';

/**
 * Runs a hot statement through `db`: synchronously on SQLite's fast path when `db` is the
 * deployment's own handle and Kysely is idle, else through Kysely (a transaction's statements
 * always go through it, so they stay inside that transaction).
 */
export function runHot<R = never>(
  db: DB | Tx,
  stmt: Statement,
  params: readonly unknown[],
  app?: Partial<Pick<AppContext, 'db' | 'sqlite'>>,
): R[] | Promise<R[]> {
  if (app?.sqlite && db === app.db) {
    const fast = app.sqlite.run<R>(stmt('sqlite', params));
    if (fast) return fast.rows;
  }
  return db.executeQuery<R>(stmt(dialectOf(db), params)).then((r) => r.rows as R[]);
}
