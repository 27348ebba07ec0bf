// The calm claim page in Chromium: nothing is judged before the claimer acts (a requirement that
// needs input stays neutral, and no error shows), each failure's text appears once, the Claim
// button is disabled while the check fails and says why, a claim ends in a settled state that a
// reload shows again ("You were #1 of 10"), and the page works at phone size (390×844). The owner's
// "Simulate as address" box is as calm. Every state gets an axe check.
// test-run: once (a browser flow over the HTTP API, which the API's own tests cover on both databases; scripts/test.mjs)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { generatePrivateKey } from 'viem/accounts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { testAccount } from '../helpers/signin.ts';
import { freePort } from '../helpers/process.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { walletContext } from '../helpers/browser-wallet.ts';
import { consoleRequest, consoleSignIn } from './helpers.ts';

const OWNER_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' as const; // Hardhat #1, public test key
const PHONE = { width: 390, height: 844 };
const numUses = (maxUses: number) => ({ pluginId: 'numUses', instanceId: 'numUses', publicParams: { maxUses } });
const password = { pluginId: 'password', instanceId: 'pw', privateParams: { password: 'open sesame' } };

describe('the claim page is calm', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  const friend = testAccount(generatePrivateKey());

  async function axe(page: Page, name: string): Promise<void> {
    const { violations } = await new AxeBuilder({ page }).analyze();
    assert.deepEqual(
      violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
      [],
      `accessibility violations on ${name}`,
    );
  }

  /** How many times `text` appears in what the page shows. */
  const times = async (page: Page, text: string) => (await page.locator('main').innerText()).split(text).length - 1;

  async function friendPage(viewport?: { width: number; height: number }): Promise<Page> {
    const context = await walletContext(browser, friend.privateKey);
    if (viewport) await context.pages()[0]?.setViewportSize(viewport);
    const page = await context.newPage();
    if (viewport) await page.setViewportSize(viewport);
    page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
    return page;
  }

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startApp({ env: { PUBLIC_URL: base } });
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();
    const owner = await consoleSignIn(t, { privateKey: OWNER_KEY });
    const created = await consoleRequest(t, owner, 'POST', '/api/v0/claims', {
      claims: [
        {
          claimId: 'calm',
          metadata: { name: 'Calm drop', description: '', image: '' },
          plugins: [
            numUses(10),
            password,
            {
              pluginId: 'whitelist',
              instanceId: 'wl',
              publicParams: { list: { addresses: [friend.platformAddress] }, maxUsesPerAddress: 1 },
            },
          ],
        },
        { claimId: 'pocket', metadata: { name: 'Pocket drop', description: '', image: '' }, plugins: [numUses(10)] },
      ],
    });
    assert.equal(created.statusCode, 200, created.body);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('before any input: the password stays neutral, no error shows, and the disabled button says what is missing', async () => {
    const page = await friendPage();
    await page.goto(`${base}/claim/calm`);
    await page.getByRole('heading', { name: 'Calm drop' }).waitFor();
    await page.click('#connect-evm');
    await page.getByTestId('claimer').waitFor();
    await page.locator('#claim-reason').filter({ hasText: 'Fill in Password to claim.' }).waitFor();
    // the whitelist needs no input: it is checked at once and passes; the password is not judged yet
    await page.locator('li[data-instance=wl].pass').waitFor();
    assert.equal(await page.locator('li[data-instance=pw]').getAttribute('class'), '');
    assert.equal(await page.locator('li.fail, .check-text, [role=alert], p.error').count(), 0);
    assert.equal(await times(page, '✗'), 0);
    assert.equal(await times(page, 'Incorrect password.'), 0);
    assert.equal(await page.locator('#claim-button').isDisabled(), true);
    assert.equal(await page.locator('#claim-button').getAttribute('aria-describedby'), 'claim-reason');
    await axe(page, 'claim page before input');
    await page.context().close();
  });

  test('a wrong password: its text once, beside its requirement; the button is disabled and names the requirement', async () => {
    const page = await friendPage();
    await page.goto(`${base}/claim/calm`);
    await page.click('#connect-evm');
    await page.getByLabel('Password *').pressSequentially('nope', { delay: 30 });
    await page.locator('li[data-instance=pw].fail').waitFor();
    await page.locator('#claim-reason').filter({ hasText: 'Not yet' }).waitFor();
    assert.equal(await page.locator('li[data-instance=pw] .check-text').innerText(), 'Incorrect password.');
    assert.equal(await page.locator('#claim-reason').innerText(), 'Not yet: Password does not pass (see above).');
    assert.equal(await times(page, 'Incorrect password.'), 1);
    assert.equal(await page.locator('#claim-button').isDisabled(), true);
    // Enter in the form does not claim past a failing check either
    await page.getByLabel('Password *').press('Enter');
    assert.equal(await times(page, 'Incorrect password.'), 1);
    assert.equal(await page.locator('[data-testid=settled], [data-testid=result]').count(), 0);
    await axe(page, 'claim page with a wrong password');
    await page.context().close();
  });

  test('the right password: claim, "You were #1 of 10", and the settled state survives a reload', async () => {
    const page = await friendPage();
    await page.goto(`${base}/claim/calm`);
    await page.click('#connect-evm');
    await page.getByLabel('Password *').fill('open sesame');
    await page.getByTestId('live-check').filter({ hasText: 'You meet every requirement.' }).waitFor();
    assert.equal(await page.locator('#claim-button').isDisabled(), false);
    assert.equal(await page.locator('#claim-reason').count(), 0);
    await page.click('#claim-button');
    await page.getByTestId('settled').waitFor();
    assert.equal(await page.getByTestId('claim-place').innerText(), 'You were #1 of 10.');
    assert.equal(await page.getByTestId('uses').innerText(), '1 of 10 claimed');
    // the API keeps the zero-based number
    const success = await t.request('GET', `/api/v0/claims/success/calm/${friend.platformAddress}`);
    assert.deepEqual(success.json(), { successCount: 1, claimNumbers: [0] });
    await axe(page, 'claim page, claimed');

    await page.reload();
    await page.getByTestId('settled').waitFor();
    assert.equal(await page.getByTestId('claim-place').innerText(), 'You were #1 of 10.');
    assert.equal(await page.locator('#claim-button').count(), 0);
    assert.equal(await page.locator('li.fail, [role=alert], p.error').count(), 0);
    await axe(page, 'claim page, claimed, after a reload');

    // claiming again: the whitelist's per-address limit is used up, said once, and the button stays disabled
    await page.getByRole('button', { name: 'Claim again' }).click();
    await page.getByLabel('Password *').fill('open sesame');
    await page.locator('li[data-instance=wl].fail').waitFor();
    await page.locator('#claim-reason').waitFor();
    const limit = await page.locator('li[data-instance=wl] .check-text').innerText();
    assert.equal(await times(page, limit), 1);
    assert.equal(await page.locator('#claim-button').isDisabled(), true);
    assert.equal(await page.locator('#claim-reason').innerText(), 'Not yet: Whitelist does not pass (see above).');
    await page.context().close();
  });

  test('at phone size (390×844): connect, claim, and read the result without scrolling sideways', async () => {
    const page = await friendPage(PHONE);
    await page.goto(`${base}/claim/pocket`);
    await page.getByRole('heading', { name: 'Pocket drop' }).waitFor();
    await axe(page, 'claim page on a phone');
    await page.click('#connect-evm');
    await page.getByTestId('live-check').filter({ hasText: 'You meet every requirement.' }).waitFor();
    const button = page.locator('#claim-button');
    const box = await button.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= PHONE.width, `the button fits: ${JSON.stringify(box)}`);
    await button.click();
    await page.getByTestId('settled').waitFor();
    assert.equal(await page.getByTestId('claim-place').innerText(), 'You were #1 of 10.');
    const width = await page.evaluate(
      () =>
        (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement
          .scrollWidth,
    );
    assert.ok(width <= PHONE.width, `no sideways scroll at phone size (page is ${width}px wide)`);
    await axe(page, 'claim page on a phone, claimed');
    await page.context().close();
  });

  test("the owner's Simulate as address box: neutral until the password is typed, then the plugin's text once", async () => {
    const context = await walletContext(browser, OWNER_KEY);
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.click('#signin-evm');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.goto(`${base}/#/claims/view/calm`);
    await page.getByRole('heading', { name: 'Simulate as address' }).waitFor();
    await page.getByTestId('simulate-result').filter({ hasText: 'Fill in Password to simulate.' }).waitFor();
    assert.equal(await page.getByTestId('simulate-result').getAttribute('class'), 'muted');
    await page.fill('#simulate-address', friend.platformAddress);
    await page.locator('#sim-pw-password').pressSequentially('nope', { delay: 30 });
    await page.getByTestId('simulate-result').filter({ hasText: 'Incorrect password.' }).waitFor();
    assert.equal(await page.getByTestId('simulate-result').getAttribute('class'), 'error');
    assert.equal(await times(page, 'Incorrect password.'), 1);
    await axe(page, 'console simulate box');
    await context.close();
  });
});
