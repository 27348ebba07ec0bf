// The portal's "What can I claim?" page in Chromium: a wallet signs in to the console and sees the
// claims it can claim now and those it can claim after a password, each linking to its claim page;
// a claim it cannot claim and a private list it is on behave as the API says. axe: no violations.
// test-run: once (a browser flow over the HTTP API, which the API's own tests cover on both databases; scripts/test.mjs)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { generatePrivateKey } from 'viem/accounts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { testAccount } from '../helpers/signin.ts';
import { PORTAL_DIST } from '../../src/portal/static.ts';
import { freePort } from '../helpers/process.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { walletContext } from '../helpers/browser-wallet.ts';
import { createClaim, manager, newClaimId, numUses, randomAddress } from '../claims/helpers.ts';

describe('portal: What can I claim?', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  const key = generatePrivateKey();
  const me = testAccount(key);
  const names = new Map<string, string>();

  before(async () => {
    if (!existsSync(join(PORTAL_DIST, 'index.html')))
      throw new Error('portal/dist is missing: run npm install (or npm run build:portal).');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startApp({ env: { PUBLIC_URL: base } });
    await t.app.listen({ port, host: '127.0.0.1' });
    const owner = await manager(t);
    const make = async (name: string, plugins: unknown[]) => {
      const claimId = newClaimId();
      await createClaim(t, owner.accessToken, {
        claimId,
        plugins,
        showInSearchResults: true,
        metadata: { name, description: '', image: '' },
      });
      names.set(name, claimId);
    };
    const list = (addresses: string[], hidden = false) =>
      hidden
        ? {
            pluginId: 'whitelist',
            instanceId: 'wl',
            publicParams: { hasPrivateList: true },
            privateParams: { list: { addresses } },
          }
        : { pluginId: 'whitelist', instanceId: 'wl', publicParams: { list: { addresses } }, privateParams: {} };
    await make('Spring drop', [numUses(10), list([me.platformAddress])]);
    await make('Members only', [numUses(10), list([me.platformAddress], true)]);
    await make('Secret word', [
      numUses(10),
      { pluginId: 'password', instanceId: 'pw', publicParams: {}, privateParams: { password: 'sesame' } },
    ]);
    await make('Not for you', [numUses(10), list([randomAddress()])]);
    await make('Paused', [numUses(10), { pluginId: 'halt', instanceId: 'h' }]);
    browser = await launchChromium();
    page = await (await walletContext(browser, key)).newPage();
    page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('a connected wallet sees its eligible and almost-eligible claims, with links', async () => {
    await page.goto(`${base}/#/eligible`);
    await page.click('#signin-evm');
    await page.getByRole('heading', { name: 'What can I claim?' }).waitFor();
    const items = page.getByRole('list', { name: 'Claims you can claim' }).getByRole('listitem');
    await items.first().waitFor();
    const rows = (await items.allInnerTexts()).map((s) => s.trim()).sort();
    assert.deepEqual(rows, [
      'Members only Eligible now',
      'Secret word Eligible after you enter a password',
      'Spring drop Eligible now',
    ]);
    const link = page.getByRole('link', { name: 'Spring drop' });
    assert.equal(await link.getAttribute('href'), `/claim/${names.get('Spring drop')}`);
    const { violations } = await new AxeBuilder({ page }).analyze();
    assert.deepEqual(
      violations.map((v) => `${v.id}: ${v.help}`),
      [],
    );
    await link.click();
    await page.waitForURL(`${base}/claim/${names.get('Spring drop')}`);
  });
});
