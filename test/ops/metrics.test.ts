// /metrics: off by default, behind a bearer token or on its own port; request latency per route
// pattern; claim queue depth and age; webhook backlog; indexer lag when a chain is configured;
// database pool use.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { startApp, TEST_DB } from '../helpers/app.ts';
import { freePort } from '../helpers/process.ts';
import { attempt, claimWithPlugins, manager, numUses, randomAddress } from '../claims/helpers.ts';
import { drainQueue } from '../../src/claims/queue.ts';
import type { ManualClock } from '../../src/shared/clock.ts';
import { enqueueDeliveries } from '../../src/webhooks/outbox.ts';

const TOKEN = 'metrics-token-0123456789abcdef';

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[4]);
  }
  return undefined;
}

describe('metrics are off unless configured', () => {
  test('no METRICS_TOKEN and no METRICS_PORT: /metrics does not exist', async () => {
    const t = await startApp();
    try {
      assert.equal((await t.request('GET', '/metrics', { apiKey: null })).statusCode, 404);
    } finally {
      await t.close();
    }
  });
});

describe('metrics behind METRICS_TOKEN', () => {
  const t = useApp({ clock: true, env: { METRICS_TOKEN: TOKEN, RUN_WORKER: 'false' } });
  const scrape = async () => {
    const res = await t.request('GET', '/metrics', { apiKey: null, headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/plain/);
    return res.body;
  };

  test('without the token, or with a wrong one: 401 in the error shape', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-token-wrong-token' }, { authorization: TOKEN }] as Record<
      string,
      string
    >[]) {
      const res = await t.request('GET', '/metrics', { apiKey: null, headers });
      assert.equal(res.statusCode, 401);
      assert.match(res.json().errorMessage, /METRICS_TOKEN/);
    }
  });

  test('request count and latency per route pattern, never the raw URL', async () => {
    for (const id of ['secret-looking-id-1', 'secret-looking-id-2', 'secret-looking-id-3']) {
      assert.equal((await t.request('GET', `/api/v0/developerApp/${id}`)).statusCode, 404);
    }
    await t.request('GET', '/no/such/route/at-all', { apiKey: null });
    await t.request('GET', '/openapi.json', { apiKey: null });
    const text = await scrape();
    assert.equal(
      sample(text, 'platform_http_request_duration_seconds_count', {
        method: 'GET',
        route: '/openapi.json',
        status_code: '200',
      }),
      1,
      'routes of the shared machinery too',
    );
    const labels = { method: 'GET', route: '/api/v0/developerApp/:clientId', status_code: '404' };
    assert.equal(sample(text, 'platform_http_request_duration_seconds_count', labels), 3);
    assert.ok(sample(text, 'platform_http_request_duration_seconds_sum', labels)! > 0);
    assert.equal(sample(text, 'platform_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' }), 3);
    assert.equal(
      sample(text, 'platform_http_request_duration_seconds_count', {
        method: 'GET',
        route: 'unmatched',
        status_code: '404',
      }),
      1,
    );
    assert.ok(!text.includes('secret-looking-id') && !text.includes('at-all'), 'no raw path in any label');
    assert.ok(sample(text, 'process_cpu_user_seconds_total')! >= 0, 'process metrics');
  });

  test('claim queue depth and the age of the oldest queued attempt', async () => {
    const m = await manager(t);
    const claimId = await claimWithPlugins(t, m.accessToken, [numUses(10)]);
    let text = await scrape();
    assert.equal(sample(text, 'platform_claim_queue_depth'), 0);
    assert.equal(sample(text, 'platform_claim_queue_oldest_age_seconds'), 0);
    for (let i = 0; i < 3; i++) assert.equal((await attempt(t, 'complete', claimId, randomAddress())).statusCode, 200);
    (t.clock as ManualClock).advance(90_000);
    text = await scrape();
    assert.equal(sample(text, 'platform_claim_queue_depth'), 3);
    assert.equal(sample(text, 'platform_claim_queue_oldest_age_seconds'), 90);
    await drainQueue(t.ctx);
    text = await scrape();
    assert.equal(sample(text, 'platform_claim_queue_depth'), 0);
  });

  test('webhook backlog: pending deliveries and the age of the oldest', async () => {
    assert.equal(sample(await scrape(), 'platform_webhook_backlog'), 0);
    const now = t.clock.now();
    const delivery = (id: string) => ({
      pluginId: 'p',
      claimId: 'c',
      instanceId: 'i',
      claimAttemptId: id,
      url: 'https://hooks.example/x',
      body: { _attemptStatus: 'success' },
    });
    await enqueueDeliveries(t.ctx.db, [delivery('a1')], now - 30_000, t.ctx.keyring);
    await enqueueDeliveries(t.ctx.db, [delivery('a2')], now - 10_000, t.ctx.keyring);
    const text = await scrape();
    assert.equal(sample(text, 'platform_webhook_backlog'), 2);
    assert.equal(sample(text, 'platform_webhook_oldest_pending_age_seconds'), 30);
    // no chain configured: no indexer lag
    assert.equal(sample(text, 'platform_indexer_lag_blocks'), undefined);
  });

  test('database pool use', async () => {
    const text = await scrape();
    if (TEST_DB === 'postgres') {
      assert.ok(sample(text, 'platform_db_pool_connections', { state: 'total' })! >= 1);
      assert.equal(sample(text, 'platform_db_pool_connections', { state: 'waiting' }), 0);
      assert.equal(sample(text, 'platform_db_pool_max'), 10);
    } else {
      assert.equal(sample(text, 'platform_db_pool_connections', { state: 'total' }), 1);
    }
  });
});

