// Accounts benchmark: latency of account view pages through POST /api/v0/users (in-process
// inject: schema, session, view query, serialisation) on an account with many claim attempts and
// sign-ins, among many other accounts' rows. Baseline measured in the same run: the bare keyset
// query of one page on the same index (the database floor), so the ratio is what the route adds.
//   node bench/accounts.ts           20,000 attempts of the user, 40,000 of others, 3,000 sign-ins
//   node bench/accounts.ts --full    1,000,000 / 2,000,000 / 100,000
// BENCH_DB=sqlite|postgres picks one database (default: both when PostgreSQL is reachable).
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Tx } from '../src/db/index.ts';
import { startApp, type TestApp } from '../test/helpers/app.ts';
import { authorizationRow, signIn } from '../test/helpers/signin.ts';
import { toPlatformAddress } from '../src/shared/addresses.ts';
import { benchDatabases, fmt, percentile } from './lib/harness.ts';

const FULL = process.argv.includes('--full');
const MINE = FULL ? 1_000_000 : 20_000;
const OTHERS = FULL ? 2_000_000 : 40_000;
const SIGNINS = FULL ? 100_000 : 3_000;
const CLAIMS = 1_000;
const SAMPLES = 200;

const ms = (v: number) => `${v < 0.1 ? v.toFixed(3) : v.toFixed(2)} ms`;

