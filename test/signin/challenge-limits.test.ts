// The public challenge route stores a row per call: it is limited per IP and per app, one call
// stores a bounded row, and unused challenges are purged once they expire.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { startApp } from '../helpers/app.ts';
import { createTestClient, testAccount, type TestClient } from '../helpers/signin.ts';
import type { ManualClock } from '../../src/shared/clock.ts';
import { sweepSigninRequests } from '../../src/signin/cleanup.ts';

const CHALLENGE = '/api/v0/signin/challenge';

describe('challenge limits', () => {
  let client: TestClient;
  let other: TestClient;
  const t = useApp({
    clock: true,
    env: { SIGNIN_CHALLENGE_LIMIT_PER_IP: '5', SIGNIN_CHALLENGE_LIMIT_PER_CLIENT: '8' },
  });
  before(async () => {
    (t.clock as ManualClock).set(1_800_000_000_000 - (1_800_000_000_000 % 60_000) + 1000);
    client = await createTestClient(t);
    other = await createTestClient(t);
  });

  const challenge = (c: TestClient, ip: string, extra: Record<string, unknown> = {}) =>
    t.app.inject({
      method: 'POST',
      url: CHALLENGE,
      remoteAddress: ip,
      payload: {
        client_id: c.clientId,
        redirect_uri: c.redirectUri,
        scope: 'completeClaims',
        address: testAccount().address,
        ...extra,
      },
    });
  const rows = async () =>
    (
      await t.ctx.db
        .selectFrom('signin_requests')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n;

  test('per IP: the budget of one address is spent, others are served', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await challenge(client, '10.2.0.1')).statusCode, 200);
    const before = Number(await rows());
    const refused = await challenge(client, '10.2.0.1');
    assert.equal(refused.statusCode, 429);
    assert.match(refused.json().errorMessage, /from this IP address/);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal(Number(await rows()), before, 'a refused call stores nothing');
    assert.equal((await challenge(client, '10.2.0.2')).statusCode, 200);
  });

  test('per app: the budget of one app is spent across IPs; another app is served; unknown apps spend nothing', async () => {
    (t.clock as ManualClock).advance(60_000); // a fresh window
    for (let i = 0; i < 5; i++)
      assert.equal((await challenge(other, '10.3.0.1', { client_id: 'no-such-client' })).statusCode, 400);
    for (let i = 0; i < 8; i++) assert.equal((await challenge(client, `10.4.0.${i}`)).statusCode, 200);
    const refused = await challenge(client, '10.4.1.1');
    assert.equal(refused.statusCode, 429);
    assert.match(refused.json().errorMessage, /for this app/);
    assert.equal((await challenge(other, '10.4.1.1')).statusCode, 200);
  });

  test('one call stores a bounded row: at most 4 KB of text with every input at its limit', async () => {
    (t.clock as ManualClock).advance(60_000);
    const res = await challenge(client, '10.5.0.1', {
      scope: 'completeClaims readPrivateClaimData manageClaims manageDynamicStores manageDeveloperApps',
      state: 's'.repeat(1024),
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    assert.equal(res.statusCode, 200, res.body);
    const tooLong = await challenge(client, '10.5.0.1', { state: 's'.repeat(1025) });
    assert.equal(tooLong.statusCode, 400);
    const row = await t.ctx.db
      .selectFrom('signin_requests')
      .selectAll()
      .where('request_id', '=', res.json().requestId)
      .executeTakeFirstOrThrow();
    const size = Object.values(row).reduce<number>((n, v) => n + String(v ?? '').length, 0);
    assert.ok(size <= 4096, `row holds ${size} characters`);
  });

  test('challenges are purged once expired; an approve then finds nothing', async () => {
    (t.clock as ManualClock).advance(60_000);
    const res = await challenge(client, '10.6.0.1');
    const { requestId } = res.json();
    (t.clock as ManualClock).advance(10 * 60_000 - 1);
    await sweepSigninRequests(t.ctx);
    assert.ok(
      await t.ctx.db
        .selectFrom('signin_requests')
        .select('request_id')
        .where('request_id', '=', requestId)
        .executeTakeFirst(),
      'kept until it expires',
    );
    (t.clock as ManualClock).advance(1);
    await sweepSigninRequests(t.ctx);
    assert.equal(Number(await rows()), 0, 'every challenge made above has expired and is gone');
    const approve = await t.request('POST', '/api/v0/signin/approve', {
      apiKey: null,
      body: { requestId, signature: '0x' + '11'.repeat(65) },
    });
    assert.equal(approve.statusCode, 404);
  });
});

describe('behind a reverse proxy (TRUST_PROXY)', () => {
  test('per-IP limits key on X-Forwarded-For from a trusted proxy, and on the peer otherwise', async () => {
    for (const [trust, separate] of [
      ['127.0.0.1', true],
      ['false', false],
    ] as const) {
      const t = await startApp({ env: { TRUST_PROXY: trust, SIGNIN_CHALLENGE_LIMIT_PER_IP: '2' } });
      try {
        const client = await createTestClient(t);
        const from = (ip: string) =>
          t.app.inject({
            method: 'POST',
            url: CHALLENGE,
            remoteAddress: '127.0.0.1',
            headers: { 'x-forwarded-for': ip },
            payload: { client_id: client.clientId, redirect_uri: client.redirectUri, address: testAccount().address },
          });
        assert.equal((await from('203.0.113.1')).statusCode, 200);
        assert.equal((await from('203.0.113.1')).statusCode, 200);
        assert.equal((await from('203.0.113.1')).statusCode, 429, `TRUST_PROXY=${trust}`);
        // another client behind the proxy has its own budget only when the proxy is trusted
        assert.equal((await from('203.0.113.2')).statusCode, separate ? 200 : 429, `TRUST_PROXY=${trust}`);
      } finally {
        await t.close();
      }
    }
  });

  test('a bad TRUST_PROXY names the variable', async () => {
    const { loadConfig } = await import('../../src/config.ts');
    const keys = { SECRET_KEY: 'ab'.repeat(32), LEAF_SIGNER_KEY: '01'.padStart(64, '0') }; // no files written
    assert.throws(() => loadConfig({ ...keys, TRUST_PROXY: 'proxy.example' }), /TRUST_PROXY/);
    assert.deepEqual(loadConfig({ ...keys, TRUST_PROXY: '10.0.0.0/8, 192.168.1.1' }).trustProxy, [
      '10.0.0.0/8',
      '192.168.1.1',
    ]);
  });
});
