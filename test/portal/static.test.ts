// The portal's pages and assets as the service serves them: strict CSP and no-cache on HTML,
// immutable hashed assets (gzipped when accepted), the claim page's preload hints.
// test-run: once (static pages and assets: no storage behaviour; scripts/test.mjs)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { startApp, type TestApp } from '../helpers/app.ts';
import { PORTAL_DIST } from '../../src/portal/static.ts';

describe('portal static serving', () => {
  let t: TestApp;
  before(async () => {
    if (!existsSync(join(PORTAL_DIST, 'index.html')))
      throw new Error('portal/dist is missing: run npm install (or npm run build:portal).');
    t = await startApp();
  });
  after(() => t.close());

  test('the console and claim pages: CSP without inline script, no-cache, a visitor cookie', async () => {
    for (const path of ['/', '/claim/spring-drop']) {
      const res = await t.request('GET', path, { apiKey: null });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(res.headers['cache-control'], 'no-cache');
      assert.equal(res.headers['x-frame-options'], 'DENY');
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.match(
        String(res.headers['set-cookie']),
        /^platform_console=v\.[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=86400$/,
      );
      assert.doesNotMatch(res.body, /<script(?![^>]*\bsrc=)[^>]*>/);
    }
  });

  test('the claim page preloads its three reads (the claim id URL-encoded)', async () => {
    const res = await t.request('GET', '/claim/a%22b', { apiKey: null });
    assert.match(res.body, /<link rel="preload" as="fetch" crossorigin href="\/api\/v0\/claim\/a%22b">/);
    assert.match(res.body, /href="\/api\/v0\/plugins\/core"/);
    assert.match(res.body, /href="\/api\/v0\/console\/session"/);
  });

  test('hashed assets are immutable for a year and gzipped when accepted; unknown ones are 404', async () => {
    const html = (await t.request('GET', '/', { apiKey: null })).body;
    const src = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1];
    const plain = await t.request('GET', src, { apiKey: null });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(plain.headers['content-type'], 'text/javascript; charset=utf-8');
    const gz = await t.app.inject({ method: 'GET', url: src, headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(gz.rawPayload).toString('utf8'), plain.body);
    assert.equal((await t.request('GET', '/assets/nope.js', { apiKey: null })).statusCode, 404);
  });
});
