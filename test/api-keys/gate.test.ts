import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { startApp, type TestApp } from '../helpers/app.ts';
import { createApiKey, revokeApiKey } from '../../src/api-keys/storage.ts';

/** Counts each write of an API key's last use into test_key_touches (a trigger on api_keys). */
async function countKeyTouches(t: TestApp): Promise<void> {
  const { db } = t.ctx;
  await sql`create table test_key_touches (key_id text not null)`.execute(db);
  if (t.ctx.dialect === 'sqlite') {
    await sql`create trigger test_key_touched after update of last_used_at on api_keys
      begin insert into test_key_touches values (new.id); end`.execute(db);
    return;
  }
  await sql`create function test_key_touched() returns trigger language plpgsql as $$
      begin insert into test_key_touches values (new.id); return new; end $$`.execute(db);
  await sql`create trigger test_key_touched after update of last_used_at on api_keys
      for each row execute function test_key_touched()`.execute(db);
}

/**
 * Returns once every statement the app had queued has finished: SQLite runs them in order on its
 * one connection; on PostgreSQL all 10 pooled connections are held at once, which the pool grants
 * only after the earlier requests for a connection (first come, first served) are done.
 */
async function afterQueuedStatements(t: TestApp): Promise<void> {
  if (t.ctx.dialect === 'sqlite') {
    await sql`select 1`.execute(t.ctx.db);
    return;
  }
  let held = 0;
  let release!: () => void;
  const all = new Promise<void>((r) => {
    release = r;
  });
  await Promise.all(
    Array.from({ length: 10 }, () =>
      t.ctx.db.connection().execute(async () => {
        if (++held === 10) release();
        await all;
      }),
    ),
  );
}

describe('API-key gate', () => {
  const t = useApp({
    extend: (app) => app.get('/api/v0/ping', async (req) => ({ pong: true, keyId: req.apiKeyId })),
  });

  test('a valid key passes', async () => {
    const res = await t.request('GET', '/api/v0/ping');
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().pong, true);
  });

  test('a missing key is a 401', async () => {
    const res = await t.request('GET', '/api/v0/ping', { apiKey: null });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), {
      errorMessage: 'Unauthorized request. This route is only accessible with an API key.',
      unauthorized: true,
    });
  });

  test('an unknown key is a 401', async () => {
    const res = await t.request('GET', '/api/v0/ping', { apiKey: 'f'.repeat(64) });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().errorMessage, 'Unauthorized request. Error validating API key.');
  });

  test('a revoked key is a 401 within API_KEY_CACHE_MS (1 s)', async () => {
    const { id, key } = await createApiKey(t.ctx.db, 'to revoke');
    assert.equal((await t.request('GET', '/api/v0/ping', { apiKey: key })).statusCode, 200);
    assert.equal(await revokeApiKey(t.ctx.db, id), true);
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal((await t.request('GET', '/api/v0/ping', { apiKey: key })).statusCode, 401);
  });

  test('with API_KEY_CACHE_MS=0 a revoked key is a 401 on the very next request', async () => {
    const t0 = await startApp({
      env: { API_KEY_CACHE_MS: '0' },
      extend: (app) => app.get('/api/v0/ping', async () => ({ pong: true })),
    });
    try {
      const { id, key } = await createApiKey(t0.ctx.db, 'to revoke');
      assert.equal((await t0.request('GET', '/api/v0/ping', { apiKey: key })).statusCode, 200);
      await revokeApiKey(t0.ctx.db, id);
      assert.equal((await t0.request('GET', '/api/v0/ping', { apiKey: key })).statusCode, 401);
    } finally {
      await t0.close();
    }
  });

  test('HEAD of a GET route and unknown /api/ paths need the key too', async () => {
    assert.equal((await t.request('HEAD', '/api/v0/ping', { apiKey: null })).statusCode, 401);
    assert.equal((await t.request('HEAD', '/api/v0/ping')).statusCode, 200);
    const unknown = await t.request('GET', '/api/v0/no-such-route', { apiKey: null });
    assert.equal(unknown.statusCode, 401);
    assert.equal((await t.request('GET', '/api/v0/no-such-route')).statusCode, 404);
    assert.equal((await t.request('GET', '/no-such-page', { apiKey: null })).statusCode, 404);
  });

  test("requests in flight together with one key record the key's use once, not once each", async () => {
    await countKeyTouches(t);
    const { id, key } = await createApiKey(t.ctx.db, 'busy', t.clock.now());
    const codes = await Promise.all(
      Array.from({ length: 20 }, async () => (await t.request('GET', '/api/v0/ping', { apiKey: key })).statusCode),
    );
    assert.deepEqual(new Set(codes), new Set([200]));
    await afterQueuedStatements(t);
    const touches = await sql<{ n: number }>`select count(*) as n from test_key_touches where key_id = ${id}`.execute(
      t.ctx.db,
    );
    assert.equal(Number(touches.rows[0]!.n), 1, 'one write of the last use, however many requests were in flight');
  });

  test('operational routes need no key', async () => {
    assert.equal((await t.request('GET', '/healthz', { apiKey: null })).statusCode, 200);
    assert.equal((await t.request('GET', '/readyz', { apiKey: null })).statusCode, 200);
    const doc = await t.request('GET', '/openapi.json', { apiKey: null });
    assert.equal(doc.statusCode, 200);
    assert.equal(doc.json().openapi, '3.1.0');
  });
});

describe('rate limit', () => {
  const t = useApp({
    env: { RATE_LIMIT_PER_MINUTE: '3' },
    extend: (app) => app.get('/api/v0/ping', async () => ({ pong: true })),
  });

  test('requests beyond the per-key limit get a 429 with Retry-After', async () => {
    const codes = [];
    for (let i = 0; i < 5; i++) codes.push((await t.request('GET', '/api/v0/ping')).statusCode);
    assert.deepEqual(codes, [200, 200, 200, 429, 429]);
    const res = await t.request('GET', '/api/v0/ping');
    assert.equal(res.json().errorMessage, 'Exceeded rate limit. Too many requests.');
    assert.ok(Number(res.headers['retry-after']) > 0);
  });
});