describe('metrics on METRICS_PORT', () => {
  let port: number;
  before(async () => {
    port = await freePort();
  });
  const t = useApp({ env: () => ({ METRICS_PORT: String(port), METRICS_HOST: '127.0.0.1' }) });

  test('served only on the separate listener', async () => {
    assert.equal((await t.request('GET', '/metrics', { apiKey: null })).statusCode, 404);
    await t.request('GET', '/healthz', { apiKey: null });
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.equal(
      sample(text, 'platform_http_request_duration_seconds_count', {
        method: 'GET',
        route: '/healthz',
        status_code: '200',
      }),
      1,
    );
    assert.equal((await fetch(`http://127.0.0.1:${port}/other`)).status, 404);
  });

  test('a bad METRICS_PORT or METRICS_TOKEN names the variable', async () => {
    const { loadConfig } = await import('../../src/config.ts');
    assert.throws(
      () => loadConfig({ ...t.database.env, PORT: '3000', METRICS_PORT: '3000' }),
      /METRICS_PORT must differ from PORT/,
    );
    assert.throws(() => loadConfig({ ...t.database.env, METRICS_TOKEN: 'short' }), /METRICS_TOKEN must be 16 to 256/);
  });
});

describe('indexer lag in metrics', () => {
  test('blocks behind the chain head and seconds since the indexer last committed', async () => {
    // the chain is never called: the worker (and its indexer) is off; the cursor row is the indexer's
    const t = await startApp({
      manualClock: true,
      env: { METRICS_TOKEN: TOKEN, RUN_WORKER: 'false', CHAIN_REST_URL: 'http://127.0.0.1:9' },
    });
    try {
      const now = t.clock.now();
      await t.ctx.db
        .insertInto('chain_index_state')
        .values({
          id: 'indexer',
          height: 1000,
          block_time: 0,
          chain_height: 1012,
          holder: null,
          lease_expires_at: 0,
          updated_at: now - 5_000,
        })
        .execute();
      const res = await t.request('GET', '/metrics', { apiKey: null, headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(sample(res.body, 'platform_indexer_lag_blocks'), 12);
      assert.equal(sample(res.body, 'platform_indexer_last_update_age_seconds'), 5);
    } finally {
      await t.close();
    }
  });
});
