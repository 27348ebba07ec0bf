// Bugs found by the operability review (issue 15, "Bugs"): each test is the case that was observed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from '../helpers/app.ts';
import { authorizeCode, codeExchangeBody, type SignedIn } from '../helpers/signin.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { attempt, claimWithPlugins, manager, numUses, randomAddress } from '../claims/helpers.ts';
import { createStore, signInUser } from '../stores/helpers.ts';

const DAY = 86_400_000;
const TOKEN = '/api/v0/signin/token';

describe('claims and addresses', () => {
  let t: TestApp;
  let m: SignedIn;
  before(async () => {
    t = await startApp();
    m = await manager(t);
  });
  after(() => t.close());

  test('halt plus another failing plugin: always "Claim halted"', async () => {
    const pw = { pluginId: 'password', instanceId: 'pw', publicParams: {}, privateParams: { password: 'secret' } };
    const halt = { pluginId: 'halt', instanceId: 'h', publicParams: {}, privateParams: {} };
    // halt after the failing plugin in claim order, and a failing mandatory numUses before it
    for (const plugins of [
      [numUses(5), pw, halt],
      [numUses(0), halt],
      [numUses(5), halt, pw],
    ]) {
      const claimId = await claimWithPlugins(t, m.accessToken, plugins);
      for (const kind of ['simulate', 'complete'] as const) {
        const res = await attempt(
          t,
          kind,
          claimId,
          randomAddress(),
          plugins.includes(pw) ? { pw: { password: 'wrong' } } : {},
        );
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().errorMessage, 'Claim halted', `${kind} ${plugins.map((p) => p.pluginId)}`);
      }
    }
  });

  test('a 0x address with a bad EIP-55 checksum is reported as a bad checksum', async () => {
    const claimId = await claimWithPlugins(t, m.accessToken, [numUses(5)]);
    const good = '0x52908400098527886E0F7030069857D2E4169EE7'; // EIP-55 test vector
    const bad = '0x52908400098527886e0F7030069857D2E4169EE7';
    assert.equal((await attempt(t, 'simulate', claimId, good)).statusCode, 200);
    const res = await attempt(t, 'simulate', claimId, bad);
    assert.equal(res.statusCode, 400);
    assert.match(res.json().errorMessage, /EIP-55 checksum/);
    assert.match(
      res.json().errorMessage,
      /0x52908400098527886E0F7030069857D2E4169EE7/,
      'names the correctly checksummed form',
    );
    assert.doesNotMatch(res.json().errorMessage, /neither/);
  });

  test('plugin user inputs with unknown keys are refused with a 400 naming the key', async () => {
    const claimId = await claimWithPlugins(t, m.accessToken, [
      numUses(5),
      { pluginId: 'password', instanceId: 'pw', publicParams: {}, privateParams: { password: 'a' } },
    ]);
    const extra = await attempt(t, 'simulate', claimId, randomAddress(), { pw: { password: 'a', extra: 1 } });
    assert.equal(extra.statusCode, 400);
    assert.equal(extra.json().errorMessage, 'body.pw has unknown field "extra"');
    const codes = await claimWithPlugins(t, m.accessToken, [
      numUses(5),
      { pluginId: 'codes', instanceId: 'c', publicParams: { numCodes: 1 }, privateParams: { codes: ['x'] } },
    ]);
    const extraCode = await attempt(t, 'simulate', codes, randomAddress(), { c: { code: 'x', password: 'y' } });
    assert.equal(extraCode.statusCode, 400);
    assert.equal(extraCode.json().errorMessage, 'body.c has unknown field "password"');
    // a plugin without inputs takes none
    const none = await attempt(t, 'simulate', claimId, randomAddress(), { pw: { password: 'a' }, numUses: { x: 1 } });
    assert.equal(none.statusCode, 400);
    assert.equal(none.json().errorMessage, 'body.numUses has unknown field "x"');
    assert.equal((await attempt(t, 'simulate', claimId, randomAddress(), { pw: { password: 'a' } })).statusCode, 200);
  });

  test('store 403 texts are grammatical', async () => {
    const owner = await signInUser(t);
    const other = await signInUser(t);
    const s = await createStore(t, owner);
    const read = await t.request('GET', `/api/v0/dynamicStore/${s.dynamicDataId}`, { token: other.token });
    assert.equal(read.statusCode, 403);
    assert.equal(
      read.json().errorMessage,
      'Only the creator or manager of this store, or a caller presenting its dataSecret, can read this store',
    );
    const edit = await t.request('POST', '/api/v0/storeActions/single', {
      token: other.token,
      body: { dynamicDataId: s.dynamicDataId, actionName: 'add', payload: { address: randomAddress() } },
    });
    assert.equal(edit.statusCode, 403);
    assert.equal(
      edit.json().errorMessage,
      'Only the creator or manager of this store, or a caller presenting its dataSecret, can edit this store',
    );
  });
});

