// What a hostile client probe found at the HTTP layer (issue 15, "Security and load hardening"):
// deep JSON, router errors, form bodies, request ids, GET bodies and slow bodies. Raw sockets
// where fetch would hide the behaviour (slow senders, bodies on GET).
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import type { TestApp } from '../helpers/app.ts';
import type { SignedIn } from '../helpers/signin.ts';
import { claimWithPlugins, createClaim, manager, numUses, randomAddress } from '../claims/helpers.ts';

/** Sends raw bytes; resolves with everything the server sent once it closes the socket (or after `waitMs`). */
function rawExchange(
  port: number,
  head: string,
  opts: { body?: string; waitMs?: number; onSocket?: (s: Socket) => void } = {},
): Promise<{ text: string; closed: boolean; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed, ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), opts.waitMs ?? 5000);
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.on('connect', () => {
      socket.write(head);
      if (opts.body) socket.write(opts.body);
      opts.onSocket?.(socket);
    });
  });
}

const port = (t: TestApp) => Number(new URL(t.url).port);
const statusOf = (raw: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
const bodyOf = (raw: string) => raw.slice(raw.indexOf('\r\n\r\n') + 4);

describe('HTTP input hardening', () => {
  let m: SignedIn;
  const t = useApp({ listen: true });
  before(async () => {
    m = await manager(t);
  });

  test('deep JSON: nesting beyond the cap is a 400 at parse time, in rewards and in user inputs', async () => {
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    const claimBody = `{"claims":[{"claimId":"deep1","plugins":[],"rewards":${deep(5000)}}]}`;
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v0/claims',
      headers: { 'x-api-key': t.apiKey, authorization: `Bearer ${m.accessToken}`, 'content-type': 'application/json' },
      payload: claimBody,
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().errorMessage, 'Request body nests arrays and objects deeper than 64 levels');
    const claimId = await claimWithPlugins(t, m.accessToken, [numUses(5)]);
    const input = await t.app.inject({
      method: 'POST',
      url: `/api/v0/claims/simulate/${claimId}/${randomAddress()}`,
      headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' },
      payload: `{"_expectedVersion":-1,"numUses":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
    });
    assert.equal(input.statusCode, 400, input.body);
    // brackets inside strings do not count; 64 levels pass the parser
    const strings = await t.request('POST', `/api/v0/claims/simulate/${claimId}/${randomAddress()}`, {
      body: { _expectedVersion: -1, numUses: { x: '['.repeat(5000) } },
    });
    assert.equal(strings.statusCode, 400);
    assert.equal(strings.json().errorMessage, 'body.numUses has unknown field "x"');
    const ok = await t.app.inject({
      method: 'POST',
      url: '/api/v0/auth/status',
      headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' },
      payload: `{"a":${deep(63)}}`,
    });
    assert.equal(ok.statusCode, 400);
    assert.equal(ok.json().errorMessage, 'body has unknown field "a"', 'parsed: 64 levels are allowed');
  });

  test('a NUL character anywhere in the input is the same 400 naming where, on both databases', async () => {
    // SQLite stores U+0000 where PostgreSQL refuses it: without one rule up front, a search for
    // "%00" matched every claim on SQLite and was a vague 400 on PostgreSQL
    const nul = (where: string) => `${where} must not contain the NUL character (U+0000)`;
    const cases: Array<[string, string, unknown, string]> = [
      ['GET', '/api/v0/claims/search?searchValue=%00', undefined, nul('querystring.searchValue')],
      ['GET', '/api/v0/plugins/search?searchValue=a%00', undefined, nul('querystring.searchValue')],
      ['GET', '/api/v0/dynamicStore/a%00b', undefined, nul('params.id')],
      ['GET', '/api/v0/claim/a%00b', undefined, nul('params.claimId')],
      [
        'POST',
        '/api/v0/storeActions/single',
        { dynamicDataId: 'a\u0000b', actionName: 'add', payload: {} },
        nul('body.dynamicDataId'),
      ],
      [
        'POST',
        '/api/v1/claims/fetch',
        { claimsToFetch: [{ claimId: 'x' }, { claimId: 'a\u0000' }] },
        nul('body.claimsToFetch.1.claimId'),
      ],
      [
        'POST',
        '/api/v0/claims',
        { claims: [{ claimId: 'n', plugins: [], metadata: { 'na\u0000me': 'x' } }] },
        nul('a key of body.claims.0.metadata'),
      ],
    ];
    for (const [method, url, body, message] of cases) {
      const res = await t.request(method, url, { token: m.accessToken, ...(body !== undefined ? { body } : {}) });
      assert.equal(res.statusCode, 400, `${method} ${url}: ${res.body}`);
      assert.equal(res.json().errorMessage, message, `${method} ${url}`);
    }
    // an escaped backslash before "u0000" is text, not a NUL
    const literal = await t.app.inject({
      method: 'POST',
      url: '/api/v0/storeActions/single',
      headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' },
      payload: '{"dynamicDataId":"a\\\\u0000","actionName":"add","payload":{}}',
    });
    assert.ok(literal.statusCode >= 400 && literal.statusCode < 500);
    assert.doesNotMatch(literal.json().errorMessage, /NUL/, literal.body);
  });

  test('a prototype key is named as such, not as malformed JSON; broken JSON still is', async () => {
    const send = (payload: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v0/auth/status',
        headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' },
        payload,
      });
    for (const payload of ['{"__proto__":{"admin":true}}', '{"a":[{"constructor":{"prototype":{"x":1}}}]}']) {
      const res = await send(payload);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(
        res.json().errorMessage,
        'Request body must not contain the key "__proto__" (or "constructor" holding "prototype")',
      );
    }
    const broken = await send('{"a":');
    assert.equal(broken.statusCode, 400);
    assert.equal(broken.json().errorMessage, 'Malformed JSON in request body');
  });

  test('router errors: our shape, nothing of the URL echoed, the API-key gate answers first', async () => {
    const secret = 'topsecretvalue';
    const badEncoding = `/api/v0/claim/%E0%A4%A?token=${secret}`;
    const longParam = `/api/v0/claim/${'a'.repeat(300)}?token=${secret}`;
    const known = `/api/v0/claim/abc?token=${secret}`;
    // without a key: the same 401 as a known route
    const reference = await t.request('GET', known, { apiKey: null });
    assert.equal(reference.statusCode, 401);
    for (const url of [badEncoding, longParam, '/api/v0/no/such/route']) {
      const res = await t.request('GET', url, { apiKey: null });
      assert.equal(res.statusCode, 401, url);
      assert.deepEqual(res.json(), reference.json());
    }
    // with a key: 400 / 414 in our shape, nothing of the URL
    const bad = await t.request('GET', badEncoding);
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(Object.keys(bad.json()), ['errorMessage']);
    const long = await t.request('GET', longParam);
    assert.equal(long.statusCode, 414);
    assert.deepEqual(Object.keys(long.json()), ['errorMessage']);
    for (const res of [bad, long]) {
      assert.ok(!res.body.includes(secret) && !res.body.includes('aaaa') && !res.body.includes('%E0'), res.body);
    }
  });

  test('a claim id of the longest length accepted at creation can be read and attempted', async () => {
    const claimId = 'L'.repeat(128);
    await createClaim(t, m.accessToken, { claimId, plugins: [numUses(1)] });
    const doc = await t.request('GET', `/api/v0/claim/${claimId}`);
    assert.equal(doc.statusCode, 200, doc.body);
    const sim = await t.request('POST', `/api/v0/claims/simulate/${claimId}/${randomAddress()}`, {
      body: { _expectedVersion: -1 },
    });
    assert.equal(sim.statusCode, 200, sim.body);
    const tooLong = await t.request('POST', '/api/v0/claims', {
      token: m.accessToken,
      body: { claims: [{ claimId: 'L'.repeat(129), plugins: [numUses(1)] }] },
    });
    assert.equal(tooLong.statusCode, 400);
  });

  test('form bodies: 415 everywhere but the token endpoints', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const challenge = await t.request('POST', '/api/v0/signin/challenge', {
      apiKey: null,
      headers: form,
      body: 'client_id=x&address=y',
    });
    assert.equal(challenge.statusCode, 415);
    assert.match(challenge.json().errorMessage, /application\/json/);
    const claims = await t.request('POST', '/api/v0/claims', { token: m.accessToken, headers: form, body: 'claims=1' });
    assert.equal(claims.statusCode, 415);
    // the token endpoints still take forms (an OAuth error, not a 415)
    for (const path of ['/api/v0/signin/token', '/api/v0/signin/token/revoke']) {
      const res = await t.request('POST', path, { headers: form, body: 'grant_type=nope' });
      assert.notEqual(res.statusCode, 415, path);
    }
  });

  test('the OAuth endpoints answer every 4xx with RFC 6749 fields, and a 415 there names the form encoding', async () => {
    for (const path of ['/api/v0/signin/token', '/api/v0/signin/token/revoke']) {
      const cases: Array<[Record<string, string>, string, number]> = [
        [{ 'content-type': 'application/json' }, '{bad', 400],
        [{ 'content-type': 'application/json' }, '{"__proto__":{}}', 400],
        [{ 'content-type': 'application/x-www-form-urlencoded' }, 'grant_type=a%00b', 400],
        [{ 'content-type': 'text/plain' }, 'grant_type=x', 415],
      ];
      for (const [headers, body, status] of cases) {
        const res = await t.request('POST', path, { headers, body });
        assert.equal(res.statusCode, status, `${path} ${body}: ${res.body}`);
        const json = res.json();
        assert.equal(json.error, 'invalid_request', `${path} ${body}: ${res.body}`);
        assert.equal(json.error_description, json.errorMessage);
        if (status === 415) assert.match(json.errorMessage, /application\/x-www-form-urlencoded/);
      }
    }
  });

  test('request ids: a short safe client id is kept; a long or unsafe one is replaced', async () => {
    const kept = await t.request('GET', '/healthz', { headers: { 'x-request-id': 'client-1.2:3_x' } });
    assert.equal(kept.headers['x-request-id'], 'client-1.2:3_x');
    for (const id of ['x'.repeat(8000), 'x'.repeat(65), 'a b', 'a\u00e9', '{"json":1}']) {
      const res = await t.request('GET', '/healthz', { headers: { 'x-request-id': id } });
      const echoed = String(res.headers['x-request-id']);
      assert.notEqual(echoed, id);
      assert.match(echoed, /^[A-Za-z0-9._:-]{1,64}$/);
    }
  });

  test('a GET with a body is refused before the body is read, and the connection is closed', async () => {
    const res = await rawExchange(port(t), 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n', {
      body: 'x'.repeat(1000),
    });
    assert.equal(statusOf(res.text), 400, res.text);
    assert.match(JSON.parse(bodyOf(res.text)).errorMessage, /GET request must not have a body/);
    assert.equal(res.closed, true, 'the server closes rather than reading 100 MB');
  });
});

describe('slow bodies', () => {
  const t = useApp({ listen: true, env: { REQUEST_TIMEOUT_MS: '1000' } });

  test('a client trickling its body is cut off while normal requests are served', async () => {
    let trickle: NodeJS.Timeout | undefined;
    const slow = rawExchange(
      port(t),
      'POST /api/v0/signin/challenge HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n',
      {
        waitMs: 8000,
        // one byte every 100 ms: never idle, never finished
        onSocket: (s) => (trickle = setInterval(() => s.writable && s.write(' '), 100)),
      },
    );
    const served: number[] = [];
    for (let i = 0; i < 5; i++) {
      served.push((await fetch(`${t.url}/healthz`)).status);
      await new Promise((r) => setTimeout(r, 100));
    }
    const res = await slow;
    clearInterval(trickle);
    assert.deepEqual(served, [200, 200, 200, 200, 200]);
    assert.equal(res.closed, true, 'the slow socket was closed by the server');
    assert.ok([0, 408].includes(statusOf(res.text)), res.text);
  });
});