async function timeEach(n: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

async function insertChunks<T>(
  rows: Iterable<T>,
  size: number,
  write: (chunk: T[]) => Promise<unknown>,
): Promise<void> {
  let chunk: T[] = [];
  for (const r of rows) {
    chunk.push(r);
    if (chunk.length === size) {
      await write(chunk);
      chunk = [];
    }
  }
  if (chunk.length) await write(chunk);
}

/** Rows written straight into the tables (one transaction), then ANALYZE so plans see the data. */
async function seed(t: TestApp, me: string): Promise<void> {
  await t.ctx.db.transaction().execute((tx) => seedRows(tx, me));
  await sql`analyze`.execute(t.ctx.db);
}

async function seedRows(db: Tx, me: string): Promise<void> {
  const now = Date.now();
  await insertChunks(
    (function* () {
      for (let c = 0; c < CLAIMS; c++) {
        yield {
          claim_id: `bench${c}`,
          created_by: me,
          managed_by: me,
          collection_id: '',
          standalone_claim: 0,
          tracker_details: null,
          tracker_key: null,
          plugins: '[]',
          private_params: '',
          seed_code: null,
          use_creator_address_as_leaf: 0,
          assign_method: '',
          satisfy_method: null,
          details: '{}',
          name_search: '',
          show_in_search: c % 2,
          lane: `k:bench${c}`,
          version: 0,
          created_at: now,
          last_updated: now,
          deleted_at: null,
          test_expires_at: null,
        };
      }
    })(),
    200,
    (chunk) => db.insertInto('claims').values(chunk).execute(),
  );
  const others = Array.from({ length: 1000 }, () => toPlatformAddress(randomBytes(20)));
  let n = 0;
  await insertChunks(
    (function* () {
      for (let i = 0; i < MINE + OTHERS; i++) {
        const mine = i % 3 === 0 && n < MINE;
        if (mine) n++;
        yield {
          claim_attempt_id: randomBytes(16).toString('hex'),
          claim_id: `bench${i % CLAIMS}`,
          lane: `k:bench${i % CLAIMS}`,
          platform_address: mine ? me : others[i % others.length],
          status: i % 7 === 0 ? 'failure' : 'success',
          success: i % 7 === 0 ? 0 : 1,
          error: i % 7 === 0 ? 'Overall max uses exceeded' : '',
          claim_number: i,
          payload: null,
          attempted_at: now - (MINE + OTHERS - i) * 10,
          resolved_at: now,
        } as const;
      }
    })(),
    1000,
    (chunk) => db.insertInto('claim_attempts').values(chunk).execute(),
  );
  await insertChunks(
    (function* () {
      for (let i = 0; i < SIGNINS; i++) {
        yield authorizationRow({
          authorization_id: randomBytes(16).toString('hex'),
          code_hash: randomBytes(32).toString('hex'),
          client_id: 'bench',
          scopes: '["completeClaims"]',
          address: me,
          platform_address: me,
          chain: 'Cosmos',
          message: 'bench',
          created_at: now - i * 1000,
          code_expires_at: now,
          code_consumed_at: now,
          expires_at: now + 86_400_000,
        });
      }
    })(),
    500,
    (chunk) => db.insertInto('signin_authorizations').values(chunk).execute(),
  );
}

async function run(name: string, make: () => import('../test/helpers/app.ts').TestDatabase): Promise<void> {
  const t = await startApp({ database: make(), env: { RUN_WORKER: 'false' } });
  try {
    const user = await signIn(t, { scopes: ['manageAccount'] });
    const me = user.platformAddress;
    const t0 = performance.now();
    await seed(t, me);
    console.log(
      `\n[${name}] seeded ${fmt(MINE)} attempts of the account, ${fmt(OTHERS)} of 1,000 others, ${fmt(SIGNINS)} sign-ins in ${fmt((performance.now() - t0) / 1000, 1)} s`,
    );

    // the database floor: one keyset page (26 rows) of the account's attempts on the same index
    const floor = await timeEach(SAMPLES, async () =>
      t.ctx.db
        .selectFrom('claim_attempts')
        .select(['claim_attempt_id', 'claim_id', 'status', 'attempted_at', 'seq'])
        .where('platform_address', '=', me)
        .where('status', '!=', 'queued')
        .orderBy('attempted_at', 'desc')
        .orderBy('seq', 'desc')
        .limit(26)
        .execute(),
    );
    console.log(
      `  baseline: bare keyset page query              p50 ${ms(percentile(floor, 50))}  p99 ${ms(percentile(floor, 99))}`,
    );

    const page = (viewType: string, bookmark: string) =>
      t.request('POST', '/api/v0/users', {
        token: user.accessToken,
        body: { accountsToFetch: [{ address: me, viewsToFetch: [{ viewType, viewId: 'v', bookmark }] }] },
      });
    for (const viewType of ['allClaimActivity', 'publicClaimActivity', 'signinRequests']) {
      // a bookmark 40 pages deep, to show keyset paging does not slow down with depth
      let deep = '';
      for (let i = 0; i < 40; i++) deep = (await page(viewType, deep)).json().accounts[0].views.v.pagination.bookmark;
      for (const [label, bookmark] of [
        ['first page', ''],
        ['page 41', deep],
      ] as const) {
        const times = await timeEach(SAMPLES, async () => {
          const r = await page(viewType, bookmark);
          if (r.statusCode !== 200) throw new Error(r.body);
        });
        const p50 = percentile(times, 50);
        console.log(
          `  ${`${viewType}, ${label}`.padEnd(45)}  p50 ${ms(p50)}  p99 ${ms(percentile(times, 99))}  (${fmt(p50 / percentile(floor, 50), 1)}x the bare query)`,
        );
      }
    }
    await t.request('POST', '/api/v0/user/updateAccount', { token: user.accessToken, body: { username: 'bencher' } });
    for (const [label, url] of [
      ['GET /api/v0/user?address=', `/api/v0/user?address=${me}`],
      ['GET /api/v0/user?username= (any case)', '/api/v0/user?username=BENCHER'],
    ] as const) {
      const times = await timeEach(SAMPLES, async () => {
        const r = await t.request('GET', url);
        if (r.statusCode !== 200) throw new Error(r.body);
      });
      console.log(`  ${label.padEnd(45)}  p50 ${ms(percentile(times, 50))}  p99 ${ms(percentile(times, 99))}`);
    }
  } finally {
    await t.close();
  }
}

for (const db of await benchDatabases()) await run(db.name, db.make);
