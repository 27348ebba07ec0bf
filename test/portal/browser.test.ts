// The portal in a real browser (Debian's chromium driven by playwright-core) on a real service:
// sign in to the console with an injected wallet, create an API key, an app and a store (CSV
// import), build a claim with numUses, a password and a whitelist on the store, then claim it on
// its public page as another wallet (wrong password first: the exact plugin text), see the claim
// place, hit a version conflict in the editor, and revoke an app from the account page. Every
// page gets an axe check (no serious or critical violations) and a screenshot at desktop and
// phone size in PORTAL_SCREENSHOTS (default: <tmpdir>/platform-portal-screenshots; not committed).
// test-run: once (a browser flow over the HTTP API, which the API's own tests cover on both databases; scripts/test.mjs)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { generatePrivateKey } from 'viem/accounts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { signIn, testAccount } from '../helpers/signin.ts';
import { PORTAL_DIST } from '../../src/portal/static.ts';
import { freePort } from '../helpers/process.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { DESKTOP, keplrContext, walletContext } from '../helpers/browser-wallet.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

const SHOTS = process.env.PORTAL_SCREENSHOTS ?? join(tmpdir(), 'platform-portal-screenshots');
const OWNER_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' as const; // Hardhat #1, public test key
const PHONE = { width: 390, height: 844 };

