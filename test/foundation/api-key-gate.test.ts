import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from '../helpers/app.ts';
import { createApiKey, revokeApiKey } from '../../src/api-keys/storage.ts';

describe('API-key gate', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({
      extend: (app) => app.get('/api/v0/ping', async (req) => ({ pong: true, keyId: req.apiKeyId })),
    });
  });
  after(() => t.close());

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

  test('operational routes need no key', async () => {
    assert.equal((await t.request('GET', '/healthz', { apiKey: null })).statusCode, 200);
    assert.equal((await t.request('GET', '/readyz', { apiKey: null })).statusCode, 200);
    const doc = await t.request('GET', '/openapi.json', { apiKey: null });
    assert.equal(doc.statusCode, 200);
    assert.equal(doc.json().openapi, '3.1.0');
  });
});

describe('rate limit', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({
      env: { RATE_LIMIT_PER_MINUTE: '3' },
      extend: (app) => app.get('/api/v0/ping', async () => ({ pong: true })),
    });
  });
  after(() => t.close());

  test('requests beyond the per-key limit get a 429 with Retry-After', async () => {
    const codes = [];
    for (let i = 0; i < 5; i++) codes.push((await t.request('GET', '/api/v0/ping')).statusCode);
    assert.deepEqual(codes, [200, 200, 200, 429, 429]);
    const res = await t.request('GET', '/api/v0/ping');
    assert.equal(res.json().errorMessage, 'Exceeded rate limit. Too many requests.');
    assert.ok(Number(res.headers['retry-after']) > 0);
  });
});
