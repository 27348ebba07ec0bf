// Who may link a provider account to a wallet (issue 29), over HTTP: `start` needs a console session
// or a token holding manageConnections and takes no body fields; the link page and its proof (the
// wallet's console session in this browser, or the wallet's EIP-191 / ADR-36 signature of a text
// naming the wallet and the provider); and the callback, which completes only with the binding
// cookie of the browser that proved the wallet. The same attack in Chromium: browser.test.ts.
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base64, bech32 } from '@scure/base';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startApp } from '../helpers/app.ts';
import { signIn, testAccount, type SignedIn } from '../helpers/signin.ts';
import type { ManualClock } from '../../src/shared/clock.ts';
import { sha256Hex } from '../../src/shared/crypto.ts';
import { createOperatorToken } from '../../src/signin/operator-tokens.ts';
import { consoleRequest, consoleSignIn, originOf } from '../portal/helpers.ts';
import {
  approveAtProvider,
  callback,
  cookiePair,
  openLinkPage,
  postProof,
  providerEnv,
  proveWallet,
  startLink,
  startMockProvider,
  type MockProvider,
} from './helpers.ts';

const SCOPE_403 = { errorMessage: 'This route requires the session to hold the scope(s): manageConnections' };

describe('linking needs the wallet in the browser that finishes', () => {
  let mock: MockProvider;
  let user: SignedIn;
  const links = async (token: string) =>
    (await t.request('GET', '/api/v0/connections', { token }))
      .json()
      .connections.map((c: Record<string, string>) => [c.provider, c.id, c.username]);

  before(async () => {
    mock = await startMockProvider();
  });
  const t = useApp({ clock: true, env: () => providerEnv(mock, ['github', 'discord']) });
  before(async () => {
    user = await signIn(t, { scopes: ['manageConnections'] });
  });
  after(() => mock.stop());

  test('start and delete need manageConnections; listing needs any session', async () => {
    const other = await signIn(t, { scopes: ['completeClaims', 'manageAccount'] });
    const start = await t.request('POST', '/api/v0/connections/github/start', { token: other.accessToken, body: {} });
    assert.equal(start.statusCode, 403);
    assert.deepEqual(start.json(), SCOPE_403);
    const del = await t.request('DELETE', '/api/v0/connections/github', { token: other.accessToken });
    assert.equal(del.statusCode, 403);
    assert.deepEqual(del.json(), SCOPE_403);
    assert.deepEqual((await t.request('GET', '/api/v0/connections', { token: other.accessToken })).json(), {
      connections: [],
      availableProviders: ['discord', 'github'],
    });
    assert.equal((await t.request('POST', '/api/v0/connections/github/start', { body: {} })).statusCode, 401);

    const ok = await t.request('POST', '/api/v0/connections/github/start', { token: user.accessToken, body: {} });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.match(ok.json().url, new RegExp(`^${t.config.publicUrl}/connections/github/link\\?request=[0-9a-f]{32}$`));
    const gone = await t.request('DELETE', '/api/v0/connections/github', { token: user.accessToken });
    assert.deepEqual(
      [gone.statusCode, gone.json()],
      [404, { errorMessage: 'No github account is linked to this address' }],
    );
  });

  test('a console session may always start and delete links, whatever scopes it was signed in with', async () => {
    // a console sign-in asking for one unrelated scope only
    const who = testAccount();
    const ch = await t.request('POST', '/api/v0/signin/challenge', {
      apiKey: null,
      body: { client_id: 'console', scope: 'completeClaims', address: who.address },
    });
    const { requestId, message } = ch.json();
    const signature = await privateKeyToAccount(who.privateKey).signMessage({ message });
    const res = await t.request('POST', '/api/v0/console/session', {
      apiKey: null,
      headers: { origin: originOf(t), 'sec-fetch-site': 'same-origin' },
      body: { requestId, signature },
    });
    assert.deepEqual(res.json().scopes, ['completeClaims']);
    const session = {
      cookie: cookiePair(res.headers['set-cookie']),
      csrfToken: res.json().csrfToken,
      origin: originOf(t),
    } as Parameters<typeof consoleRequest>[1];
    const start = await consoleRequest(t, session, 'POST', '/api/v0/connections/github/start', {});
    assert.equal(start.statusCode, 200, start.body);
    assert.match(start.json().url, /\/connections\/github\/link\?request=[0-9a-f]{32}$/);
    const del = await consoleRequest(t, session, 'DELETE', '/api/v0/connections/github');
    assert.deepEqual(
      [del.statusCode, del.json()],
      [404, { errorMessage: 'No github account is linked to this address' }],
    );
    // without its CSRF token the cookie starts nothing (the console's own rule)
    const forged = await t.request('POST', '/api/v0/connections/github/start', {
      apiKey: null,
      body: {},
      headers: { cookie: session.cookie, origin: session.origin },
    });
    assert.deepEqual(
      [forged.statusCode, forged.json()],
      [403, { errorMessage: 'Missing CSRF token: send the x-csrf-token header from GET /api/v0/console/session.' }],
    );
  });

  test('start refuses unknown body fields, naming them; no body or {} is fine', async () => {
    const extra = await t.request('POST', '/api/v0/connections/github/start', {
      token: user.accessToken,
      body: { returnUrl: 'https://evil.example/' },
    });
    assert.equal(extra.statusCode, 400);
    assert.deepEqual(extra.json(), { errorMessage: 'body has unknown field "returnUrl"' });
    const notObject = await t.request('POST', '/api/v0/connections/github/start', {
      token: user.accessToken,
      body: ['x'],
    });
    assert.deepEqual([notObject.statusCode, notObject.json()], [400, { errorMessage: 'body must be object' }]);
    assert.equal(
      (await t.request('POST', '/api/v0/connections/github/start', { token: user.accessToken })).statusCode,
      200,
    );
    assert.equal(
      (await t.request('POST', '/api/v0/connections/github/start', { token: user.accessToken, body: {} })).statusCode,
      200,
    );
  });

  test('the link page names the wallet and the provider, and the wallet signs exactly that', async () => {
    const page = await startLink(t, user.accessToken, 'github');
    const { res, params } = await openLinkPage(t, page);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(
      String(res.headers['content-security-policy']),
      /^default-src 'none'; script-src 'nonce-[^']+'; .*frame-ancestors 'none'$/,
    );
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['set-cookie'], undefined, 'no binding before a proof');
    assert.match(res.body, /<h1>Link a GitHub account to a wallet<\/h1>/);
    assert.ok(res.body.includes(`<code data-testid="link-wallet">${user.address}</code>`));
    const u = new URL(t.config.publicUrl);
    const issued = new Date(t.clock.now()).toISOString();
    const expires = new Date(t.clock.now() + 10 * 60_000).toISOString();
    assert.ok(params);
    assert.deepEqual(params.message.split('\n'), [
      `${u.protocol}//${u.host} wants you to sign in with your Ethereum account:`,
      user.address,
      '',
      `Link your GitHub account to this wallet on ${u.host}. Sign only if you started this link yourself.`,
      '',
      `URI: ${u.origin}/connections/github/link`,
      'Version: 1',
      'Chain ID: 1',
      `Nonce: ${/Nonce: ([0-9a-f]{32})/.exec(params.message)?.[1]}`,
      `Issued At: ${issued}`,
      `Expiration Time: ${expires}`,
      `Request ID: ${page.searchParams.get('request')}`,
    ]);
    assert.equal(
      params.cancelUrl,
      `https://app.example/account?connectionError=${encodeURIComponent('You cancelled linking your GitHub account.').replace(/%20/g, '+')}`,
    );
  });

  test('the link page refuses an unknown, foreign, used or expired request', async () => {
    const text = (body: string) => /<p class="error" id="error">(.*?)<\/p>/.exec(body)?.[1];
    const missing = await t.request('GET', '/connections/github/link', { apiKey: null });
    assert.deepEqual([missing.statusCode, text(missing.body)], [404, 'Unknown link request. Start again.']);
    const unknown = await t.request('GET', `/connections/github/link?request=${'0'.repeat(32)}`, { apiKey: null });
    assert.deepEqual([unknown.statusCode, text(unknown.body)], [404, 'Unknown link request. Start again.']);
    const page = await startLink(t, user.accessToken, 'github');
    const foreign = await t.request('GET', `/connections/discord/link${page.search}`, { apiKey: null });
    assert.deepEqual([foreign.statusCode, text(foreign.body)], [400, 'This link request is for github, not discord.']);
    const off = await t.request('GET', `/connections/twitch/link${page.search}`, { apiKey: null });
    assert.deepEqual([off.statusCode, text(off.body)], [404, 'Connections to twitch are not enabled on this service']);

    await proveWallet(t, page, user.privateKey);
    const used = await t.request('GET', page.pathname + page.search, { apiKey: null });
    assert.deepEqual(
      [used.statusCode, text(used.body)],
      [400, 'This link request was already used in a browser. Start again.'],
    );

    const late = await startLink(t, user.accessToken, 'github');
    const { params } = await openLinkPage(t, late);
    (t.clock as ManualClock).advance(10 * 60_000);
    const expired = await t.request('GET', late.pathname + late.search, { apiKey: null });
    assert.deepEqual(
      [expired.statusCode, text(expired.body)],
      [400, 'This link request has expired (a link must be finished within 10 minutes). Start again.'],
    );
    const signature = await privateKeyToAccount(user.privateKey).signMessage({ message: params!.message });
    const proof = await postProof(t, 'github', { request: params!.requestId, signature });
    assert.deepEqual(
      [proof.statusCode, proof.json()],
      [
        400,
        { errorMessage: 'This link request has expired (a link must be finished within 10 minutes). Start again.' },
      ],
    );
  });

  test('the proof: only the wallet itself, only from the link page, once', async () => {
    const page = await startLink(t, user.accessToken, 'github');
    const { params } = await openLinkPage(t, page);
    const request = params!.requestId;
    const intruder = testAccount(generatePrivateKey());
    const wrong = await postProof(t, 'github', {
      request,
      signature: await privateKeyToAccount(intruder.privateKey).signMessage({ message: params!.message }),
    });
    assert.deepEqual(
      [wrong.statusCode, wrong.json()],
      [401, { errorMessage: `Signature does not match the link message for ${user.address}.`, unauthorized: true }],
    );
    const garbage = await postProof(t, 'github', { request, signature: '0x1234' });
    assert.deepEqual(
      [garbage.statusCode, garbage.json()],
      [400, { errorMessage: 'Invalid signature: expected a 0x-prefixed 65-byte personal_sign signature.' }],
    );
    const signature = await privateKeyToAccount(user.privateKey).signMessage({ message: params!.message });
    const crossSite = await postProof(
      t,
      'github',
      { request, signature },
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    );
    assert.deepEqual(
      [crossSite.statusCode, crossSite.json()],
      [
        403,
        {
          errorMessage: `Cross-site request refused: the wallet proof is only accepted from the link page at ${originOf(t)} (Sec-Fetch-Site: cross-site).`,
        },
      ],
    );
    const foreignOrigin = await t.request('POST', '/api/v0/connections/github/link', {
      apiKey: null,
      body: { request, signature },
      headers: { origin: 'https://evil.example' },
    });
    assert.deepEqual(
      [foreignOrigin.statusCode, foreignOrigin.json()],
      [403, { errorMessage: `Cross-site request refused: Origin https://evil.example is not ${originOf(t)}.` }],
    );
    const bare = await t.request('POST', '/api/v0/connections/github/link', {
      apiKey: null,
      body: { request, signature },
    });
    assert.deepEqual(
      [bare.statusCode, bare.json()],
      [
        403,
        { errorMessage: 'The wallet proof must come from the link page (Origin or Sec-Fetch-Site header missing).' },
      ],
    );
    const extra = await postProof(t, 'github', { request, signature, returnUrl: 'x' });
    assert.deepEqual([extra.statusCode, extra.json()], [400, { errorMessage: 'body has unknown field "returnUrl"' }]);
    // none of these spent the request: the wallet's own signature still proves it, once
    const ok = await postProof(t, 'github', { request, signature });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.headers['cache-control'], 'no-store');
    const authorize = new URL(ok.json().url);
    assert.equal(authorize.origin + authorize.pathname, `${mock.url}/authorize`);
    assert.match(authorize.searchParams.get('state') ?? '', /^[0-9a-f]{64}$/);
    const again = await postProof(t, 'github', { request, signature });
    assert.deepEqual(
      [again.statusCode, again.json()],
      [400, { errorMessage: 'This link request was already used in a browser. Start again.' }],
    );
  });

  test('the binding cookie: random, HttpOnly, SameSite=Lax, for the rest of the request; only its hash is stored', async () => {
    const page = await startLink(t, user.accessToken, 'github');
    const { params } = await openLinkPage(t, page);
    const signature = await privateKeyToAccount(user.privateKey).signMessage({ message: params!.message });
    const ok = await postProof(t, 'github', { request: params!.requestId, signature });
    const setCookie = String(ok.headers['set-cookie']);
    const m = /^platform_link_github=([0-9a-f]{64}); Path=\/; HttpOnly; SameSite=Lax; Max-Age=600$/.exec(setCookie);
    assert.ok(m, setCookie);
    const row = await t.ctx.db
      .selectFrom('connection_requests')
      .selectAll()
      .where('request_id', '=', params!.requestId)
      .executeTakeFirstOrThrow();
    assert.equal(row.binding_hash, sha256Hex(m[1]!));
    assert.ok(!JSON.stringify(row).includes(m[1]!), 'the cookie value is not stored');
    assert.ok(!JSON.stringify(row).includes(new URL(ok.json().url).searchParams.get('state')!), 'nor is the state');
  });

  test('the callback completes only with the binding cookie of the browser that proved the wallet', async () => {
    mock.shape = 'github';
    mock.nextUser = { id: '583231', username: 'octocat' };
    const mine = await proveWallet(t, await startLink(t, user.accessToken, 'github'), user.privateKey);
    const back = await approveAtProvider(mine.authorizeUrl);

    const none = await callback(t, 'github', back);
    assert.equal(
      none.searchParams.get('connectionError'),
      'This link was started in another browser: this one holds no binding cookie for it. Start again in this browser.',
    );
    // another browser holding a binding cookie of its own (another proven request)
    const theirs = await proveWallet(t, await startLink(t, user.accessToken, 'github'), user.privateKey);
    const mismatch = await callback(t, 'github', back, theirs.cookie);
    assert.equal(
      mismatch.searchParams.get('connectionError'),
      "This link was started in another browser: this browser's binding cookie is for another link. Start again in this browser.",
    );
    const forged = await callback(t, 'github', back, `platform_link_github=${'0'.repeat(64)}`);
    assert.equal(
      forged.searchParams.get('connectionError'),
      "This link was started in another browser: this browser's binding cookie is for another link. Start again in this browser.",
    );
    assert.deepEqual(await links(user.accessToken), []);

    // the request waited for its own browser
    const res = await t.request('GET', `/api/v0/connections/github/callback${back.search}`, {
      apiKey: null,
      headers: { cookie: mine.cookie },
    });
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, 'https://app.example/account?connected=github');
    assert.equal(
      res.headers['set-cookie'],
      'platform_link_github=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0',
      'the used binding is dropped',
    );
    assert.deepEqual(await links(user.accessToken), [['github', '583231', 'octocat']]);
  });

  test("the wallet's console session in this browser is the proof: the page sends it on at once", async () => {
    const s = await consoleSignIn(t);
    const start = await consoleRequest(t, s, 'POST', '/api/v0/connections/github/start', {});
    const page = new URL(start.json().url);
    const res = await t.request('GET', page.pathname + page.search, { apiKey: null, headers: { cookie: s.cookie } });
    assert.equal(res.statusCode, 302, res.body);
    const authorize = new URL(String(res.headers.location));
    assert.equal(authorize.origin + authorize.pathname, `${mock.url}/authorize`);
    assert.match(
      String(res.headers['set-cookie']),
      /^platform_link_github=[0-9a-f]{64}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=600$/,
    );
    mock.shape = 'github';
    mock.nextUser = { id: '42', username: 'console-user' };
    const done = await callback(t, 'github', await approveAtProvider(authorize), cookiePair(res.headers['set-cookie']));
    assert.equal(done.searchParams.get('connected'), 'github');
    const list = await consoleRequest(t, s, 'GET', '/api/v0/connections');
    assert.deepEqual(
      list.json().connections.map((c: Record<string, string>) => [c.provider, c.id, c.username]),
      [['github', '42', 'console-user']],
    );
  });

  test("another wallet's console session is no proof: the page asks for the link's wallet and says who is signed in", async () => {
    const page = await startLink(t, user.accessToken, 'github');
    const other = await consoleSignIn(t);
    const otherAddress = testAccount(other.privateKey).address;
    const { res, params } = await openLinkPage(t, page, { cookie: other.cookie });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['set-cookie'], undefined);
    assert.equal(params!.address, user.address);
    assert.ok(
      res.body.includes(
        `<p class="error" data-testid="other-session">You are signed in to this service as ${otherAddress}, not as this wallet. If you did not start this link, close this page.</p>`,
      ),
    );
    // nor is a visitor cookie or garbage
    const visitor = await openLinkPage(t, page, { cookie: 'platform_console=garbage' });
    assert.equal(visitor.res.statusCode, 200);
    assert.ok(!visitor.res.body.includes('other-session'));
  });

  test('a native (bb1) wallet proves with an ADR-36 signature and its public key', async () => {
    const priv = secp256k1.utils.randomSecretKey();
    const pub = secp256k1.getPublicKey(priv, true);
    const address = bech32.encode('bb', bech32.toWords(ripemd160(sha256(pub))));
    const { accessToken } = await createOperatorToken(t.ctx, { address, scopes: ['manageConnections'] });
    const page = await startLink(t, accessToken, 'discord');
    const { params } = await openLinkPage(t, page);
    assert.equal(params!.chain, 'Cosmos');
    assert.equal(params!.address, address);
    assert.equal(
      params!.message.split('\n')[0],
      `${new URL(t.config.publicUrl).protocol}//${new URL(t.config.publicUrl).host} wants you to sign in with your Cosmos account:`,
    );
    const doc = `{"account_number":"0","chain_id":"","fee":{"amount":[],"gas":"0"},"memo":"","msgs":[{"type":"sign/MsgSignData","value":{"data":"${Buffer.from(params!.message, 'utf8').toString('base64')}","signer":"${address}"}}],"sequence":"0"}`;
    const signature = base64.encode(secp256k1.sign(new TextEncoder().encode(doc), priv));
    const noKey = await postProof(t, 'discord', { request: params!.requestId, signature });
    assert.deepEqual(
      [noKey.statusCode, noKey.json()],
      [400, { errorMessage: 'publicKey is required for a native address: ADR-36 signatures carry no recovery id.' }],
    );
    const ok = await postProof(t, 'discord', { request: params!.requestId, signature, publicKey: base64.encode(pub) });
    assert.equal(ok.statusCode, 200, ok.body);
    mock.shape = 'discord';
    mock.nextUser = { id: '80351110224678912', username: 'nelly' };
    const done = await callback(
      t,
      'discord',
      await approveAtProvider(new URL(ok.json().url)),
      cookiePair(ok.headers['set-cookie']),
    );
    assert.equal(done.searchParams.get('connected'), 'discord');
    assert.deepEqual(await links(accessToken), [['discord', '80351110224678912', 'nelly']]);
  });
});

