// Rate limits shared across processes: two real `platform serve` processes on one database draw
// from one budget per API key and per client IP (RATE_LIMIT_STORE=database, the default on
// PostgreSQL; on SQLite the two processes share the database file). 429s carry Retry-After.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase, type TestDatabase } from '../helpers/app.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { startService, type ServiceProcess } from '../helpers/process.ts';
import { loadConfig } from '../../src/config.ts';

async function apiKey(db: TestDatabase): Promise<string> {
  const r = await runCliInProcess(['api-key', 'create', '--label', 'rate'], db.env);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).key;
}

/** `n` requests to each service at once; the status codes and the Retry-After values of the 429s. */
async function burst(services: ServiceProcess[], n: number, headers: Record<string, string>) {
  const responses = await Promise.all(
    services.flatMap((s) => Array.from({ length: n }, () => fetch(`${s.url}/api/v0/developerApp/none`, { headers }))),
  );
  const codes = responses.map((r) => r.status);
  const retryAfter = responses.filter((r) => r.status === 429).map((r) => Number(r.headers.get('retry-after')));
  const bodies = await Promise.all(responses.map((r) => r.json() as Promise<{ errorMessage: string }>));
  return { codes, retryAfter, bodies, count: (code: number) => codes.filter((c) => c === code).length };
}

/** Fixed one-minute windows: start a phase only with enough of the window left. */
async function awayFromWindowEnd(seconds = 15) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await new Promise((r) => setTimeout(r, left + 200));
}

describe('rate limits shared by two processes', () => {
  let db: TestDatabase;
  let a: ServiceProcess;
  let b: ServiceProcess;
  before(async () => {
    db = createTestDatabase();
    const env = {
      ...db.env,
      RATE_LIMIT_PER_MINUTE: '10',
      RATE_LIMIT_PER_IP_PER_MINUTE: '30',
      RATE_LIMIT_STORE: 'database',
      RUN_WORKER: 'false',
    };
    a = await startService(env);
    b = await startService(env);
  });
  after(async () => {
    await Promise.all([a.stop(), b.stop()]);
    await db.drop();
  });

  test('one budget per key and per IP across both processes, with Retry-After', async () => {
    const [key1, key2] = [await apiKey(db), await apiKey(db)];
    await awayFromWindowEnd();
    // key 1: 16 requests, 8 to each process; 10 pass in all
    const one = await burst([a, b], 8, { 'x-api-key': key1 });
    assert.equal(one.count(404), 10, one.codes.join(' '));
    assert.equal(one.count(429), 6);
    for (const s of one.retryAfter) assert.ok(s >= 1 && s <= 60, `Retry-After ${s}`);
    assert.ok(one.bodies.filter((x) => x.errorMessage === 'Exceeded rate limit. Too many requests.').length === 6);
    // key 2 has its own budget: 8 pass (the IP has now used 24 of 30)
    const two = await burst([a, b], 4, { 'x-api-key': key2 });
    assert.equal(two.count(404), 8, two.codes.join(' '));
    // without a key the IP budget still counts: 6 left, then 429 before the key check
    const none = await burst([a, b], 4, {});
    assert.equal(none.count(401), 6, none.codes.join(' '));
    assert.equal(none.count(429), 2);
    // public sign-in routes are IP-limited too
    const pub = await fetch(`${a.url}/api/v0/signin/challenge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(pub.status, 429);
    assert.ok(Number(pub.headers.get('retry-after')) >= 1);
  });
});

describe('large limits: leased blocks, taken ahead, never admit more than the limit', () => {
  let db: TestDatabase;
  let a: ServiceProcess;
  let b: ServiceProcess;
  before(async () => {
    db = createTestDatabase();
    // a limit of 1,000: blocks of 10, the next one taken when 2 are left
    const env = { ...db.env, RATE_LIMIT_PER_MINUTE: '1000', RATE_LIMIT_STORE: 'database', RUN_WORKER: 'false' };
    a = await startService(env);
    b = await startService(env);
  });
  after(async () => {
    await Promise.all([a.stop(), b.stop()]);
    await db.drop();
  });

  test('1,200 requests over two processes: at most 1,000 pass, and at most a block and a quarter less', async () => {
    const key = await apiKey(db);
    await awayFromWindowEnd();
    let passed = 0;
    for (let i = 0; i < 8; i++) passed += (await burst([a, b], 75, { 'x-api-key': key })).count(404);
    assert.ok(passed <= 1000, `${passed} passed`);
    assert.ok(
      passed >= 1000 - 12,
      `${passed} passed (one process may hold a block of 10 and the 2 taken ahead unused)`,
    );
  });
});

describe('rate limit configuration', () => {
  test('the store defaults to the database on PostgreSQL and to memory on SQLite; bad values name the variable', () => {
    const dir = { DATA_DIR: createTestDatabase('sqlite').env.DATA_DIR };
    assert.equal(loadConfig(dir).rateLimitStore, 'memory');
    assert.equal(loadConfig({ ...dir, DATABASE_URL: 'postgres://x@127.0.0.1/y' }).rateLimitStore, 'database');
    assert.throws(
      () => loadConfig({ ...dir, RATE_LIMIT_STORE: 'redis' }),
      /RATE_LIMIT_STORE must be database or memory/,
    );
    assert.throws(
      () => loadConfig({ ...dir, RATE_LIMIT_PER_IP_PER_MINUTE: '-1' }),
      /RATE_LIMIT_PER_IP_PER_MINUTE must be an integer/,
    );
  });
});
