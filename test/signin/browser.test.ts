// The authorize page in a real browser (Debian's chromium driven by playwright-core): an injected
// EIP-1193 test wallet signs in the page, the redirect reaches a local callback server, the app
// exchanges the code (PKCE, HTTP Basic, form body) and checks /api/v0/auth/status.
// Chromium is required: CI installs it (`.ci/run`); without it this test fails, it does not skip.
// test-run: once (a browser flow over the HTTP API, which the API's own tests cover on both databases; scripts/test.mjs)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { privateKeyToAccount } from 'viem/accounts';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base64, bech32 } from '@scure/base';
import { startApp, type TestApp } from '../helpers/app.ts';
import { basicAuth, createTestClient, type TestClient } from '../helpers/signin.ts';
import { freePort } from '../helpers/process.ts';
import { injectEvmWallet, launchChromium } from '../helpers/chromium.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

const TEST_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' as const; // Hardhat #1, public test key
const wallet = privateKeyToAccount(TEST_KEY);

/** The test wallet (test/helpers/chromium.ts) with this file's key. */
const injectWallet = (page: Page, signed: string[]) => injectEvmWallet(page, TEST_KEY, signed);

/** A Keplr-style provider (enable / getKey / signArbitrary) for a native secp256k1 key; signs ADR-36 in Node. */
async function injectKeplr(page: Page, chainId: string): Promise<string> {
  const priv = secp256k1.utils.randomSecretKey();
  const pub = secp256k1.getPublicKey(priv, true);
  const address = bech32.encode('bb', bech32.toWords(ripemd160(sha256(pub))));
  await page.exposeFunction('__testKeplrSign', async (askedChain: string, signer: string, data: string) => {
    if (askedChain !== chainId || signer !== address) throw new Error('wrong chain or signer');
    const doc = `{"account_number":"0","chain_id":"","fee":{"amount":[],"gas":"0"},"memo":"","msgs":[{"type":"sign/MsgSignData","value":{"data":"${Buffer.from(data, 'utf8').toString('base64')}","signer":"${signer}"}}],"sequence":"0"}`;
    return {
      pub_key: { type: 'tendermint/PubKeySecp256k1', value: base64.encode(pub) },
      signature: base64.encode(secp256k1.sign(new TextEncoder().encode(doc), priv)),
    };
  });
  await page.addInitScript(
    ([addr, chain]: string[]) => {
      const w = globalThis as unknown as {
        keplr: unknown;
        __testKeplrSign: (c: string, s: string, d: string) => Promise<unknown>;
      };
      w.keplr = {
        async enable(c: string) {
          if (c !== chain) throw new Error(`unknown chain ${c}`);
        },
        async getKey() {
          return { bech32Address: addr, algo: 'secp256k1' };
        },
        signArbitrary: (c: string, signer: string, data: string) => w.__testKeplrSign(c, signer, data),
      };
    },
    [address, chainId],
  );
  return address;
}

