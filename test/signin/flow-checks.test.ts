// Pins each check of the sign-in flow (src/signin/flow.ts, message.ts, challenge-limits.ts) that
// mutation testing found unguarded, with its exact answer: the authorize-request refusals (and which
// of them the authorize page redirects with), the approve refusals, the approval answer with and
// without redirect URI and state, the conditional consume of two approvals that both passed the
// checks, and every field of the stored signed message against the stored request and this service
// (the row is altered, the altered text signed by the wallet, so only that one check can refuse it).
// The app runs with both challenge limits at 0, which means no limit.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { getAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createTestClient, testAccount, testClient, type TestAccount, type TestClient } from '../helpers/signin.ts';
import { SCOPE_IDS } from '../../src/signin/scopes.ts';
import { HIGH_S_REASON } from '../../src/signin/verify.ts';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import type { ManualClock } from '../../src/shared/clock.ts';

const CHALLENGE = '/api/v0/signin/challenge';
const APPROVE = '/api/v0/signin/approve';
const ORIGIN = 'https://signin.example:8443';
const S256 = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'; // 43 base64url characters

const ALREADY_USED = { errorMessage: 'This sign-in request was already used. Start a new sign-in.' };
const NO_LONGER_MATCHES = {
  errorMessage:
    'The sign-in request no longer matches this service or app (domain, URI or app name changed). Start a new sign-in.',
};

