// GET /signin/authorize: what the page shows, and when it redirects (never to an unverified URI).
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { createTestClient, type TestClient } from '../helpers/signin.ts';

describe('authorize page', () => {
  let client: TestClient;
  const t = useApp();
  before(async () => {
    client = await createTestClient(t, { name: "Ben & Jerry's (Shop)", redirectUris: ['https://shop.example/cb?x=1'] });
    await t.ctx.db
      .updateTable('signin_apps')
      .set({ description: '<img src=x onerror=alert(1)>' })
      .where('client_id', '=', client.clientId)
      .execute();
  });

  const page = (q: Record<string, string>) =>
    t.request('GET', `/signin/authorize?${new URLSearchParams(q)}`, { apiKey: null });

  test('a valid request serves a self-contained page naming the app and the scopes', async () => {
    const res = await page({
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      scope: 'completeClaims,manageClaims',
      state: '</script><b>x',
    });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['x-frame-options'], 'DENY');
    const csp = String(res.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    assert.ok(nonce);
    const html = res.body;
    assert.ok(html.includes(`<script nonce="${nonce}">`));
    assert.ok(html.includes('Ben &amp; Jerry&#39;s (Shop)'), 'the app name is escaped');
    assert.ok(
      html.includes('&lt;img src=x onerror=alert(1)&gt;') && !html.includes('<img'),
      'the description is escaped',
    );
    assert.ok(html.includes('Complete Claims') && html.includes('Manage Claims'));
    assert.ok(!html.includes('Read Private Claim Data'));
    assert.ok(!/(src|href)=["']?https?:/i.test(html), 'no external assets');
    assert.ok(!html.includes('</script><b>x'), 'the state cannot break out of the script block');
    const params = JSON.parse(/<script type="application\/json" id="params">(.*?)<\/script>/s.exec(html)![1]);
    assert.equal(params.client_id, client.clientId);
    assert.equal(params.state, '</script><b>x');
    assert.equal(params.scope, 'completeClaims manageClaims');
    assert.equal(params.nativeChainId, 'platform-1');
    const deny = new URL(params.denyUrl);
    assert.equal(deny.searchParams.get('error'), 'access_denied');
    assert.equal(deny.searchParams.get('x'), '1', 'the registered query is kept');
  });

  test('an unknown client or an unregistered redirect URI is shown, never redirected to', async () => {
    const cases: Record<string, string>[] = [
      { response_type: 'code', client_id: 'nope', redirect_uri: 'https://evil.example/cb' },
      { response_type: 'code', client_id: client.clientId, redirect_uri: 'https://evil.example/cb' },
      { response_type: 'code', client_id: client.clientId, redirect_uri: 'https://shop.example/cb' },
      { response_type: 'token', client_id: client.clientId, redirect_uri: 'https://evil.example/cb', scope: 'bogus' },
      { response_type: 'code' },
    ];
    for (const q of cases) {
      const res = await page(q);
      assert.equal(res.statusCode, 400, JSON.stringify(q));
      assert.equal(res.headers.location, undefined);
      assert.match(res.body, /id="error"/);
      assert.ok(!res.body.includes('evil.example'));
    }
  });

  test('other errors go back to the verified redirect URI with error and state', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ scope: 'completeClaims fullAccess' }, 'invalid_scope'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [
        { code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'plain' },
        'invalid_request',
      ],
    ];
    for (const [extra, error] of cases) {
      const res = await page({
        response_type: 'code',
        client_id: client.clientId,
        redirect_uri: client.redirectUri,
        state: 's1',
        ...extra,
      });
      assert.equal(res.statusCode, 302, JSON.stringify(extra));
      const loc = new URL(String(res.headers.location));
      assert.equal(loc.origin + loc.pathname, 'https://shop.example/cb');
      assert.equal(loc.searchParams.get('x'), '1');
      assert.equal(loc.searchParams.get('error'), error);
      assert.equal(loc.searchParams.get('state'), 's1');
      assert.ok(loc.searchParams.get('error_description'));
    }
    // without a redirect URI the same errors are shown on the page
    const res = await page({ response_type: 'code', client_id: client.clientId, scope: 'bogus' });
    assert.equal(res.statusCode, 400);
    assert.match(res.body, /bogus/);
  });

  test('without a redirect URI the page runs the copy-the-code flow', async () => {
    const res = await page({ response_type: 'code', client_id: client.clientId });
    assert.equal(res.statusCode, 200);
    const params = JSON.parse(/<script type="application\/json" id="params">(.*?)<\/script>/s.exec(res.body)![1]);
    assert.equal(params.redirect_uri, undefined);
    assert.equal(params.denyUrl, null);
    assert.match(res.body, /code to copy/);
  });
});
