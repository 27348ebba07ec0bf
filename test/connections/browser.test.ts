// Linking a provider in a real browser (Debian's chromium driven by playwright-core) against a local
// OAuth 2.0 provider (oauth2-mock-server), which approves at once, as a provider does for an app
// the user already authorised. Every hop is a real HTTP redirect followed by the browser.
//
// The attack of issue 29: a wallet calls `start` with its own session and gets a victim's browser to
// open the answered URL; the victim's provider account must never end up linked to that wallet,
// whether the victim's browser gets the link page (it cannot prove the attacker's wallet) or the
// provider's URL behind it (the callback wants the binding cookie of the browser that proved).
// The honest flows still work: a backend's `start` with the user's wallet signing on the link page
// (EVM and Keplr), and the console's Link button, whose session is the proof.
// test-run: once (a browser flow over the HTTP API, which the API's own tests cover on both databases; scripts/test.mjs)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { generatePrivateKey } from 'viem/accounts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { signIn, testAccount } from '../helpers/signin.ts';
import { freePort } from '../helpers/process.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { keplrContext, walletContext } from '../helpers/browser-wallet.ts';
import { consoleSignIn } from '../portal/helpers.ts';
import { PORTAL_DIST } from '../../src/portal/static.ts';
import { createOperatorToken } from '../../src/signin/operator-tokens.ts';
import { proveWallet, providerEnv, startLink, startMockProvider, type MockProvider } from './helpers.ts';

const VICTIM_GITHUB = { id: '583231', username: 'octocat' };

