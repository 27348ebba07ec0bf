// The operator's way into the console without a wallet: `platform console-link --address A` prints
// a one-time sign-in link (the secret in the URL fragment), stored as a hash, logged without the
// secret; POST /api/v0/console/link turns it into a console session once, before it expires, from
// the console's own origin only. In Chromium, the link opened at the wrong origin (localhost for
// 127.0.0.1) offers the right one, which signs in.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser } from 'playwright-core';
import { createTestDatabase, startApp, type TestApp, type TestDatabase } from '../helpers/app.ts';
import { cliJson, runCli } from '../helpers/cli.ts';
import { testAccount } from '../helpers/signin.ts';
import { freePort } from '../helpers/process.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { DATABASE_INDEPENDENT } from '../helpers/once.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { sha256Hex } from '../../src/shared/crypto.ts';
import { createConsoleLink } from '../../src/portal/console-links.ts';

/** A subprocess limit no slow machine reaches: the CLI is judged by its answer, not its speed. */
const CLI_LIMIT_MS = 300_000;
const tokenOf = (url: string) => url.split('#/link/')[1]!;

describe('platform console-link and POST /api/v0/console/link', () => {
  let db: TestDatabase;
  let t: TestApp;
  let base: string;
  let port: number;
  const clock = new ManualClock();

  const use = (token: string, origin = base) =>
    t.request('POST', '/api/v0/console/link', {
      apiKey: null,
      headers: { origin, 'sec-fetch-site': 'same-origin' },
      body: { token },
    });

  before(async () => {
    db = createTestDatabase();
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startApp({ database: db, env: { PUBLIC_URL: base }, clock });
  });
  after(() => t?.close());

  test('the CLI prints a one-time link; the database keeps only its hash; the audit line has no secret', async () => {
    const who = testAccount();
    const r = await runCli(
      ['console-link', '--address', who.address, '--expires', '5m'],
      { ...db.env, PUBLIC_URL: base },
      CLI_LIMIT_MS,
    );
    const out = cliJson(r);
    assert.deepEqual(Object.keys(out), ['url', 'id', 'address', 'platformAddress', 'expires_at']);
    assert.match(out.url, new RegExp(`^${base.replace(/\./g, '\\.')}/#/link/${out.id}\\.[0-9a-f]{64}$`));
    assert.equal(out.address, who.address);
    assert.equal(out.platformAddress, who.platformAddress);
    const row = await t.ctx.db
      .selectFrom('console_links')
      .selectAll()
      .where('link_id', '=', out.id)
      .executeTakeFirstOrThrow();
    const secret = tokenOf(out.url).split('.')[1]!;
    assert.equal(row.token_hash, sha256Hex(secret));
    assert.equal(Number(row.expires_at) - Number(row.created_at), 5 * 60_000);
    assert.equal(new Date(Number(row.expires_at)).toISOString(), out.expires_at);
    assert.match(r.stderr, /console sign-in link created/);
    assert.ok(!r.stderr.includes(secret), 'the log never holds the secret');
    assert.ok(!JSON.stringify(row).includes(secret), 'the database never holds the secret');

    // the link signs in as the address, once
    clock.set(Number(row.created_at) + 1000);
    const res = await use(tokenOf(out.url));
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.signedIn, true);
    assert.equal(body.address, who.address);
    assert.equal(body.platformAddress, who.platformAddress);
    assert.equal(body.chain, 'ETH');
    assert.match(
      String(res.headers['set-cookie']),
      /^platform_console=s\.[0-9a-f]{32}\.[0-9a-f]{64}; Path=\/; HttpOnly; SameSite=Strict/,
    );
    const cookie = String(res.headers['set-cookie']).split(';')[0]!;
    const session = await t.request('GET', '/api/v0/console/session', { apiKey: null, headers: { cookie } });
    assert.equal(session.json().signedIn, true);
    assert.equal(session.json().platformAddress, who.platformAddress);
    // a console-only route opens with that cookie
    const keys = await t.request('GET', '/api/v0/apiKeys', {
      apiKey: null,
      headers: { cookie, origin: base, 'sec-fetch-site': 'same-origin' },
    });
    assert.equal(keys.statusCode, 200, keys.body);

    const again = await use(tokenOf(out.url));
    assert.equal(again.statusCode, 401);
    assert.deepEqual(again.json(), {
      errorMessage: 'This sign-in link was already used. Ask the operator for a new one (platform console-link).',
      unauthorized: true,
    });
  });

  test('a usage error from the CLI: a bad address or lifetime exits 2 with the reason', async () => {
    const r = await runCli(
      ['console-link', '--address', 'nobody', '--expires', '25h'],
      { ...db.env, PUBLIC_URL: base },
      CLI_LIMIT_MS,
    );
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--address/);
    assert.equal(r.stdout, '');
  });

  test('expired, wrong, malformed, or from another origin: refused with the reason', async () => {
    const who = testAccount();
    const link = await createConsoleLink(t.ctx, { address: who.address, ttlMs: 60_000 });
    const token = tokenOf(link.url);
    const wrong = `${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`;
    assert.deepEqual((await use(wrong)).json(), {
      errorMessage: 'This sign-in link is not valid. Ask the operator for a new one (platform console-link).',
      unauthorized: true,
    });
    const malformed = await use('not-a-token');
    assert.equal(malformed.statusCode, 400);
    assert.deepEqual(malformed.json(), {
      errorMessage: 'token must be the part of a console sign-in link after #/link/ (<id>.<secret>)',
    });
    const foreign = await use(token, `http://localhost:${port}`);
    assert.equal(foreign.statusCode, 403);
    assert.deepEqual(foreign.json(), {
      errorMessage: `Cross-site request refused: Origin http://localhost:${port} is not ${base}.`,
    });
    await assert.rejects(createConsoleLink(t.ctx, { address: who.address, ttlMs: 25 * 3_600_000 }), {
      message: '--expires must be more than 0 and at most 24h',
    });
    clock.advance(60_000);
    const late = await use(token);
    assert.equal(late.statusCode, 401);
    assert.deepEqual(late.json(), {
      errorMessage: `This sign-in link expired at ${new Date(link.expiresAt).toISOString()}. Ask the operator for a new one (platform console-link).`,
      unauthorized: true,
    });
    // neither the refused tries nor the expiry spent it: the row is unused
    const row = await t.ctx.db
      .selectFrom('console_links')
      .selectAll()
      .where('link_id', '=', link.linkId)
      .executeTakeFirstOrThrow();
    assert.equal(row.used_at, null);
  });
});