describe('web portal in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let owner: Page;
  let claimer: Page;
  const checked: string[] = [];

  /** axe (serious/critical fail the test) and screenshots at desktop and phone size. */
  async function audit(page: Page, name: string): Promise<void> {
    const { violations } = await new AxeBuilder({ page }).analyze();
    const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(
      bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
      [],
      `accessibility violations on ${name}`,
    );
    await page.screenshot({ path: join(SHOTS, `${name}-desktop.png`), fullPage: true });
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: join(SHOTS, `${name}-phone.png`), fullPage: true });
    await page.setViewportSize(DESKTOP);
    checked.push(name);
  }

  before(async () => {
    if (!existsSync(join(PORTAL_DIST, 'index.html')))
      throw new Error('portal/dist is missing: run npm install (or npm run build:portal).');
    mkdirSync(SHOTS, { recursive: true });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startApp({ env: { PUBLIC_URL: base } });
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();
    owner = await (await walletContext(browser, OWNER_KEY)).newPage();
    claimer = await (await walletContext(browser, generatePrivateKey())).newPage();
    for (const page of [owner, claimer]) {
      page.setDefaultTimeout(PATIENCE_MS);
      page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
      page.on('console', (m) => m.type() === 'error' && console.error(`console: ${m.text()}`));
    }
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  let storeId = '';
  const claimId = 'spring-drop';
  let claimerAddress = '';

  test('sign in to the console with the wallet and create an API key (shown once, usable)', async () => {
    const res = await owner.goto(`${base}/`);
    assert.equal(res?.headers()['content-security-policy']?.includes("script-src 'self'"), true);
    await audit(owner, 'console-signin');
    await owner.click('#signin-evm');
    await owner.getByRole('heading', { name: 'API keys' }).waitFor();
    await owner.fill('#key-label', 'my backend');
    await owner.getByRole('button', { name: 'Create key' }).click();
    const key = (await owner.getByTestId('new-api-key').innerText()).trim();
    assert.match(key, /^[0-9a-f]{64}$/);
    assert.equal((await fetch(`${base}/api/v0/plugins/core`, { headers: { 'x-api-key': key } })).status, 200);
    await owner.getByRole('cell', { name: 'my backend', exact: true }).waitFor();
    await audit(owner, 'console-keys');
    // the browser holds no key or token: the only cookie is the HttpOnly session
    const cookies = await owner.context().cookies();
    assert.deepEqual(
      cookies.map((c) => [c.name, c.httpOnly, c.sameSite]),
      [['platform_console', true, 'Strict']],
    );
    assert.equal(
      await owner.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie),
      '',
    );
  });

  test('create a developer app: the secret is shown once', async () => {
    await owner.goto(`${base}/#/apps`);
    await owner.fill('#app-name', 'Portal App');
    await owner.fill('#app-uris', 'https://portal-app.example/callback');
    await owner.getByRole('button', { name: 'Create app' }).click();
    const clientId = (await owner.getByTestId('new-client-id').innerText()).trim();
    assert.match(clientId, /^[0-9a-f]+$/i);
    assert.match(await owner.getByTestId('client-secret').first().innerText(), /^[0-9a-f]{64}$/);
    await owner.getByRole('heading', { name: 'Portal App' }).waitFor();
    await audit(owner, 'console-apps');
  });

  test('create a store and import a CSV of 2,000 addresses with progress', async () => {
    claimerAddress = await claimer.evaluate(
      async () =>
        (
          (await (
            globalThis as unknown as { ethereum: { request(a: { method: string }): Promise<string[]> } }
          ).ethereum.request({ method: 'eth_requestAccounts' })) as string[]
        )[0],
    );
    await owner.goto(`${base}/#/stores`);
    await owner.fill('#store-label', 'Early supporters');
    await owner.getByRole('button', { name: 'Create store' }).click();
    await owner.getByRole('heading', { name: 'Early supporters' }).waitFor();
    storeId = decodeURIComponent(new URL(owner.url()).hash.split('/')[2]);
    const rows = ['address,note', `${claimerAddress},first`];
    for (let i = 1; i < 2000; i++) rows.push(`${testAccount().platformAddress},n${i}`);
    await owner.setInputFiles('#store-import', {
      name: 'supporters.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(rows.join('\n')),
    });
    await owner.getByText('Imported 2,000 addresses.').waitFor({ timeout: PATIENCE_MS });
    assert.equal(await owner.getByTestId('store-size').innerText(), '2000');
    assert.equal(await owner.getByTestId('import-count').innerText(), '2,000 / 2,000');
    const snippet = JSON.parse(await owner.locator('pre').innerText()) as {
      privateParams: { dynamicDataId: string; dataSecret: string };
    };
    assert.equal(snippet.privateParams.dynamicDataId, storeId);
    await audit(owner, 'console-store');
  });

  test('build a claim with numUses, a password and a whitelist on the store', async () => {
    await owner.goto(`${base}/#/claims/new`);
    await owner.fill('#claim-id', claimId);
    await owner.fill('#claim-name', 'Spring drop');
    await owner.fill('#claim-description', 'One badge for early supporters.');
    await owner.locator('fieldset[data-plugin=numUses]').getByLabel('Maximum uses *').fill('10');
    for (const id of ['password', 'whitelist']) {
      await owner.selectOption('#add-plugin', id);
      await owner.getByRole('button', { name: 'Add', exact: true }).click();
    }
    await owner.locator('fieldset[data-plugin=password]').getByLabel('Password *').fill('open sesame');
    const wl = owner.locator('fieldset[data-plugin=whitelist]');
    // one of my stores: the service attaches its secret
    await wl.getByLabel('Addresses from one of my stores').selectOption(storeId);
    await audit(owner, 'console-claim-builder');
    await owner.click('#save-claim');
    await owner.getByRole('heading', { name: 'Spring drop' }).waitFor();
    assert.equal(new URL(owner.url()).hash, `#/claims/view/${claimId}`);
    await owner.getByRole('heading', { name: 'Simulate as address' }).waitFor();
    // no password typed yet: the live simulation waits for it instead of answering an error
    await owner.getByTestId('simulate-result').filter({ hasText: 'Fill in Password to simulate.' }).waitFor();
    await audit(owner, 'console-claim');
  });

  test('claim on the public page as another wallet: the wrong password fails with the exact text, then the claim succeeds', async () => {
    await claimer.goto(`${base}/claim/${claimId}`);
    await claimer.getByRole('heading', { name: 'Spring drop' }).waitFor();
    assert.match(await claimer.locator('.requirements').innerText(), /Password[\s\S]*Whitelist/);
    await audit(claimer, 'claim-page');
    await claimer.click('#connect-evm');
    await claimer.getByTestId('claimer').waitFor();
    const password = claimer.getByLabel('Password *');
    await password.fill('nope');
    await claimer.locator('li[data-instance=password1].fail').waitFor();
    assert.equal(await claimer.locator('li[data-instance=password1] .check-text').innerText(), 'Incorrect password.');
    assert.equal(await claimer.locator('#claim-button').isDisabled(), true);
    await password.fill('open sesame');
    await claimer.getByTestId('live-check').filter({ hasText: 'You meet every requirement.' }).waitFor();
    await audit(claimer, 'claim-page-connected');
    await claimer.click('#claim-button');
    await claimer.getByTestId('claim-place').waitFor({ timeout: PATIENCE_MS });
    assert.equal(await claimer.getByTestId('claim-place').innerText(), 'You were #1 of 10.');
    await audit(claimer, 'claim-page-claimed');
    // the owner sees the attempt
    await owner.goto(`${base}/#/claims/view/${claimId}`);
    await owner.reload();
    await owner.getByRole('cell', { name: 'claim #0' }).waitFor();
  });

  test('create a custom plugin on the Plugins page: schema editor, finalize, reveal the secret', async () => {
    await owner.goto(`${base}/#/plugins`);
    await owner.getByRole('heading', { name: 'Plugins' }).waitFor();
    await owner.getByRole('link', { name: 'New plugin' }).click();
    await owner.fill('#plugin-id', 'guest-check');
    await owner.fill('#plugin-name', 'Guest check');
    await owner.fill('#v1-uri', 'https://guests.example/verify');
    const inputs = owner.locator('fieldset[data-schema=v1-userInputsSchema]');
    await inputs.getByRole('button', { name: 'Add a field' }).click();
    await owner.fill('#v1-userInputsSchema-0-key', 'ticket');
    await owner.fill('#v1-userInputsSchema-0-label', 'Ticket number');
    await owner.check('#v1-userInputsSchema-0-required');
    // a credential goes in a private param sent as a header; the hardcoded inputs' hint says why
    const priv = owner.locator('fieldset[data-schema=v1-privateParamsSchema]');
    await priv.getByRole('button', { name: 'Add a field' }).click();
    await owner.fill('#v1-privateParamsSchema-0-key', 'X_Api_Key');
    await owner.check('#v1-privateParamsSchema-0-header');
    const hardcoded = owner.locator('fieldset[data-schema=v1-hardcodedInputs]');
    await hardcoded.getByRole('button', { name: 'Add a hardcoded input' }).click();
    await owner.fill('#v1-hardcoded-0-key', 'region');
    await owner.fill('#v1-hardcoded-0-value', 'eu');
    assert.equal(
      await owner.locator('#v1-hardcoded-help').innerText(),
      'Stored and shown in plaintext to anyone who can read this plugin. Never put an API key or password here: use a private param with "Send as header", which is encrypted and never shown.',
    );
    await audit(owner, 'console-plugin-new');
    await owner.click('#create-plugin');
    await owner.getByRole('heading', { name: 'Guest check' }).waitFor();
    await owner.getByRole('button', { name: 'Finalize version 1' }).click();
    await owner.locator('tr[data-version="1"]').getByText('finalized').waitFor();
    await owner.getByRole('button', { name: 'Reveal secret' }).click();
    assert.match(await owner.getByTestId('plugin-secret').innerText(), /\S{16,}/);
    await owner.getByText('No errors recorded.').waitFor();
    await owner.getByText('No status webhook deliveries.').waitFor();
    await audit(owner, 'console-plugin');
    // the server holds what the editor built
    const doc = (await (await owner.request.get(`${base}/api/v0/plugin/guest-check`)).json()) as {
      plugin: {
        versions: Array<{
          finalized: boolean;
          userInputsSchema: unknown;
          privateParamsSchema: unknown;
          verificationCall: unknown;
        }>;
      };
    };
    assert.deepEqual(
      doc.plugin.versions.map((v) => [v.finalized, v.userInputsSchema, v.privateParamsSchema, v.verificationCall]),
      [
        [
          true,
          [{ key: 'ticket', label: 'Ticket number', type: 'string', required: true }],
          [{ key: 'X_Api_Key', label: 'X_Api_Key', type: 'string', headerField: true }],
          {
            uri: 'https://guests.example/verify',
            passAddress: true,
            hardcodedInputs: [{ key: 'region', label: 'region', type: 'string', value: 'eu' }],
          },
        ],
      ],
    );
  });

  test('the builder adds hosted and custom plugins; the claim page shows their text, link and inputs', async () => {
    await owner.goto(`${base}/#/claims/new`);
    await owner.fill('#claim-id', 'hosted-drop');
    await owner.fill('#claim-name', 'Hosted drop');
    await owner.locator('fieldset[data-plugin=numUses]').getByLabel('Maximum uses *').fill('5');
    for (const id of ['custom-instructions', 'url-clicker', 'guest-check']) {
      await owner.selectOption('#add-plugin', id);
      await owner.getByRole('button', { name: 'Add', exact: true }).click();
    }
    await owner
      .locator('fieldset[data-plugin=custom-instructions]')
      .getByLabel('Instructions *')
      .fill('Follow us, then claim.');
    await owner.locator('fieldset[data-plugin=url-clicker]').getByLabel('Link *').fill('https://example.org/follow');
    await owner.click('#save-claim');
    await owner.getByRole('heading', { name: 'Hosted drop' }).waitFor();
    const claim = (await (await owner.request.get(`${base}/api/v0/claim/hosted-drop`)).json()) as {
      claim: { plugins: Array<{ pluginId: string; version?: string }> };
    };
    assert.equal(claim.claim.plugins.find((p) => p.pluginId === 'guest-check')?.version, '1');
    await claimer.goto(`${base}/claim/hosted-drop`);
    await claimer.getByRole('heading', { name: 'Hosted drop' }).waitFor();
    assert.equal(await claimer.getByTestId('custom-instructions').innerText(), 'Follow us, then claim.');
    assert.equal(await claimer.getByTestId('url-clicker-link').getAttribute('href'), 'https://example.org/follow');
    // the custom plugin is checked once a ticket is typed (not before): its endpoint cannot be reached
    await claimer.getByLabel('Ticket number *').fill('A-1');
    await claimer.locator('.requirements li.fail').first().waitFor();
    await audit(claimer, 'claim-page-hosted');
  });

  test("the plugin's page shows the endpoint errors of those attempts and adds a version", async () => {
    await owner.goto(`${base}/#/plugins/view/guest-check`);
    // the claim page's simulation could not reach the endpoint: each failure is in the errors log.
    // The last test did not wait for them (the call thread may still be starting): reload until
    // the page lists one.
    const failure = owner.locator('td.error-text', { hasText: 'Plugin endpoint could not be called' }).first();
    for (let i = 0; i < 20; i++) {
      await owner.reload();
      // the errors section has loaded: either the list or its empty state
      await owner.getByText('No errors recorded.').or(failure).first().waitFor();
      if (await failure.isVisible()) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    await failure.waitFor();
    assert.match(
      await owner.locator('td', { hasText: 'hosted-drop' }).first().innerText(),
      /hosted-drop \/ guestcheck1/,
    );
    await owner.getByRole('button', { name: 'Add a version' }).click();
    await owner.fill('#next-uri', 'https://guests.example/verify2');
    await owner.getByRole('button', { name: 'Save the new version' }).click();
    await owner.getByRole('button', { name: 'Finalize version 2' }).waitFor();
    assert.equal(await owner.locator('tr[data-version="2"] code').innerText(), 'https://guests.example/verify2');
  });

  test('editing after someone else saved shows the version conflict', async () => {
    await owner.goto(`${base}/#/claims/edit/${claimId}`);
    await owner.locator('#claim-name').waitFor();
    await owner.getByLabel('Name').first().waitFor();
    await owner.waitForFunction(
      () =>
        (
          globalThis as unknown as { document: { querySelector(s: string): { value: string } | null } }
        ).document.querySelector('#claim-name')?.value === 'Spring drop',
    );
    const session = await signIn(t, { privateKey: OWNER_KEY, scopes: ['manageClaims'] });
    const put = await t.request('PUT', '/api/v0/claims', {
      token: session.accessToken,
      body: { claims: [{ claimId, metadata: { name: 'Saved elsewhere', description: '', image: '' } }] },
    });
    assert.equal(put.statusCode, 200, put.body);
    await owner.fill('#claim-name', 'My edit');
    await owner.click('#save-claim');
    assert.match(
      await owner.getByRole('alert').innerText(),
      /^Someone else saved this claim after you opened it\. Claim spring-drop is at version 1, not 0/,
    );
  });

  test('the account page lists the apps signed in to and revokes one', async () => {
    const session = await signIn(t, { privateKey: OWNER_KEY, scopes: ['completeClaims'] });
    await owner.goto(`${base}/#/account`);
    const row = owner.locator('li[data-app="Test App"]').first();
    await row.waitFor();
    await audit(owner, 'console-account');
    const before = await owner.locator('li[data-app="Test App"]').count();
    await row.getByRole('button', { name: 'Revoke Test App' }).click();
    await owner.waitForFunction(
      (n) =>
        (
          globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }
        ).document.querySelectorAll('li[data-app="Test App"]').length ===
        n - 1,
      before,
    );
    // the newest sign-in (this test's) was first in the list: its token no longer works
    const status = await t.request('POST', '/api/v0/auth/status', { token: session.accessToken, body: {} });
    assert.equal(status.json().signedIn, false);
  });

  test('a Keplr-style wallet signs in to the console with its native address (ADR-36)', async () => {
    const { context, address } = await keplrContext(browser, 'platform-1');
    const page = await context.newPage();
    page.setDefaultTimeout(PATIENCE_MS);
    await page.goto(`${base}/`);
    await page.click('#signin-keplr');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    assert.equal(await page.locator('.who').getAttribute('title'), address);
    await context.close();
  });

  test('when the console session ends, the next call brings the sign-in back', async () => {
    await owner.goto(`${base}/#/account`);
    await owner.getByRole('heading', { name: 'Account' }).waitFor();
    const ended = await t.ctx.db
      .updateTable('console_sessions')
      .set({ expires_at: t.clock.now() - 1 })
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    assert.ok(Number(ended.numUpdatedRows) >= 1);
    await owner.click('a[href="#/keys"]');
    await owner.locator('#signin-evm').waitFor();
  });

  test('every page was checked', () => {
    assert.deepEqual(
      checked.sort(),
      [
        'claim-page',
        'claim-page-claimed',
        'claim-page-connected',
        'claim-page-hosted',
        'console-account',
        'console-apps',
        'console-claim',
        'console-claim-builder',
        'console-keys',
        'console-plugin',
        'console-plugin-new',
        'console-signin',
        'console-store',
      ].sort(),
    );
  });
});
