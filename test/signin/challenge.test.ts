// The authorization step over HTTP: challenge (EIP-4361 message) and approve (wallet signature).
import { before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { privateKeyToAccount } from 'viem/accounts';
import { parseSiweMessage, validateSiweMessage } from 'viem/siwe';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { base64, bech32 } from '@scure/base';
import { codeExchangeBody, createTestClient, testAccount, testClient, type TestClient } from '../helpers/signin.ts';
import type { ManualClock } from '../../src/shared/clock.ts';

const CHALLENGE = '/api/v0/signin/challenge';
const APPROVE = '/api/v0/signin/approve';

async function challenge(t: TestApp, body: Record<string, unknown>) {
  return t.request('POST', CHALLENGE, { apiKey: null, body });
}

describe('challenge and approve (EVM, EIP-191)', () => {
  let client: TestClient;
  let clock: ManualClock;
  const t = useApp({ clock: true, env: { PUBLIC_URL: 'https://signin.example:8443' } });
  before(async () => {
    clock = t.clock as ManualClock;
    client = await testClient(t);
  });

  async function start(account = testAccount(), extra: Record<string, unknown> = {}) {
    const body = {
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      scope: 'completeClaims,manageClaims',
      state: 'st-1',
      address: account.address,
      ...extra,
    };
    const res = await t.post(CHALLENGE, { apiKey: null, body });
    assert.equal(res.statusCode, 200, res.body);
    return { account, ...res.json() };
  }
  const sign = (pk: `0x${string}`, message: string) => privateKeyToAccount(pk).signMessage({ message });

  test('the message is a complete EIP-4361 message that viem parses and validates', async () => {
    const { account, requestId, message, expiresAt } = await start();
    const m = parseSiweMessage(message);
    assert.equal(m.domain, 'signin.example:8443');
    assert.equal(m.scheme, undefined, 'https is implied');
    assert.equal(m.address, account.address);
    assert.equal(m.uri, 'https://signin.example:8443/signin/authorize');
    assert.equal(m.version, '1');
    assert.equal(m.chainId, 1);
    assert.match(m.nonce!, /^[a-zA-Z0-9]{16,}$/);
    assert.equal(m.requestId, requestId);
    assert.equal(m.issuedAt!.getTime(), clock.now());
    assert.equal(m.expirationTime!.getTime(), clock.now() + 10 * 60_000);
    assert.equal(String(m.expirationTime!.getTime()), expiresAt);
    assert.match(m.statement!, /Test App/);
    assert.match(m.statement!, /Complete Claims, Manage Claims/);
    assert.equal(
      validateSiweMessage({
        message: m,
        domain: 'signin.example:8443',
        nonce: m.nonce!,
        address: account.address as `0x${string}`,
        time: new Date(clock.now()),
      }),
      true,
    );
    const again = await start(account);
    assert.notEqual(parseSiweMessage(again.message).nonce, m.nonce, 'a fresh nonce every time');
  });

  test('approve returns the code, the state and the redirect URL; the code exchanges once', async () => {
    const { account, requestId, message } = await start();
    const res = await t.request('POST', APPROVE, {
      apiKey: null,
      body: { requestId, signature: await sign(account.privateKey, message) },
    });
    assert.equal(res.statusCode, 200, res.body);
    const { code, state, redirectUrl } = res.json();
    assert.match(code, /^[0-9a-f]{64}$/);
    assert.equal(state, 'st-1');
    const u = new URL(redirectUrl);
    assert.equal(u.origin + u.pathname, client.redirectUri);
    assert.equal(u.searchParams.get('code'), code);
    assert.equal(u.searchParams.get('state'), 'st-1');
    const tok = await t.request('POST', '/api/v0/signin/token', { body: codeExchangeBody(client, code) });
    assert.equal(tok.statusCode, 200, tok.body);
    assert.equal(tok.json().address, account.address);
    // only hashes are stored
    const row = await t.ctx.db
      .selectFrom('signin_authorizations')
      .selectAll()
      .where('address', '=', account.address)
      .executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(code));
  });

  test('a lowercase address is accepted and signed in its EIP-55 form; a bad checksum is refused', async () => {
    const account = testAccount();
    const { message } = await start(account, { address: account.address.toLowerCase() });
    assert.equal(message.split('\n')[1], account.address);
    // Hardhat #0 with one checksum letter flipped (F -> f): still mixed case, so the checksum applies
    const res = await challenge(t, {
      client_id: client.clientId,
      address: '0xf39fd6e51aad88F6F4ce6aB8827279cffFb92266',
    });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().errorMessage, /Invalid address/);
    assert.equal((await challenge(t, { client_id: client.clientId, address: 'nope' })).statusCode, 400);
  });

  test('SIWE negatives: wrong domain, wrong nonce, altered statement, other signer are refused and do not burn the request', async () => {
    const { account, requestId, message } = await start();
    const nonce = parseSiweMessage(message).nonce!;
    const altered = [
      message.replace('signin.example:8443 wants', 'evil.example wants'),
      message.replace(`Nonce: ${nonce}`, `Nonce: ${'a'.repeat(nonce.length)}`),
      message.replace('Sign in to Test App', 'Sign in to Evil App'),
      message.replace('Request ID: ', 'Request ID: x'),
    ];
    for (const m of altered) {
      assert.notEqual(m, message);
      const res = await t.request('POST', APPROVE, {
        apiKey: null,
        body: { requestId, signature: await sign(account.privateKey, m) },
      });
      assert.equal(res.statusCode, 401, res.body);
      assert.match(res.json().errorMessage, /Signature does not match/);
    }
    const other = testAccount();
    assert.equal(
      (
        await t.request('POST', APPROVE, {
          apiKey: null,
          body: { requestId, signature: await sign(other.privateKey, message) },
        })
      ).statusCode,
      401,
    );
    assert.equal(
      (await t.request('POST', APPROVE, { apiKey: null, body: { requestId, signature: '0x1234' } })).statusCode,
      400,
    );
    const ok = await t.request('POST', APPROVE, {
      apiKey: null,
      body: { requestId, signature: await sign(account.privateKey, message) },
    });
    assert.equal(ok.statusCode, 200, ok.body);
  });

  test('a nonce is consumed exactly once: reuse and parallel approvals give one code', async () => {
    const { account, requestId, message } = await start();
    const signature = await sign(account.privateKey, message);
    const results = await Promise.all(
      [0, 1, 2, 3, 4].map(() => t.request('POST', APPROVE, { apiKey: null, body: { requestId, signature } })),
    );
    assert.equal(results.filter((r) => r.statusCode === 200).length, 1, results.map((r) => r.statusCode).join(','));
    for (const r of results.filter((r) => r.statusCode !== 200)) {
      assert.equal(r.statusCode, 400);
      assert.match(r.json().errorMessage, /already used/);
    }
    const later = await t.request('POST', APPROVE, { apiKey: null, body: { requestId, signature } });
    assert.equal(later.statusCode, 400);
    assert.equal(
      (await t.request('POST', APPROVE, { apiKey: null, body: { requestId: 'f'.repeat(32), signature } })).statusCode,
      404,
    );
  });

  test('an expired message is refused (10 minutes, controllable clock)', async () => {
    const { account, requestId, message } = await start();
    const signature = await sign(account.privateKey, message);
    clock.advance(10 * 60_000);
    const res = await t.request('POST', APPROVE, { apiKey: null, body: { requestId, signature } });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().errorMessage, /expired/);
  });

  test('the request must still hold when approving: app deleted, redirect URI unregistered, app renamed', async () => {
    const other = await createTestClient(t, {
      name: 'Temp App',
      redirectUris: ['https://temp.example/cb', 'https://temp.example/cb2'],
    });
    const account = testAccount();
    const mk = async (redirect: string) => {
      const r = await challenge(t, { client_id: other.clientId, redirect_uri: redirect, address: account.address });
      return r.json() as { requestId: string; message: string };
    };
    const a = await mk('https://temp.example/cb2');
    const b = await mk('https://temp.example/cb');
    await t.ctx.db
      .updateTable('signin_apps')
      .set({ redirect_uris: JSON.stringify(['https://temp.example/cb']) })
      .where('client_id', '=', other.clientId)
      .execute();
    const ra = await t.request('POST', APPROVE, {
      apiKey: null,
      body: { requestId: a.requestId, signature: await sign(account.privateKey, a.message) },
    });
    assert.equal(ra.statusCode, 400);
    assert.match(ra.json().errorMessage, /no longer registered/);
    await t.ctx.db
      .updateTable('signin_apps')
      .set({ name: 'Renamed' })
      .where('client_id', '=', other.clientId)
      .execute();
    const rb = await t.request('POST', APPROVE, {
      apiKey: null,
      body: { requestId: b.requestId, signature: await sign(account.privateKey, b.message) },
    });
    assert.equal(rb.statusCode, 400);
    await t.ctx.db.deleteFrom('signin_apps').where('client_id', '=', other.clientId).execute();
    const rc = await t.request('POST', APPROVE, {
      apiKey: null,
      body: { requestId: b.requestId, signature: await sign(account.privateKey, b.message) },
    });
    assert.equal(rc.statusCode, 400);
    assert.match(rc.json().errorMessage, /no longer exists/);
  });

  test('challenge validation: client, redirect URI, scopes, unknown fields; no API key needed', async () => {
    const address = testAccount().address;
    const unknownClient = await challenge(t, { client_id: 'nope', address });
    assert.equal(unknownClient.statusCode, 400);
    assert.equal(unknownClient.json().error, 'invalid_client');
    const badRedirect = await challenge(t, {
      client_id: client.clientId,
      redirect_uri: client.redirectUri + '/',
      address,
    });
    assert.equal(badRedirect.statusCode, 400);
    assert.match(badRedirect.json().errorMessage, /redirect_uri/);
    const badScope = await challenge(t, { client_id: client.clientId, scope: 'completeClaims fullAccess', address });
    assert.equal(badScope.statusCode, 400);
    assert.equal(badScope.json().error, 'invalid_scope');
    assert.match(badScope.json().errorMessage, /fullAccess/);
    const spaced = await challenge(t, {
      client_id: client.clientId,
      scope: ' completeClaims  readPrivateClaimData,manageClaims ',
      address,
    });
    assert.equal(spaced.statusCode, 200);
    assert.match(spaced.json().message, /Complete Claims, Read Private Claim Data, Manage Claims/);
    const none = await challenge(t, { client_id: client.clientId, address });
    assert.match(none.json().message, /No scopes requested/);
    const extra = await challenge(t, { client_id: client.clientId, address, surprise: 1 });
    assert.equal(extra.statusCode, 400);
  });
});

