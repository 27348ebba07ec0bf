// Route validators and serializers compile on a route's first use (src/shared/schema-compilers.ts,
// docs/design.md): a start no longer compiles every schema, so this file compiles them all at start
// to keep a schema that cannot compile from reaching a release, and pins what first use does.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import { startApp } from '../helpers/app.ts';
import type { App } from '../../src/server.ts';

// a schema Ajv refuses to compile (an unknown type)
const broken = { type: 'object', properties: { n: { type: 'no-such-type' } } };
const probes = (app: App) => {
  app.post(
    '/api/v0/test/echo',
    {
      schema: {
        body: Type.Object({ n: Type.Integer() }, { additionalProperties: false }),
        response: { 200: Type.Object({ n: Type.Integer() }) },
      },
    },
    async (req) => ({ n: (req.body as { n: number }).n, dropped: 'by the serializer' }),
  );
  app.post('/api/v0/test/broken', { schema: { body: broken } }, async () => ({ ok: true }));
};

describe('route schemas', () => {
  test("every route's validators and serializers compile (the app starts with compileSchemas: 'atStart')", async () => {
    const t = await startApp({ compileSchemas: 'atStart' });
    try {
      const res = await t.request('POST', '/api/v0/auth/status', { body: {} });
      assert.equal(res.statusCode, 200, res.body);
    } finally {
      await t.close();
    }
  });

  test('compiled at start, a schema that cannot compile fails the start, naming its route', async () => {
    await assert.rejects(startApp({ compileSchemas: 'atStart', extend: probes }), /\/api\/v0\/test\/broken/);
  });

  test('compiled on first use: the first request validates and serializes as every later one; a broken schema is a 500', async () => {
    const t = await startApp({ extend: probes });
    try {
      for (let i = 0; i < 2; i++) {
        const ok = await t.request('POST', '/api/v0/test/echo', { body: { n: 7 } });
        assert.equal(ok.statusCode, 200, ok.body);
        assert.deepEqual(ok.json(), { n: 7 });
        const bad = await t.request('POST', '/api/v0/test/echo', { body: { n: '7', extra: 1 } });
        assert.equal(bad.statusCode, 400, bad.body);
        assert.deepEqual(bad.json(), { errorMessage: 'body has unknown field "extra"' });
      }
      const broke = await t.request('POST', '/api/v0/test/broken', { body: { n: 1 } });
      assert.equal(broke.statusCode, 500, broke.body);
      assert.deepEqual(broke.json(), { errorMessage: 'Internal server error' });
    } finally {
      await t.close();
    }
  });

  test("the console's routes refuse an unknown body field as every route does (a 400 naming it, not dropped)", async () => {
    const origin = 'https://platform.example';
    const t = await startApp({ env: { PUBLIC_URL: origin } });
    try {
      const res = await t.request('POST', '/api/v0/console/session', {
        body: { requestId: 'r', signature: '0x00', extra: 1 },
        headers: { origin, 'sec-fetch-site': 'same-origin' },
        apiKey: null,
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(res.json(), { errorMessage: 'body has unknown field "extra"' });
    } finally {
      await t.close();
    }
  });
});
