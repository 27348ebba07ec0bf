// The north-star task, scripted in headless Chromium with injected test wallets standing for the
// browser extension, and timed:
//   1. sign in to the console with the owner's wallet;
//   2. create a password claim with 10 uses;
//   3. create a second claim gated by a whitelist that arrives as a CSV;
//   4. a friend (another wallet) claims the first on the desktop and the second on a 390×844 phone;
//   5. the owner sees the friend's attempt in the console.
// It prints the time of each step and of the whole task (goal: under 3 minutes, `npm install`
// included, which this script does not count: time `npm ci` yourself on a clean clone).
//
//   node bench/north-star.ts                   a private SQLite database, a fresh service on loopback
//   NORTH_STAR_CSV_PASTE=0 node bench/north-star.ts   paste the extracted addresses instead of the raw CSV
//
// The console's forms are changing: every selector the script uses is in SELECTORS below, and the
// steps that will change with the claim builder's CSV paste and templates are marked there.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startApp } from '../test/helpers/app.ts';
import { walletContext } from '../test/helpers/browser-wallet.ts';
import { launchChromium } from '../test/helpers/chromium.ts';
import { freePort } from '../test/helpers/process.ts';
import { testAccount } from '../test/helpers/signin.ts';
import { PORTAL_DIST } from '../src/portal/static.ts';

const PHONE = { width: 390, height: 844 };
const PASSWORD = 'spring is here';

/** Every place the script touches the pages. Adapt here when the console changes. */
const SELECTORS = {
  // console sign-in
  signInButton: '#signin-evm',
  signedInHeading: 'API keys',
  // claim builder (#/claims/new)
  claimId: '#claim-id',
  claimName: '#claim-name',
  numUsesFieldset: 'fieldset[data-plugin=numUses]',
  maxUsesLabel: 'Maximum uses *',
  addPluginSelect: '#add-plugin',
  addPluginButton: 'Add',
  passwordFieldset: 'fieldset[data-plugin=password]',
  passwordLabel: 'Password *',
  whitelistFieldset: 'fieldset[data-plugin=whitelist]',
  // The whitelist editor takes any text (addresses found in any column, duplicates merged, a count
  // shown): the raw CSV is pasted. NORTH_STAR_CSV_PASTE=0 pastes only the extracted addresses, as a
  // person had to before the editor read CSV.
  whitelistBoxLabel: 'Public list of addresses',
  saveClaim: '#save-claim',
  // claim page (/claim/{id})
  connect: '#connect-evm',
  claimer: '[data-testid=claimer]',
  claimButton: '#claim-button',
  live: '[data-testid=live-check]',
  settled: '[data-testid=claim-place]',
  // console claim view (#/claims/view/{id}): the attempts table. DEPENDS ON THE CONSOLE WORK: the
  // friend's 0x form and live updates; attemptRow() matches either address form, and the script
  // reloads the page (harmless once the list updates by itself).
  attemptsTable: 'table',
};
const WHITELIST_TAKES_CSV = process.env.NORTH_STAR_CSV_PASTE !== '0';

