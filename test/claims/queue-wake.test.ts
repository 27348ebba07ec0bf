// The claim queue's wake-up across processes (PostgreSQL): a serve process that runs no worker
// tells the workers of other processes by a NOTIFY, sent inside the transaction of the insert that
// accepts the attempts. So the accept costs one statement and one transaction however many
// attempts it takes, a listener is never woken before the rows are visible, and an insert that
// rolls back wakes nobody. Since PostgreSQL commits notifying transactions one at a time, a
// process has one such insert in flight at a time.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createContext, type AppContext } from '../../src/context.ts';
import { loadConfig } from '../../src/config.ts';
import { ClaimWorker } from '../../src/claims/queue.ts';
import { createTestDatabase, startApp, TEST_DATABASE_URL, TEST_DB, type TestApp } from '../helpers/app.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';
import { attempt, claimWithPlugins, manager, numUses, randomAddress, resolved } from './helpers.ts';

const skip = TEST_DB !== 'postgres' && 'PostgreSQL only: SQLite has no NOTIFY (its workers poll)';

/** Waits, up to PATIENCE_MS, until `check` holds. */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + PATIENCE_MS;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`still not so after ${PATIENCE_MS} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('claim queue wake-up across processes', { skip }, () => {
  let serve: TestApp;
  let workerCtx: AppContext;
  let worker: ClaimWorker;
  let admin: pg.Client;
  let listener: pg.Client;
  let schema: string;
  let channel: string;
  let token: string;
  /** Notifications the test's own listener received on the queue's channel, in order. */
  const heard: string[] = [];

  before(async () => {
    const database = createTestDatabase();
    // the serve process: no worker of its own, so it tells other processes
    serve = await startApp({ database, env: { RUN_WORKER: 'false' } });
    token = (await manager(serve)).accessToken;
    schema = new URL(database.env.DATABASE_URL).searchParams.get('schema')!;
    channel = `platform_claims_${schema}`;
    // the worker process: another context on the same database, whose worker never polls within
    // the test, so only a notification can wake it
    workerCtx = await createContext(loadConfig({ LOG_LEVEL: 'silent', ...database.env, RUN_WORKER: 'false' }), {
      migrate: false,
    });
    worker = new ClaimWorker(workerCtx, { pollMs: 3_600_000 }).start();
    admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    listener = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await listener.connect();
    listener.on('notification', (n) => heard.push(n.payload ?? ''));
    await listener.query(`listen "${channel}"`);
    // the worker's listener is connected once its LISTEN has run (the first pass has run by then too)
    await until('the worker listens', async () => {
      const r = await admin.query(
        `select 1 from pg_stat_activity where datname = current_database() and query = $1 and state = 'idle'`,
        [`listen "${channel}"`],
      );
      return (r.rowCount ?? 0) >= 2;
    });
  });

  after(async () => {
    await worker?.stop();
    await workerCtx?.close();
    await listener?.end();
    await admin?.end();
    await serve?.close();
  });

  /** Sends a marker notification and waits for it: every notification committed before it has arrived. */
  async function heardSoFar(): Promise<string[]> {
    const marker = `marker-${heard.length}-${Math.random()}`;
    await admin.query('select pg_notify($1, $2)', [channel, marker]);
    await until('the marker arrives', async () => heard.includes(marker));
    return heard.splice(0).filter((p) => !p.startsWith('marker-'));
  }

  test('a worker of another process wakes for an attempt accepted here, by the notification alone', async () => {
    const claimId = await claimWithPlugins(serve, token, [numUses(10)]);
    await heardSoFar();
    const res = await attempt(serve, 'complete', claimId, randomAddress());
    assert.equal(res.statusCode, 200, res.body);
    // the worker polls once an hour: it resolves the attempt because it was woken
    assert.equal((await resolved(serve, res.json().claimAttemptId)).success, true);
    assert.equal((await heardSoFar()).length, 1, 'one notification for one accepting insert');
  });

  test('an accept is one statement, with its NOTIFY in the same transaction: no NOTIFY of its own', async () => {
    const claimId = await claimWithPlugins(serve, token, [numUses(100)]);
    await heardSoFar();
    // every statement the serve process sends while it accepts the burst, and how many accepting
    // inserts were in flight at once
    const sent: string[] = [];
    let inFlight = 0;
    let mostInFlight = 0;
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
      if (text) sent.push(text);
      const result = (query as (...a: unknown[]) => unknown).apply(this, args);
      if (text && /insert into claim_attempts/i.test(text)) {
        mostInFlight = Math.max(mostInFlight, ++inFlight);
        const done = () => void inFlight--;
        (result as Promise<unknown>).then(done, done);
      }
      return result;
    } as typeof query;
    let responses;
    try {
      responses = await Promise.all(
        Array.from({ length: 20 }, () => attempt(serve, 'complete', claimId, randomAddress())),
      );
    } finally {
      pg.Client.prototype.query = query;
    }
    for (const r of responses) assert.equal(r.statusCode, 200, r.body);
    const inserts = sent.filter((s) => /insert into claim_attempts/i.test(s));
    const notifies = sent.filter((s) => /notify/i.test(s));
    assert.ok(inserts.length >= 1 && inserts.length <= 20, `${inserts.length} accepting inserts`);
    // every NOTIFY is part of an accepting insert's statement, and every such insert notifies once
    assert.deepEqual(notifies, inserts, 'no NOTIFY sent apart from the accepting insert');
    // PostgreSQL commits notifying transactions one at a time: turns that end while one is in
    // flight go together in the next insert instead of queueing for that lock in inserts of their own
    assert.equal(mostInFlight, 1, 'one notifying insert in flight at a time');
    for (const r of responses) assert.equal((await resolved(serve, r.json().claimAttemptId)).success, true);
    // one notification per accepting transaction (PostgreSQL folds equal ones of one transaction)
    assert.equal((await heardSoFar()).length, inserts.length);
  });

  test('an accepting insert that rolls back sends no wake-up', async () => {
    const claimId = await claimWithPlugins(serve, token, [numUses(10)]);
    await heardSoFar();
    await admin.query(`create function "${schema}".refuse_attempt() returns trigger language plpgsql as
      $$ begin raise exception 'refused by the test'; end $$`);
    await admin.query(`create trigger refuse_attempt before insert on "${schema}".claim_attempts
      for each row execute function "${schema}".refuse_attempt()`);
    try {
      const res = await attempt(serve, 'complete', claimId, randomAddress());
      assert.equal(res.statusCode, 500, res.body);
    } finally {
      await admin.query(`drop trigger refuse_attempt on "${schema}".claim_attempts`);
      await admin.query(`drop function "${schema}".refuse_attempt()`);
    }
    assert.deepEqual(await heardSoFar(), [], 'nothing was accepted, so nobody was woken');
    // the next accept wakes the worker as before
    const res = await attempt(serve, 'complete', claimId, randomAddress());
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await resolved(serve, res.json().claimAttemptId)).success, true);
    assert.equal((await heardSoFar()).length, 1);
  });
});