describe('the binding cookie on https', () => {
  test('is __Host- prefixed and Secure', async () => {
    const mock = await startMockProvider();
    const t = await startApp({
      manualClock: true,
      env: { ...providerEnv(mock, ['github']), PUBLIC_URL: 'https://links.example' },
    });
    try {
      const user = await signIn(t, { scopes: ['manageConnections'] });
      const page = await startLink(t, user.accessToken, 'github');
      assert.equal(page.origin, 'https://links.example');
      const { params } = await openLinkPage(t, page);
      assert.equal(params!.message.split('\n')[0], 'links.example wants you to sign in with your Ethereum account:');
      const signature = await privateKeyToAccount(user.privateKey).signMessage({ message: params!.message });
      const ok = await postProof(t, 'github', { request: params!.requestId, signature });
      assert.match(
        String(ok.headers['set-cookie']),
        /^__Host-platform_link_github=[0-9a-f]{64}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=600; Secure$/,
      );
      mock.shape = 'github';
      mock.nextUser = { id: '1', username: 'one' };
      const back = await approveAtProvider(new URL(ok.json().url));
      // the unprefixed name, which another subdomain could plant, is not the binding
      const planted = await callback(t, 'github', back, cookiePair(ok.headers['set-cookie']).replace('__Host-', ''));
      assert.equal(
        planted.searchParams.get('connectionError'),
        'This link was started in another browser: this one holds no binding cookie for it. Start again in this browser.',
      );
      const done = await callback(t, 'github', back, cookiePair(ok.headers['set-cookie']));
      assert.equal(done.searchParams.get('connected'), 'github');
    } finally {
      await t.close();
      await mock.stop();
    }
  });
});