describe('connections in a browser', () => {
  let mock: MockProvider;
  let t: TestApp;
  let browser: Browser;
  let base = '';

  /** The pathnames of the top-level navigations of a tab (every redirect hop included). */
  function hops(tab: Page): string[] {
    const seen: string[] = [];
    tab.on('request', (r) => {
      if (r.isNavigationRequest() && r.frame() === tab.mainFrame()) seen.push(new URL(r.url()).pathname);
    });
    return seen;
  }

  const linksOf = async (token: string) =>
    (await t.request('GET', '/api/v0/connections', { token }))
      .json()
      .connections.map((l: Record<string, string>) => [l.provider, l.id, l.username]);

  before(async () => {
    if (!existsSync(join(PORTAL_DIST, 'index.html')))
      throw new Error('portal/dist is missing: run npm run build:portal.');
    mock = await startMockProvider();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // the flow returns to the console's account page
    t = await startApp({
      listen: false,
      env: { ...providerEnv(mock, ['github']), CONNECTIONS_RETURN_URL: `${base}/#/account`, PUBLIC_URL: base },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    // the mock provider serves https with the test CA, which this throwaway browser does not hold
    browser = await launchChromium(['--ignore-certificate-errors']);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await mock?.stop();
  });

  test("attack: a link started by another wallet and opened in the victim's browser links nothing", async () => {
    const attacker = await signIn(t);
    const start = await t.request('POST', '/api/v0/connections/github/start', { token: attacker.accessToken });
    assert.equal(start.statusCode, 200, start.body);
    // The victim is signed in at GitHub, and to this service's console with its own wallet.
    const victim = testAccount(generatePrivateKey());
    const context = await walletContext(browser, victim.privateKey);
    const session = await consoleSignIn(t, { privateKey: victim.privateKey });
    const [name, value] = session.cookie.split('=');
    await context.addCookies([{ name: name!, value: value!, url: base, httpOnly: true, sameSite: 'Strict' }]);
    mock.shape = 'github';
    mock.nextUser = VICTIM_GITHUB;
    const tab = await context.newPage();
    const seen = hops(tab);
    await tab.goto(start.json().url);

    assert.deepEqual(
      await linksOf(attacker.accessToken),
      [],
      "the victim's GitHub account is linked to the attacker's wallet",
    );
    // The browser stopped at the service's own page, which names the wallet and the provider.
    assert.deepEqual(seen, ['/connections/github/link']);
    await tab.getByRole('heading', { name: 'Link a GitHub account to a wallet' }).waitFor();
    assert.equal(await tab.getByTestId('link-wallet').innerText(), attacker.address);
    assert.match(
      await tab.getByTestId('other-session').innerText(),
      new RegExp(`You are signed in to this service as ${victim.address}, not as this wallet\\.`),
    );
    // The victim's wallet is another one: the page says so and asks for no signature.
    await tab.getByRole('button', { name: 'Sign with an EVM wallet' }).click();
    await tab
      .getByText(
        `Your wallet's account ${victim.address} is not ${attacker.address}, the wallet this link is for. Nothing was signed.`,
      )
      .waitFor();
    assert.deepEqual(seen, ['/connections/github/link']);
    assert.deepEqual(await linksOf(attacker.accessToken), []);
    await context.close();
  });

  test("attack: the provider URL behind the attacker's own proof, opened in the victim's browser, links nothing", async () => {
    const attacker = await signIn(t);
    // the attacker proves its own wallet (its own browser), and keeps the provider's URL
    const { authorizeUrl } = await proveWallet(
      t,
      await startLink(t, attacker.accessToken, 'github'),
      attacker.privateKey,
    );
    mock.shape = 'github';
    mock.nextUser = VICTIM_GITHUB;
    const context = await browser.newContext();
    const tab = await context.newPage();
    const seen = hops(tab);
    await tab.goto(authorizeUrl.toString());
    await tab.waitForURL((u) => u.toString().startsWith(`${base}/?`));
    assert.deepEqual(seen, ['/authorize', '/api/v0/connections/github/callback', '/']);
    const back = new URL(tab.url());
    assert.equal(
      back.searchParams.get('connectionError'),
      'This link was started in another browser: this one holds no binding cookie for it. Start again in this browser.',
    );
    assert.deepEqual(await linksOf(attacker.accessToken), []);
    await context.close();
  });

  test("honest, from a backend: the user's browser signs on the link page, then the provider, then the callback", async () => {
    const key = generatePrivateKey();
    const user = await signIn(t, { privateKey: key, scopes: ['manageConnections'] });
    const start = await t.request('POST', '/api/v0/connections/github/start', { token: user.accessToken, body: {} });
    mock.shape = 'github';
    mock.nextUser = { id: '1001', username: 'backend-user' };
    const context = await walletContext(browser, key);
    const tab = await context.newPage();
    const seen = hops(tab);
    await tab.goto(start.json().url);
    assert.equal(await tab.getByTestId('link-wallet').innerText(), user.address);
    assert.equal(await tab.getByTestId('other-session').count(), 0);
    await tab.getByRole('button', { name: 'Sign with an EVM wallet' }).click();
    await tab.waitForURL((u) => u.toString().startsWith(`${base}/?`));
    assert.deepEqual(seen, ['/connections/github/link', '/authorize', '/api/v0/connections/github/callback', '/']);
    assert.equal(new URL(tab.url()).searchParams.get('connected'), 'github');
    // the used binding cookie is gone from the browser
    assert.deepEqual(
      (await context.cookies(base)).map((c) => c.name).filter((n) => n.includes('link')),
      [],
    );
    assert.deepEqual(await linksOf(user.accessToken), [['github', '1001', 'backend-user']]);
    await context.close();
  });

  test('honest, from a backend, for a native address: a Keplr-style wallet signs (ADR-36)', async () => {
    const { context, address } = await keplrContext(browser, t.config.signinNativeChainId);
    const { accessToken } = await createOperatorToken(t.ctx, { address, scopes: ['manageConnections'] });
    const start = await t.request('POST', '/api/v0/connections/github/start', { token: accessToken, body: {} });
    mock.shape = 'github';
    mock.nextUser = { id: '1002', username: 'keplr-user' };
    const tab = await context.newPage();
    await tab.goto(start.json().url);
    assert.equal(await tab.getByTestId('link-wallet').innerText(), address);
    await tab.getByRole('button', { name: 'Sign with a Keplr wallet' }).click();
    await tab.waitForURL((u) => u.toString().startsWith(`${base}/?`));
    assert.equal(new URL(tab.url()).searchParams.get('connected'), 'github');
    assert.deepEqual(await linksOf(accessToken), [['github', '1002', 'keplr-user']]);
    await context.close();
  });

  test("honest, from the console: Link GitHub on the account page; the console session is the wallet's proof", async () => {
    const key = generatePrivateKey();
    const context = await walletContext(browser, key);
    const tab = await context.newPage();
    await tab.goto(`${base}/`);
    await tab.click('#signin-evm');
    await tab.getByRole('heading', { name: 'API keys' }).waitFor();
    await tab.goto(`${base}/#/account`);
    mock.shape = 'github';
    mock.nextUser = { id: '1003', username: 'console-user' };
    const seen = hops(tab);
    await tab.getByRole('button', { name: 'Link GitHub' }).click();
    await tab.getByText('Your GitHub account is linked.').waitFor();
    assert.deepEqual(seen, ['/connections/github/link', '/authorize', '/api/v0/connections/github/callback', '/']);
    assert.equal(tab.url(), `${base}/#/account`, 'the outcome is read once and removed from the address bar');
    const row = tab.locator('li[data-provider="github"]');
    assert.match(await row.innerText(), /GitHub console-user/);
    // and unlinked again
    await tab.getByRole('button', { name: 'Unlink GitHub' }).click();
    await tab.getByRole('button', { name: 'Link GitHub' }).waitFor();
    // the list is read again after the unlink: wait for the row to go rather than count at once
    await row.waitFor({ state: 'detached' });
    assert.equal(await row.count(), 0);
    await context.close();
  });
});