describe('browser sign-in', () => {
  let t: TestApp;
  let browser: Browser;
  let callbackServer: Server;
  let callbackUrl: string;
  let client: TestClient;
  const callbacks: URL[] = [];

  before(async () => {
    const port = await freePort();
    t = await startApp({ env: { PUBLIC_URL: `http://127.0.0.1:${port}` } });
    await t.app.listen({ port, host: '127.0.0.1' });
    callbackServer = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (u.pathname === '/callback') callbacks.push(u); // not /favicon.ico
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html><title>callback</title><p id="done">Signed in</p>');
    });
    await new Promise<void>((r) => callbackServer.listen(0, '127.0.0.1', r));
    callbackUrl = `http://127.0.0.1:${(callbackServer.address() as { port: number }).port}/callback`;
    client = await createTestClient(t, { name: 'Browser Test App', redirectUris: [callbackUrl] });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await new Promise((r) => (callbackServer ? callbackServer.close(r) : r(undefined)));
    await t?.close();
  });

  const base = () => `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;

  test('approve in the page, follow the redirect, exchange the code, check the session', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const state = randomBytes(8).toString('hex');
    const page = await browser.newPage();
    const signed: string[] = [];
    await injectWallet(page, signed);
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: callbackUrl,
      scope: 'completeClaims readPrivateClaimData',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    await page.goto(`${base()}/signin/authorize?${q}`);
    assert.match(await page.locator('h1').innerText(), /Browser Test App/);
    assert.match(await page.locator('#scopes').innerText(), /Complete Claims[\s\S]*Read Private Claim Data/);

    await Promise.all([
      page.waitForURL((u) => u.href.startsWith(callbackUrl), { timeout: PATIENCE_MS }),
      page.click('#evm'),
    ]);
    assert.equal(await page.locator('#done').innerText(), 'Signed in');
    assert.equal(signed.length, 1);
    assert.match(signed[0], /Sign in to Browser Test App/);

    const cb = callbacks.at(-1)!;
    assert.equal(cb.searchParams.get('state'), state);
    const code = cb.searchParams.get('code')!;
    assert.match(code, /^[0-9a-f]{64}$/);

    const tokenRes = await fetch(`${base()}/api/v0/signin/token`, {
      method: 'POST',
      headers: {
        'x-api-key': t.apiKey,
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basicAuth(client.clientId, client.clientSecret),
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: callbackUrl,
        code_verifier: verifier,
      }),
    });
    assert.equal(tokenRes.status, 200, await tokenRes.clone().text());
    assert.equal(tokenRes.headers.get('cache-control'), 'no-store');
    const tokens = (await tokenRes.json()) as { address: string; access_token: string; platformAddress: string };
    assert.equal(tokens.address, wallet.address);

    const statusRes = await fetch(`${base()}/api/v0/auth/status`, {
      method: 'POST',
      headers: {
        'x-api-key': t.apiKey,
        authorization: `Bearer ${tokens.access_token}`,
        'content-type': 'application/json',
      },
      body: '{}',
    });
    const status = (await statusRes.json()) as {
      signedIn: boolean;
      address: string;
      platformAddress: string;
      scopes: { scopeId: string }[];
      message: string;
    };
    assert.equal(status.signedIn, true);
    assert.equal(status.address, wallet.address);
    assert.equal(status.platformAddress, tokens.platformAddress);
    assert.deepEqual(
      status.scopes.map((s: { scopeId: string }) => s.scopeId),
      ['completeClaims', 'readPrivateClaimData'],
    );
    assert.equal(status.message, signed[0]);
    await page.close();
  });

  test('without a redirect URI the page shows the code to copy; it exchanges', async () => {
    const page = await browser.newPage();
    await injectWallet(page, []);
    await page.goto(
      `${base()}/signin/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.clientId })}`,
    );
    await page.click('#evm');
    await page.locator('#code').waitFor({ state: 'visible', timeout: PATIENCE_MS });
    const code = (await page.locator('#code').innerText()).trim();
    assert.match(code, /^[0-9a-f]{64}$/);
    const res = await fetch(`${base()}/api/v0/signin/token`, {
      method: 'POST',
      headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'authorization_code',
        code,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      }),
    });
    assert.equal(res.status, 200);
    await page.close();
  });

  test('a Keplr-style wallet signs in its native address through ADR-36', async () => {
    const page = await browser.newPage();
    const address = await injectKeplr(page, 'platform-1');
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: callbackUrl,
      state: 'native',
    });
    await page.goto(`${base()}/signin/authorize?${q}`);
    await Promise.all([
      page.waitForURL((u) => u.href.startsWith(callbackUrl), { timeout: PATIENCE_MS }),
      page.click('#native'),
    ]);
    const cb = callbacks.at(-1)!;
    assert.equal(cb.searchParams.get('state'), 'native');
    const res = await fetch(`${base()}/api/v0/signin/token`, {
      method: 'POST',
      headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'authorization_code',
        code: cb.searchParams.get('code'),
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uri: callbackUrl,
      }),
    });
    assert.equal(res.status, 200);
    const tokens = (await res.json()) as { chain: string; address: string; platformAddress: string };
    assert.equal(tokens.chain, 'Cosmos');
    assert.equal(tokens.address, address);
    assert.equal(tokens.platformAddress, address);
    await page.close();
  });

  test('an unknown client is shown in the page; no wallet prompt is offered', async () => {
    const page = await browser.newPage();
    const res = await page.goto(
      `${base()}/signin/authorize?response_type=code&client_id=nope&redirect_uri=${encodeURIComponent(callbackUrl)}`,
    );
    assert.equal(res?.status(), 400);
    assert.match(await page.locator('#error').innerText(), /client_id/);
    assert.equal(await page.locator('#evm').count(), 0);
    assert.equal(page.url().startsWith(base()), true);
    await page.close();
  });
});