describe('sign-in flow checks', () => {
  let clock: ManualClock;
  let client: TestClient;
  const t = useApp({
    clock: true,
    env: { PUBLIC_URL: ORIGIN, SIGNIN_CHALLENGE_LIMIT_PER_IP: '0', SIGNIN_CHALLENGE_LIMIT_PER_CLIENT: '0' },
  });
  before(async () => {
    clock = t.clock as ManualClock;
    client = await testClient(t);
  });

  const challenge = (body: Record<string, unknown>) => t.request('POST', CHALLENGE, { apiKey: null, body });
  const approve = (requestId: string, signature: string) =>
    t.post(APPROVE, { apiKey: null, body: { requestId, signature } });
  const sign = (account: TestAccount, message: string) =>
    privateKeyToAccount(account.privateKey).signMessage({ message });
  const page = (q: Record<string, string>) =>
    t.request('GET', `/signin/authorize?${new URLSearchParams(q)}`, { apiKey: null });

  /** A stored request of a fresh wallet (redirect URI and state unless overridden). */
  async function start(extra: Record<string, unknown> = {}) {
    const account = testAccount();
    const body = {
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      scope: 'completeClaims',
      state: 'st-1',
      address: account.address,
      ...extra,
    };
    const res = await t.post(CHALLENGE, { apiKey: null, body });
    assert.equal(res.statusCode, 200, res.body);
    const { requestId, message } = res.json();
    return { account, requestId, message };
  }

  test('a limit of 0 per IP and per app means no limit', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: CHALLENGE,
        remoteAddress: '10.9.0.1',
        payload: { client_id: client.clientId, redirect_uri: client.redirectUri, address: testAccount().address },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(Object.keys(res.json()).sort(), ['expiresAt', 'message', 'requestId']);
    }
  });

  test('authorize-request refusals: each answers its OAuth error and exact text', async () => {
    const address = testAccount().address;
    const refreshOnly = await createTestClient(t, { grantTypes: ['refresh_token'] });
    const base = { client_id: client.clientId, redirect_uri: client.redirectUri, address };
    const cases: [string, Record<string, unknown>, { errorMessage: string; error: string }][] = [
      [
        'unknown client',
        { ...base, client_id: 'no-such-client' },
        { errorMessage: 'Invalid client_id: no developer app has this client ID.', error: 'invalid_client' },
      ],
      [
        'unregistered redirect URI',
        { ...base, redirect_uri: client.redirectUri + '/' },
        {
          errorMessage: 'Invalid redirect_uri: it is not one of the redirect URIs registered for this app.',
          error: 'invalid_request',
        },
      ],
      [
        'an app without the authorization_code grant',
        { ...base, client_id: refreshOnly.clientId },
        { errorMessage: 'This app may not use the authorization_code grant.', error: 'unauthorized_client' },
      ],
      [
        'two unknown scopes among known ones, comma and space separated',
        { ...base, scope: 'completeClaims,fullAccess  root' },
        {
          errorMessage: `Unknown scope(s): fullAccess, root. Known scopes: ${SCOPE_IDS.join(', ')}`,
          error: 'invalid_scope',
        },
      ],
      [
        'code_challenge_method without code_challenge',
        { ...base, code_challenge_method: 'S256' },
        { errorMessage: 'code_challenge_method was given without code_challenge.', error: 'invalid_request' },
      ],
      [
        'code_challenge of 42 characters',
        { ...base, code_challenge: S256.slice(1), code_challenge_method: 'S256' },
        {
          errorMessage: 'code_challenge must be the 43-character base64url SHA-256 of the code verifier.',
          error: 'invalid_request',
        },
      ],
      [
        'code_challenge with a character before 43 valid ones',
        { ...base, code_challenge: '.' + S256, code_challenge_method: 'S256' },
        {
          errorMessage: 'code_challenge must be the 43-character base64url SHA-256 of the code verifier.',
          error: 'invalid_request',
        },
      ],
      [
        'code_challenge with a character after 43 valid ones',
        { ...base, code_challenge: S256 + '.', code_challenge_method: 'S256' },
        {
          errorMessage: 'code_challenge must be the 43-character base64url SHA-256 of the code verifier.',
          error: 'invalid_request',
        },
      ],
    ];
    for (const [name, body, expected] of cases) {
      const res = await challenge(body);
      assert.deepEqual([res.statusCode, res.json()], [400, expected], name);
    }
    // the same scopes, and a valid S256 challenge, are accepted
    const ok = await challenge({
      ...base,
      scope: 'completeClaims,manageClaims  readPrivateClaimData',
      code_challenge: S256,
      code_challenge_method: 'S256',
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(
      ok.json().message.split('\n')[3],
      'Sign in to Test App with signin.example:8443. Scopes requested: Complete Claims, Manage Claims, Read Private Claim Data. Sign only if you started this sign-in.',
    );
  });

  test('the authorize page redirects with the refusals that come after client and redirect URI', async () => {
    const refreshOnly = await createTestClient(t, { grantTypes: ['refresh_token'] });
    const q = { response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUri, state: 'st-2' };
    const cases: [Record<string, string>, string, string][] = [
      [
        { ...q, client_id: refreshOnly.clientId },
        'unauthorized_client',
        'This app may not use the authorization_code grant.',
      ],
      [
        { ...q, code_challenge: S256 + '.', code_challenge_method: 'S256' },
        'invalid_request',
        'code_challenge must be the 43-character base64url SHA-256 of the code verifier.',
      ],
      [
        { ...q, code_challenge_method: 'S256' },
        'invalid_request',
        'code_challenge_method was given without code_challenge.',
      ],
    ];
    for (const [query, error, description] of cases) {
      const res = await page(query);
      assert.equal(res.statusCode, 302, `${description}: ${res.body}`);
      assert.equal(
        res.headers.location,
        `${client.redirectUri}?${new URLSearchParams({ error, error_description: description, state: 'st-2' })}`,
      );
    }
  });

  test('the approval answers the code, and the state and redirect URL only when the request had them', async () => {
    const cases: [Record<string, unknown>, (code: string) => Record<string, string>][] = [
      [{ redirect_uri: undefined, state: undefined }, (code) => ({ code })],
      [{ redirect_uri: undefined, state: 's 1&x' }, (code) => ({ code, state: 's 1&x' })],
      [{ state: undefined }, (code) => ({ code, redirectUrl: `${client.redirectUri}?code=${code}` })],
      [
        { state: 's 1&x' },
        (code) => ({ code, state: 's 1&x', redirectUrl: `${client.redirectUri}?code=${code}&state=s+1%26x` }),
      ],
    ];
    for (const [extra, expected] of cases) {
      const { account, requestId, message } = await start(extra);
      const res = await approve(requestId, await sign(account, message));
      assert.equal(res.statusCode, 200, res.body);
      const { code } = res.json();
      assert.match(code, /^[0-9a-f]{64}$/);
      assert.deepEqual(res.json(), expected(code), JSON.stringify(extra));
    }
  });

  test('approve refusals: unknown request, malformed signature, redirect URI removed, invalid stored address, a signer off by one byte', async () => {
    const { account, requestId, message } = await start();
    const signature = await sign(account, message);
    const unknown = await approve('f'.repeat(32), signature);
    assert.deepEqual(
      [unknown.statusCode, unknown.json()],
      [404, { errorMessage: 'Unknown sign-in request. Start a new sign-in.' }],
    );
    const malformed = await approve(requestId, '0x1234');
    assert.deepEqual(
      [malformed.statusCode, malformed.json()],
      [400, { errorMessage: 'Invalid signature: expected a 0x-prefixed 65-byte personal_sign signature.' }],
    );
    // the high-S twin (r, n - s, other v) of the valid signature is well formed: it is refused for what it is
    const s = secp256k1.Signature.fromBytes(hexToBytes(signature.slice(2, 130)), 'compact');
    const twin =
      '0x' +
      bytesToHex(new secp256k1.Signature(s.r, secp256k1.Point.CURVE().n - s.s).toBytes('compact')) +
      (signature.endsWith('1b') ? '1c' : '1b');
    const highS = await approve(requestId, twin);
    assert.deepEqual([highS.statusCode, highS.json()], [400, { errorMessage: `Invalid signature: ${HIGH_S_REASON}.` }]);

    // the app's redirect URI is removed after the challenge
    const temp = await createTestClient(t, {
      name: 'Temp App',
      redirectUris: ['https://temp.example/cb', 'https://temp.example/cb2'],
    });
    const removed = await challenge({
      client_id: temp.clientId,
      redirect_uri: 'https://temp.example/cb2',
      address: account.address,
    });
    await t.ctx.db
      .updateTable('signin_apps')
      .set({ redirect_uris: JSON.stringify(['https://temp.example/cb']) })
      .where('client_id', '=', temp.clientId)
      .execute();
    const r = await approve(removed.json().requestId, await sign(account, removed.json().message));
    assert.deepEqual(
      [r.statusCode, r.json()],
      [400, { errorMessage: 'The redirect URI of this sign-in request is no longer registered for the app.' }],
    );

    // an invalid address stored in the request (and in its message, so that they agree)
    const bad = await start();
    const badMessage = bad.message.replace(bad.account.address, 'not-an-address');
    await sql`update signin_requests set address = ${'not-an-address'}, message = ${badMessage} where request_id = ${bad.requestId}`.execute(
      t.ctx.db,
    );
    const invalid = await approve(bad.requestId, await sign(bad.account, badMessage));
    assert.deepEqual(
      [invalid.statusCode, invalid.json()],
      [400, { errorMessage: 'The sign-in request holds an invalid address.' }],
    );

    // the stored address differs from the wallet's in one byte only (first, then last): 19 of 20 bytes match
    for (const at of [0, 19]) {
      const near = await start();
      const hex = near.account.address.slice(2).toLowerCase();
      const flipped = (parseInt(hex.slice(at * 2, at * 2 + 2), 16) ^ 1).toString(16).padStart(2, '0');
      const other = getAddress(`0x${hex.slice(0, at * 2)}${flipped}${hex.slice(at * 2 + 2)}`);
      const nearMessage = near.message.replace(near.account.address, other);
      await sql`update signin_requests set address = ${other}, message = ${nearMessage} where request_id = ${near.requestId}`.execute(
        t.ctx.db,
      );
      const res = await approve(near.requestId, await sign(near.account, nearMessage));
      assert.deepEqual(
        [res.statusCode, res.json()],
        [401, { errorMessage: `Signature does not match the sign-in message for ${other}.`, unauthorized: true }],
        `byte ${at}`,
      );
    }
  });

  test('a used request is refused as used before anything else is checked, even once expired', async () => {
    const { account, requestId, message } = await start();
    const signature = await sign(account, message);
    assert.equal((await approve(requestId, signature)).statusCode, 200);
    const again = await approve(requestId, signature);
    assert.deepEqual([again.statusCode, again.json()], [400, ALREADY_USED]);
    clock.advance(10 * 60_000);
    const expired = await approve(requestId, signature);
    assert.deepEqual([expired.statusCode, expired.json()], [400, ALREADY_USED]);
  });

  test('two approvals that both passed the checks: the conditional consume lets one mint a code', async () => {
    const { account, requestId, message } = await start();
    const signature = await sign(account, message);
    // Hold the first approval between its checks and its transaction, and run a second approval of
    // the same request to the end meanwhile: the race of two approvals, made deterministic.
    const db = t.ctx.db;
    const realTransaction = db.transaction;
    let second: Awaited<ReturnType<typeof approve>> | undefined;
    db.transaction = (() => {
      const builder = realTransaction.call(db);
      // only the first approval's consume is held (any other transaction meanwhile passes through)
      if (!new Error().stack?.includes('/signin/flow.ts')) return builder;
      Reflect.deleteProperty(db, 'transaction');
      return new Proxy(builder, {
        get(target, prop, receiver) {
          if (prop !== 'execute') return Reflect.get(target, prop, receiver);
          return async (fn: Parameters<typeof builder.execute>[0]) => {
            second = await approve(requestId, signature);
            return builder.execute(fn);
          };
        },
      });
    }) as typeof db.transaction;
    const first = await approve(requestId, signature).finally(() => Reflect.deleteProperty(db, 'transaction'));
    assert.equal(second?.statusCode, 200, second?.body);
    assert.deepEqual(Object.keys(second!.json()), ['code', 'state', 'redirectUrl']);
    assert.deepEqual([first.statusCode, first.json()], [400, ALREADY_USED]);
    const rows = await t.ctx.db
      .selectFrom('signin_authorizations')
      .select('authorization_id')
      .where('address', '=', account.address)
      .execute();
    assert.equal(rows.length, 1, 'one code minted');
  });

  test('every field of the stored message must agree with the request and this service', async () => {
    const other = testAccount();
    // [name, the message as altered (the wallet signs it), or the columns to alter instead]
    type Alter = (m: { message: string; lines: string[] }) => string | Record<string, unknown>;
    const line =
      (i: number, text: string): Alter =>
      ({ lines }) =>
        lines.with(i, text).join('\n');
    const iso = (s: string, ms: number) => new Date(Date.parse(s) + ms).toISOString();
    const cases: [string, Alter][] = [
      // fields that parse but disagree
      ['scheme http', ({ lines }) => lines.with(0, `http://${lines[0]}`).join('\n')],
      [
        'domain without port',
        ({ lines }) => lines.with(0, lines[0]!.replace('signin.example:8443 ', 'signin.example ')).join('\n'),
      ],
      ['URI', line(5, `URI: ${ORIGIN}/signin/other`)],
      ['address of another wallet', line(1, other.address)],
      ['chain', ({ lines }) => lines.with(0, lines[0]!.replace('Ethereum', 'Cosmos')).join('\n')],
      ['Chain ID 5', line(7, 'Chain ID: 5')],
      [
        'nonce',
        ({ lines }) => lines.with(8, lines[8]!.slice(0, -1) + (lines[8]!.endsWith('0') ? '1' : '0')).join('\n'),
      ],
      [
        'request ID',
        ({ lines }) => lines.with(11, lines[11]!.slice(0, -1) + (lines[11]!.endsWith('0') ? '1' : '0')).join('\n'),
      ],
      ['Issued At one ms later', ({ lines }) => lines.with(9, `Issued At: ${iso(lines[9]!.slice(11), 1)}`).join('\n')],
      [
        'Expiration Time one ms earlier',
        ({ lines }) => lines.with(10, `Expiration Time: ${iso(lines[10]!.slice(17), -1)}`).join('\n'),
      ],
      ['statement', line(3, 'Sign in to Evil App.')],
      // stored columns that disagree with the message
      ['address column', () => ({ address: other.address })],
      ['nonce column', () => ({ nonce: 'a'.repeat(32) })],
      ['issued_at column', () => ({ issued_at: clock.now() - 1 })],
      ['expires_at column', () => ({ expires_at: clock.now() + 10 * 60_000 + 1 })],
      // texts that do not parse
      ['a 13th line', ({ message }) => `${message}\nResources:`],
      ['11 lines', ({ lines }) => lines.slice(0, 11).join('\n')],
      ['text before the first line', ({ lines }) => lines.with(0, `x ${lines[0]}`).join('\n')],
      ['text after the first line', ({ lines }) => lines.with(0, `${lines[0]} x`).join('\n')],
      ['first separator line not empty', line(2, ' ')],
      ['second separator line not empty', line(4, ' ')],
      ['URI label', ({ lines }) => lines.with(5, lines[5]!.replace('URI: ', 'URL: ')).join('\n')],
      ['Version 2', line(6, 'Version: 2')],
      ['Version label', line(6, 'Versiom: 1')],
      ['Chain ID label', line(7, 'Chain Id: 1')],
      ['Chain ID with a trailing space', line(7, 'Chain ID: 1 ')],
      ['Chain ID with a leading space', line(7, 'Chain ID:  1')],
      ['Chain ID not a number', line(7, 'Chain ID: one')],
      ['Nonce label', ({ lines }) => lines.with(8, lines[8]!.replace('Nonce: ', 'Nonse: ')).join('\n')],
      ['Issued At label', ({ lines }) => lines.with(9, lines[9]!.replace('Issued At: ', 'Issued On: ')).join('\n')],
      [
        'Expiration Time label',
        ({ lines }) => lines.with(10, lines[10]!.replace('Expiration Time: ', 'Expiration Date: ')).join('\n'),
      ],
      [
        'Request ID label',
        ({ lines }) => lines.with(11, lines[11]!.replace('Request ID: ', 'Request Id: ')).join('\n'),
      ],
    ];
    for (const [name, alter] of cases) {
      const { account, requestId, message } = await start();
      const altered = alter({ message, lines: message.split('\n') });
      let signed = message;
      if (typeof altered === 'string') {
        assert.notEqual(altered, message, name);
        await sql`update signin_requests set message = ${altered} where request_id = ${requestId}`.execute(t.ctx.db);
        signed = altered;
      } else {
        await t.ctx.db.updateTable('signin_requests').set(altered).where('request_id', '=', requestId).execute();
      }
      const res = await approve(requestId, await sign(account, signed));
      assert.deepEqual([res.statusCode, res.json()], [400, NO_LONGER_MATCHES], name);
    }
  });

  // EIP-4361's chain-id is 1*DIGIT: "01" is well-formed and its value is chain 1 (only digits are
  // read: " 1" and "1 " above are refused though Number() would read them as 1).
  test('the Chain ID is compared as a number: "01" agrees with chain 1', async () => {
    const { account, requestId, message } = await start();
    const altered = message.replace('\nChain ID: 1\n', '\nChain ID: 01\n');
    assert.notEqual(altered, message);
    await sql`update signin_requests set message = ${altered} where request_id = ${requestId}`.execute(t.ctx.db);
    const res = await approve(requestId, await sign(account, altered));
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(Object.keys(res.json()), ['code', 'state', 'redirectUrl']);
  });
});