describe('console-link in Chromium: a wrong-origin visit offers the right link', DATABASE_INDEPENDENT, () => {
  let t: TestApp;
  let browser: Browser;
  let port: number;

  before(async () => {
    port = await freePort();
    t = await startApp({ env: { PUBLIC_URL: `http://127.0.0.1:${port}` } });
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('opened at localhost, the page points at 127.0.0.1; there the link signs in and leaves the address bar', async () => {
    const who = testAccount();
    const link = await createConsoleLink(t.ctx, { address: who.address });
    const page = await (await browser.newContext()).newPage();
    await page.goto(link.url.replace('127.0.0.1', 'localhost'));
    await page.getByRole('heading', { name: 'Open the console at its own address' }).waitFor();
    const right = page.getByTestId('right-origin');
    assert.equal(await right.getAttribute('href'), link.url);
    assert.equal(await right.innerText(), `Continue at http://127.0.0.1:${port}`);
    const { violations } = await new AxeBuilder({ page }).analyze();
    assert.deepEqual(
      violations.map((v) => v.id),
      [],
    );
    // nothing was spent at the wrong origin
    const row = await t.ctx.db
      .selectFrom('console_links')
      .select('used_at')
      .where('link_id', '=', link.linkId)
      .executeTakeFirstOrThrow();
    assert.equal(row.used_at, null);
    await right.click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    assert.equal(new URL(page.url()).hash, '#/keys');
    assert.equal(await page.locator('.who').getAttribute('title'), who.platformAddress);
    await page.context().close();
  });
});
