// The console's claim builder and its view of claimers, in Chromium on a real service: a CSV
// pasted into the whitelist editor (addresses in any column and form, duplicates merged, lines
// without an address listed), "one of my stores" (the service attaches the secret), the four
// templates, an API error shown beside its field in words, live attempts showing the claimer's own
// 0x form (found by either form), and the refused tries with the failed-guess counts. Every state
// gets an axe check with no violations at all.
// test-run: once (a browser flow over the HTTP API, which the API's own tests cover on both databases; scripts/test.mjs)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { startApp, type TestApp } from '../helpers/app.ts';
import { signIn, testAccount, type SignedIn } from '../helpers/signin.ts';
import { PORTAL_DIST } from '../../src/portal/static.ts';
import { freePort } from '../helpers/process.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { walletContext } from '../helpers/browser-wallet.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

const OWNER_KEY = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a' as const; // Hardhat #2, public test key
/** Waiting for the live list (the page polls every 2–30 s): no limit of its own, the context's PATIENCE_MS. */
const LIVE = { timeout: PATIENCE_MS };

describe('claim builder and claimers in the console (browser)', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let page: Page;
  let owner: SignedIn;

  async function noViolations(name: string): Promise<void> {
    const { violations } = await new AxeBuilder({ page }).analyze();
    assert.deepEqual(
      violations.map((v) => `${v.id} (${v.impact}): ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
      [],
      `accessibility violations on ${name}`,
    );
  }

  /** Waits for a locator; a timeout names what the page showed instead. */
  const shown = (locator: ReturnType<Page['locator']>, opts: { timeout?: number } = {}) =>
    locator.waitFor(opts).catch(async (err: Error) => {
      throw new Error(`${err.message}\nthe page says: ${await page.locator('main').innerText()}`);
    });

  const claimDoc = async (claimId: string) => {
    const res = await t.request('GET', `/api/v0/claim/${claimId}?fetchPrivateParams=true`, {
      token: owner.accessToken,
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().claim as { plugins: Array<{ pluginId: string; publicParams: any; privateParams: any }> };
  };

  const newClaim = async (claimId: string) => {
    await page.goto(`${base}/#/claims/new`);
    await page.reload(); // a fresh form, also when the previous page was a new claim too
    await page.locator('fieldset[data-plugin=numUses]').waitFor();
    await page.fill('#claim-id', claimId);
    await page.locator('fieldset[data-plugin=numUses]').getByLabel('Maximum uses *').fill('10');
  };
  const addPlugin = async (pluginId: string) => {
    await page.selectOption('#add-plugin', pluginId);
    await page.getByRole('button', { name: 'Add', exact: true }).click();
  };
  const useTemplate = async (id: string, n: number) => {
    await page.selectOption('#template', id);
    await page.fill('#template-n', String(n));
    await page.click('#apply-template');
  };
  const saveAndOpen = async (name: string) => {
    await page.click('#save-claim');
    await page
      .getByRole('heading', { name, level: 1 })
      .waitFor()
      .catch(async (err: Error) => {
        throw new Error(`${err.message}\nthe page says: ${await page.locator('main').innerText()}`);
      });
  };

  before(async () => {
    if (!existsSync(join(PORTAL_DIST, 'index.html')))
      throw new Error('portal/dist is missing: run npm install (or npm run build:portal).');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startApp({ env: { PUBLIC_URL: base } });
    await t.app.listen({ port, host: '127.0.0.1' });
    owner = await signIn(t, { privateKey: OWNER_KEY });
    browser = await launchChromium();
    page = await (await walletContext(browser, OWNER_KEY)).newPage();
    page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
    await page.goto(`${base}/`);
    await page.click('#signin-evm');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('a CSV pasted into the whitelist: addresses in any column and form, duplicates merged, bad lines by number, count before saving', async () => {
    const a = testAccount();
    const b = testAccount();
    const c = testAccount();
    const csv = [
      'name,wallet,note',
      `Ann,${a.address},first`,
      `Bob;${b.platformAddress};second`,
      `"Ann again","${a.platformAddress.toUpperCase()}"`,
      'Carl,0x1234,typo',
      '',
      `Dee\t${c.address.toLowerCase()}`,
    ].join('\n');
    await newClaim('csv-list');
    await addPlugin('whitelist');
    const wl = page.locator('fieldset[data-plugin=whitelist]');
    await wl.getByLabel('Public list of addresses').fill(csv);
    assert.equal(
      await wl.getByTestId('address-count').first().innerText(),
      '3 addresses will be saved (1 duplicate merged).',
    );
    const bad = await wl.getByTestId('bad-lines').innerText();
    assert.match(bad, /2 lines have no valid address and will be left out/);
    assert.match(bad, /Line 1: name,wallet,note \(no address in this line\)/);
    assert.match(bad, /Line 5: Carl,0x1234,typo \(0x1234: a 0x address has 40 hex digits\)/);
    await noViolations('builder with a pasted CSV');
    await saveAndOpen('csv-list');
    const list = (await claimDoc('csv-list')).plugins.find((p) => p.pluginId === 'whitelist')!.publicParams.list;
    assert.deepEqual(list.addresses, [a.platformAddress, b.platformAddress, c.platformAddress]);

    // an uploaded file goes through the same editor
    await newClaim('csv-upload');
    await addPlugin('whitelist');
    await page.setInputFiles('fieldset[data-plugin=whitelist] input[type=file] >> nth=1', {
      name: 'private.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(`address\n${b.address}\n${c.platformAddress}\n`),
    });
    const uploadedCount = page.locator('fieldset[data-plugin=whitelist] [data-testid=address-count]').nth(1);
    // the browser reads the file asynchronously: wait until the editor has counted it
    await uploadedCount.filter({ hasNotText: 'No addresses yet.' }).waitFor();
    assert.equal(await uploadedCount.innerText(), '2 addresses will be saved.');
    await saveAndOpen('csv-upload');
    const priv = (await claimDoc('csv-upload')).plugins.find((p) => p.pluginId === 'whitelist')!.privateParams.list;
    assert.deepEqual(priv.addresses, [b.platformAddress, c.platformAddress]);
  });

  test('an API error appears beside its field, in words', async () => {
    await newClaim('too-many');
    const uses = page.locator('fieldset[data-plugin=numUses]').getByLabel('Maximum uses *');
    await uses.fill('3000000000');
    await page.click('#save-claim');
    const error = page.locator('fieldset[data-plugin=numUses] .field-error');
    await error.waitFor();
    assert.equal(await error.innerText(), 'Must be an integer from 0 to 2147483647');
    assert.equal(await uses.getAttribute('aria-invalid'), 'true');
    const errorId = (await error.getAttribute('id'))!;
    assert.ok(((await uses.getAttribute('aria-describedby')) ?? '').split(' ').includes(errorId));
    assert.equal(
      await page.locator('form > p.error').innerText(),
      'The claim was not saved: check the highlighted field.',
    );
    assert.ok(!(await page.locator('main').innerText()).includes('claims[0]'));
    await noViolations('builder with a field error');
  });

  test('one of my stores: picked by name, the service attaches the secret, the page never shows it', async () => {
    const store = await t.request('POST', '/api/v0/dynamicStores', {
      token: owner.accessToken,
      body: { handlerId: 'addresses', label: 'Friends' },
    });
    assert.equal(store.statusCode, 200, store.body);
    const { dynamicDataId, dataSecret } = store.json().doc as { dynamicDataId: string; dataSecret: string };
    const friend = testAccount();
    const added = await t.request('POST', '/api/v0/storeActions/single', {
      token: owner.accessToken,
      body: { dynamicDataId, actionName: 'add', payload: { address: friend.address } },
    });
    assert.equal(added.statusCode, 200, added.body);

    await newClaim('from-store');
    await addPlugin('whitelist');
    const picker = page.locator('fieldset[data-plugin=whitelist]').getByLabel('Addresses from one of my stores');
    await picker.locator('option', { hasText: 'Friends (1 address)' }).waitFor({ state: 'attached' });
    await picker.selectOption({ label: 'Friends (1 address)' });
    assert.ok(!(await page.content()).includes(dataSecret));
    await noViolations('builder with the store picker');
    await saveAndOpen('from-store');
    assert.ok(!(await page.content()).includes(dataSecret));
    // the claim reads the store: the friend passes, a stranger does not
    const sim = (address: string) =>
      t.request('POST', `/api/v0/claims/simulate/from-store/${address}`, { body: { _expectedVersion: -1 } });
    assert.equal((await sim(friend.address)).statusCode, 200);
    assert.deepEqual((await sim(testAccount().address)).json(), { errorMessage: 'User not in whitelist' });
    // editing and saving again keeps the store attached, still without showing the secret
    await page.goto(`${base}/#/claims/edit/from-store`);
    await picker.waitFor();
    assert.equal(await picker.inputValue(), dynamicDataId);
    assert.ok(!(await page.content()).includes(dataSecret));
    await page.fill('#claim-name', 'From my store');
    await saveAndOpen('From my store');
    assert.equal((await sim(friend.address)).statusCode, 200);
  });

  test('templates: each pre-fills the form, and everything stays editable', async () => {
    // password + N uses
    await newClaim('tpl-password');
    await useTemplate('password', 25);
    assert.equal(await page.inputValue('#claim-name'), 'Password claim');
    assert.deepEqual(await page.locator('fieldset.plugin').evaluateAll((f) => f.map((x) => x.dataset.plugin)), [
      'numUses',
      'password',
    ]);
    const uses = page.locator('fieldset[data-plugin=numUses]').getByLabel('Maximum uses *');
    assert.equal(await uses.inputValue(), '25');
    await page.locator('fieldset[data-plugin=password]').getByLabel('Password *').fill('letmein');
    await uses.fill('10');
    await noViolations('builder from the password template');
    await saveAndOpen('Password claim');
    const pw = await claimDoc('tpl-password');
    assert.equal(pw.plugins[0]!.publicParams.maxUses, 10);
    assert.equal(pw.plugins[1]!.privateParams.password, 'letmein');

    // allowlist + one per address
    await newClaim('tpl-allowlist');
    await useTemplate('allowlist', 3);
    const wl = page.locator('fieldset[data-plugin=whitelist]');
    assert.equal(await wl.getByLabel('Maximum claims per address').inputValue(), '1');
    const member = testAccount();
    await wl.getByLabel('Public list of addresses').fill(`${member.address}\n`);
    await saveAndOpen('Allowlist claim');
    const allow = await claimDoc('tpl-allowlist');
    assert.equal(allow.plugins[0]!.publicParams.maxUses, 3);
    assert.deepEqual(allow.plugins[1]!.publicParams, {
      list: { addresses: [member.platformAddress], whitelist: true },
      maxUsesPerAddress: 1,
    });

    // token holders (must own badges) + N uses
    await newClaim('tpl-holders');
    await useTemplate('holders', 50);
    const holders = page.locator('fieldset[data-plugin=must-own-badges]');
    const requirement = JSON.parse(await holders.getByLabel('Ownership requirements *').inputValue());
    assert.equal(requirement.assets[0].collectionId, '1');
    requirement.assets[0].collectionId = '7';
    await holders.getByLabel('Ownership requirements *').fill(JSON.stringify(requirement));
    await noViolations('builder from the token-holders template');
    await saveAndOpen('Token holders claim');
    const held = await claimDoc('tpl-holders');
    assert.equal(held.plugins[0]!.publicParams.maxUses, 50);
    assert.equal(held.plugins[1]!.pluginId, 'must-own-badges');
    assert.equal(held.plugins[1]!.publicParams.ownershipRequirements.assets[0].collectionId, '7');

    // N one-time codes, with the codes to download
    await newClaim('tpl-codes');
    await useTemplate('codes', 5);
    assert.equal(await page.locator('fieldset[data-plugin=codes]').getByLabel('Number of codes *').inputValue(), '5');
    await saveAndOpen('One-time codes claim');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download 5 codes (CSV)' }).click(),
    ]);
    const rows = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\n');
    assert.equal(rows[0], 'index,code');
    assert.equal(rows.length, 6);
    // a code from the file claims
    const code = rows[3]!.split(',')[1];
    const res = await t.request('POST', `/api/v0/claims/simulate/tpl-codes/${testAccount().address}`, {
      body: { _expectedVersion: -1, codes1: { code } },
    });
    assert.equal(res.statusCode, 200, res.body);
  });

  test("live attempts show the claimer's own 0x form, found by either form; refused tries and failed guesses", {
    timeout: 900_000,
  }, async () => {
    await page.goto(`${base}/#/claims/view/tpl-password`);
    await page.reload();
    await Promise.all([
      page.getByText('No attempts yet.').waitFor(),
      page.getByText('No refused tries.').waitFor(),
    ]).catch(async (err: Error) => {
      throw new Error(`${err.message}\nthe page says: ${await page.locator('main').innerText()}`);
    });
    const friend = testAccount();
    const complete = (password: string) =>
      t.request('POST', `/api/v0/claims/complete/tpl-password/${friend.address}`, {
        body: { _expectedVersion: -1, password1: { password } },
      });
    // a wrong password first: refused, nothing queued, but the owner sees the try
    const refused = await complete('guess');
    assert.equal(refused.statusCode, 400, refused.body);
    const refusals = page.getByTestId('refusals');
    await refusals.waitFor(LIVE);
    const row = await refusals.locator('tbody tr').first().innerText();
    assert.match(row, new RegExp(friend.address));
    assert.match(row, /Password\s+password1/);
    assert.match(row, new RegExp(refused.json().errorMessage.replace(/[.]/g, '\\.')));
    // the counts the API returns (the owner's own simulate box adds its empty guesses to them)
    await shown(page.getByTestId('failed-guesses'), LIVE);
    const guesses = (await t.request('GET', '/api/v0/claim/tpl-password', { token: owner.accessToken })).json().claim
      ._failedGuesses as { total: number; lastHour: number };
    assert.ok(guesses.total >= 1);
    assert.match(
      await page.getByTestId('failed-guesses').innerText(),
      /^Wrong passwords or codes: \d+ in all, \d+ in the last hour\.$/,
    );

    // then the right one: the attempt appears without a reload, as the friend knows their address
    assert.equal((await complete('letmein')).statusCode, 200);
    const cell = page.getByTestId('claimer-address').filter({ hasText: friend.address }).first();
    await page.locator('table:not([data-testid]) tbody tr').first().waitFor(LIVE);
    await page.getByTestId('attempts-total').filter({ hasText: '(1)' }).waitFor(LIVE);
    await cell.waitFor(LIVE);
    const attemptRow = await page.locator('table:not([data-testid]) tbody tr').first().innerText();
    assert.match(attemptRow, new RegExp(`${friend.address}[\\s\\S]*also ${friend.platformAddress}`));
    assert.match(attemptRow, /claim #0/);
    await noViolations('claim view with attempts and refused tries');

    // search by either form
    for (const form of [friend.platformAddress, friend.address.toLowerCase()]) {
      await page.fill('#attempt-search', form);
      await page.getByRole('button', { name: 'Find', exact: true }).click();
      await page.getByRole('button', { name: 'Show all' }).waitFor();
      await page.getByTestId('attempts-total').filter({ hasText: '(1)' }).waitFor();
    }
    await page.fill('#attempt-search', testAccount().address);
    await page.getByRole('button', { name: 'Find', exact: true }).click();
    await page.getByText('No attempts by this address.').waitFor();
    await noViolations('claim view searching attempts');
  });
});