describe('request bodies', () => {
  let t: TestApp;
  let m: SignedIn;
  before(async () => {
    t = await startApp({ listen: true });
    m = await manager(t);
  });
  after(() => t.close());

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const json = async (res: Response) => (await res.json()) as Record<string, any>;
  // bytes, not a string: fetch adds no content type of its own to those
  const post = (path: string, headers: Record<string, string>, body?: string) =>
    fetch(t.url + path, {
      method: 'POST',
      headers: { 'x-api-key': t.apiKey, ...headers },
      ...(body !== undefined ? { body: new TextEncoder().encode(body) } : {}),
    });

  test('an empty body with content-type application/json is {} where the body is optional', async () => {
    const res = await post(
      '/api/v0/auth/status',
      { 'content-type': 'application/json', authorization: `Bearer ${m.accessToken}` },
      '',
    );
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal((await json(res)).signedIn, true);
  });

  test('an empty JSON body where fields are required: a 400 in our shape saying the body is empty', async () => {
    const res = await post(
      '/api/v0/claims',
      { 'content-type': 'application/json', authorization: `Bearer ${m.accessToken}` },
      '',
    );
    assert.equal(res.status, 400);
    const body = await json(res);
    assert.deepEqual(Object.keys(body), ['errorMessage']);
    assert.match(body.errorMessage, /empty/);
    assert.match(body.errorMessage, /"claims"/);
  });

  test('a JSON body without a JSON content type (curl -d) is a 415 saying JSON is expected', async () => {
    const body = JSON.stringify({ claims: [] });
    for (const headers of [
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'text/plain' },
      {},
    ] as Record<string, string>[]) {
      const res = await post('/api/v0/claims', { authorization: `Bearer ${m.accessToken}`, ...headers }, body);
      assert.equal(res.status, 415, JSON.stringify(headers));
      const { errorMessage } = await json(res);
      assert.match(errorMessage, /content-type: application\/json/);
      if (!headers['content-type']) assert.match(errorMessage, /^Missing content type/);
    }
  });
});

describe('refresh rotation resets expirations (docs/signin.md)', () => {
  const refreshBody = (client: { clientId: string; clientSecret: string }, refresh_token: string) => ({
    grant_type: 'refresh_token',
    refresh_token,
    client_id: client.clientId,
    client_secret: client.clientSecret,
  });

  test('each rotation gives a refresh token valid for the full lifetime from now; no absolute cap by default', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const t = await startApp({ clock });
    try {
      const { code, client } = await authorizeCode(t);
      let tokens = (await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) })).json();
      for (let i = 0; i < 4; i++) {
        clock.advance(50 * DAY); // 200 days in all: past any 60-day family end
        const res = await t.request('POST', TOKEN, { body: refreshBody(client, tokens.refresh_token) });
        assert.equal(res.statusCode, 200, res.body);
        tokens = res.json();
        assert.equal(Number(tokens.refresh_token_expires_at), clock.now() + 60 * DAY);
        assert.equal(Number(tokens.access_token_expires_at), clock.now() + DAY);
      }
    } finally {
      await t.close();
    }
  });

  test('SIGNIN_SESSION_MAX_AGE_DAYS caps a token family from its first grant', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const t = await startApp({ clock, env: { SIGNIN_SESSION_MAX_AGE_DAYS: '90' } });
    try {
      const start = clock.now();
      const { code, client } = await authorizeCode(t);
      let tokens = (await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) })).json();
      clock.advance(50 * DAY);
      tokens = (await t.request('POST', TOKEN, { body: refreshBody(client, tokens.refresh_token) })).json();
      assert.equal(Number(tokens.refresh_token_expires_at), start + 90 * DAY, 'the cap bounds the reset');
      clock.advance(40 * DAY);
      const late = await t.request('POST', TOKEN, { body: refreshBody(client, tokens.refresh_token) });
      assert.equal(late.statusCode, 400);
      assert.equal(late.json().error, 'invalid_grant');
    } finally {
      await t.close();
    }
  });
});