const attemptRow = (page: Page, addresses: string[]) =>
  page.locator(`${SELECTORS.attemptsTable} tr`, {
    hasText: new RegExp(addresses.map((a) => a.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'i'),
  });

if (!existsSync(join(PORTAL_DIST, 'index.html'))) throw new Error('portal/dist is missing: npm run build:portal');

const steps: Array<[string, number]> = [];
let last = performance.now();
const started = last;
const step = (name: string) => {
  const now = performance.now();
  steps.push([name, now - last]);
  last = now;
};

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const t = await startApp({ env: { PUBLIC_URL: base, DATABASE_URL: '' } });
await t.app.listen({ port, host: '127.0.0.1' });
const browser = await launchChromium();
step('service and browser started');

const ownerKey = generatePrivateKey();
const friendKey = generatePrivateKey();
const friend = testAccount(friendKey);
const friendEvm = privateKeyToAccount(friendKey).address;
// the CSV as it arrives: a header, a name column, the address in the second column, a duplicate
const csv = [
  'name,wallet,note',
  `Friend,${friendEvm},first`,
  ...Array.from({ length: 25 }, (_, i) => `Guest ${i},${testAccount().address},`),
  `Friend again,${friendEvm},duplicate`,
].join('\n');

/** Puts the CSV into the whitelist editor: raw once the editor reads CSV, else the address column. */
async function pasteCsv(page: Page): Promise<void> {
  const text = WHITELIST_TAKES_CSV
    ? csv
    : [...new Set(csv.match(/\b0x[0-9a-fA-F]{40}\b|\bbb1[02-9ac-hj-np-z]{38}\b/g) ?? [])].join('\n');
  await page.locator(SELECTORS.whitelistFieldset).getByLabel(SELECTORS.whitelistBoxLabel).fill(text);
}

async function newClaim(page: Page, id: string, name: string, plugins: string[], fill: () => Promise<void>) {
  await page.goto(`${base}/#/claims/new`);
  await page.fill(SELECTORS.claimId, id);
  await page.fill(SELECTORS.claimName, name);
  await page.locator(SELECTORS.numUsesFieldset).getByLabel(SELECTORS.maxUsesLabel).fill('10');
  for (const plugin of plugins) {
    await page.selectOption(SELECTORS.addPluginSelect, plugin);
    await page.getByRole('button', { name: SELECTORS.addPluginButton, exact: true }).click();
  }
  await fill();
  await page.click(SELECTORS.saveClaim);
  await page.getByRole('heading', { name }).waitFor();
}

async function claimAsFriend(id: string, viewport: { width: number; height: number }, password?: string) {
  const context = await walletContext(browser, friendKey);
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  await page.setViewportSize(viewport);
  await page.goto(`${base}/claim/${id}`);
  await page.click(SELECTORS.connect);
  await page.locator(SELECTORS.claimer).waitFor();
  if (password) await page.getByLabel(SELECTORS.passwordLabel).fill(password);
  await page.locator(SELECTORS.live).waitFor();
  await page.click(SELECTORS.claimButton);
  const place = (await page.locator(SELECTORS.settled).innerText()).trim();
  await context.close();
  return place;
}

try {
  const owner = await (await walletContext(browser, ownerKey)).newPage();
  owner.setDefaultTimeout(60_000);
  await owner.goto(`${base}/`);
  await owner.click(SELECTORS.signInButton);
  await owner.getByRole('heading', { name: SELECTORS.signedInHeading }).waitFor();
  step('1. owner signed in to the console');

  // DEPENDS ON THE CLAIM BUILDER WORK: a "password + N uses" template will pre-fill this form.
  await newClaim(owner, 'spring-password', 'Spring password drop', ['password'], async () => {
    await owner.locator(SELECTORS.passwordFieldset).getByLabel(SELECTORS.passwordLabel).fill(PASSWORD);
  });
  step('2. password claim with 10 uses created');

  // DEPENDS ON THE CLAIM BUILDER WORK: the CSV paste (and an "allowlist" template).
  await newClaim(owner, 'spring-allowlist', 'Spring allowlist drop', ['whitelist'], () => pasteCsv(owner));
  step(
    `3. whitelist claim created from a CSV${WHITELIST_TAKES_CSV ? '' : ' (address column extracted by the script)'}`,
  );

  const desktop = await claimAsFriend('spring-password', { width: 1280, height: 800 }, PASSWORD);
  step(`4a. friend claimed the password claim on the desktop: "${desktop}"`);
  const phone = await claimAsFriend('spring-allowlist', PHONE);
  step(`4b. friend claimed the whitelist claim on a 390×844 phone: "${phone}"`);

  for (const id of ['spring-password', 'spring-allowlist']) {
    await owner.goto(`${base}/#/claims/view/${id}`);
    await owner.reload();
    await attemptRow(owner, [friend.platformAddress, friendEvm]).first().waitFor();
  }
  step("5. owner sees the friend's attempts in the console");
} finally {
  await browser.close();
  await t.close();
}

const total = (performance.now() - started) / 1000;
for (const [name, ms] of steps) console.log(`${(ms / 1000).toFixed(1).padStart(7)} s  ${name}`);
console.log(`${total.toFixed(1).padStart(7)} s  north-star task in total (goal: under 180 s with npm install)`);