describe('challenge and approve (native address, ADR-36)', () => {
  let client: TestClient;
  const t = useApp();
  before(async () => {
    client = await testClient(t);
  });

  /** Keplr signArbitrary, written out independently of the code under test. */
  function keplrSign(
    priv: Uint8Array,
    signer: string,
    message: string,
    algo: 'secp256k1' | 'ethsecp256k1',
    o: { memo?: string } = {},
  ) {
    const data = Buffer.from(message, 'utf8').toString('base64');
    const doc = new TextEncoder().encode(
      `{"account_number":"0","chain_id":"","fee":{"amount":[],"gas":"0"},"memo":"${o.memo ?? ''}","msgs":[{"type":"sign/MsgSignData","value":{"data":"${data}","signer":"${signer}"}}],"sequence":"0"}`,
    );
    const sig =
      algo === 'secp256k1' ? secp256k1.sign(doc, priv) : secp256k1.sign(keccak_256(doc), priv, { prehash: false });
    return { signature: base64.encode(sig), publicKey: base64.encode(secp256k1.getPublicKey(priv, true)) };
  }
  function nativeAddress(priv: Uint8Array, algo: 'secp256k1' | 'ethsecp256k1'): string {
    const pub = secp256k1.getPublicKey(priv, true);
    const bytes =
      algo === 'secp256k1'
        ? ripemd160(sha256(pub))
        : keccak_256(secp256k1.getPublicKey(priv, false).slice(1)).slice(-20);
    return bech32.encode('bb', bech32.toWords(bytes));
  }

  for (const algo of ['secp256k1', 'ethsecp256k1'] as const) {
    test(`a ${algo} Keplr signature signs in the bech32 address`, async () => {
      const priv = secp256k1.utils.randomSecretKey();
      const address = nativeAddress(priv, algo);
      const ch = await challenge(t, {
        client_id: client.clientId,
        redirect_uri: client.redirectUri,
        scope: 'completeClaims',
        address,
      });
      assert.equal(ch.statusCode, 200, ch.body);
      const { requestId, message } = ch.json();
      assert.equal(
        message.split('\n')[0],
        `127.0.0.1:${t.config.port} wants you to sign in with your Cosmos account:`.replace(/^/, 'http://'),
      );
      assert.equal(message.split('\n')[1], address);

      const { signature, publicKey } = keplrSign(priv, address, message, algo);
      const noKey = await t.request('POST', APPROVE, { apiKey: null, body: { requestId, signature } });
      assert.equal(noKey.statusCode, 400);
      assert.match(noKey.json().errorMessage, /publicKey is required/);
      const foreign = base64.encode(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true));
      const wrongKey = await t.request('POST', APPROVE, {
        apiKey: null,
        body: { requestId, signature, publicKey: foreign },
      });
      assert.equal(wrongKey.statusCode, 401);
      assert.match(wrongKey.json().errorMessage, /does not derive/);
      const memo = keplrSign(priv, address, message, algo, { memo: 'x' });
      assert.equal((await t.request('POST', APPROVE, { apiKey: null, body: { requestId, ...memo } })).statusCode, 401);

      const ok = await t.request('POST', APPROVE, { apiKey: null, body: { requestId, signature, publicKey } });
      assert.equal(ok.statusCode, 200, ok.body);
      const tok = await t.request('POST', '/api/v0/signin/token', { body: codeExchangeBody(client, ok.json().code) });
      assert.equal(tok.statusCode, 200, tok.body);
      const body = tok.json();
      assert.equal(body.chain, 'Cosmos');
      assert.equal(body.address, address);
      assert.equal(body.platformAddress, address);
      const st = (await t.request('POST', '/api/v0/auth/status', { token: body.access_token, body: {} })).json();
      assert.equal(st.chain, 'Cosmos');
      assert.equal(st.platformAddress, address);
    });
  }

  test('an EVM signature cannot approve a native request', async () => {
    const account = testAccount();
    const ch = (await challenge(t, { client_id: client.clientId, address: account.platformAddress })).json();
    const signature = await privateKeyToAccount(account.privateKey).signMessage({ message: ch.message });
    const res = await t.request('POST', APPROVE, { apiKey: null, body: { requestId: ch.requestId, signature } });
    assert.equal(res.statusCode, 400);
  });
});
