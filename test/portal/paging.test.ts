// Paging in the console's lists (usePagedList and MoreButton in portal/src/ui.tsx) in a real browser
// (Debian's chromium driven by playwright-core) on a real service, with one item more than a page
// made through the API: my claims ("More claims") and a claim's attempts ("More attempts": successes
// and the queue's failures; its route answers `total`). The first page shows exactly one page and
// the button; the click asks for the next bookmark and shows every item once in the service's
// order; the button then goes; the attempts' total stays the full count. The console session is
// the HTTP sign-in of ./helpers.ts, its cookie given to the browser.
// test-run: once (a browser flow over the HTTP API, which the API's own tests cover on both databases; scripts/test.mjs)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.ts';
import { testAccount } from '../helpers/signin.ts';
import { PORTAL_DIST } from '../../src/portal/static.ts';
import { drainQueue } from '../../src/claims/queue.ts';
import { DEFAULT_PAGE_SIZE } from '../../src/shared/pagination.ts';
import { consoleRequest, consoleSignIn, type ConsoleSignIn } from './helpers.ts';
import { freePort } from '../helpers/process.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

// GET /api/v0/claims/mine (src/portal/routes.ts, "25 per page") and GET /api/v0/claims/{claimId}/attempts
// (src/claims/attempts.ts) both page with paginate's default size.
const PAGE = DEFAULT_PAGE_SIZE;

const numUses = (maxUses: number) => ({
  pluginId: 'numUses',
  instanceId: 'numUses',
  publicParams: { maxUses },
  privateParams: {},
});

describe('paged console lists in a browser ("More …")', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  before(async () => {
    if (!existsSync(join(PORTAL_DIST, 'index.html')))
      throw new Error('portal/dist is missing: run npm install (or npm run build:portal).');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // no worker: the attempts are resolved by drainQueue, so the test waits on nothing
    t = await startApp({ env: { PUBLIC_URL: base, RUN_WORKER: 'false' } });
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A new wallet's console session, and a browser page holding its cookie. */
  async function consolePage(): Promise<{ session: ConsoleSignIn; page: Page }> {
    const session = await consoleSignIn(t);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const [name, value] = session.cookie.split('=');
    await context.addCookies([{ name, value, url: base, httpOnly: true, sameSite: 'Strict' }]);
    const page = await context.newPage();
    page.setDefaultTimeout(PATIENCE_MS);
    page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
    page.on('console', (m) => m.type() === 'error' && console.error(`console: ${m.text()}`));
    return { session, page };
  }

  /** GETs the route's two pages (the second with the first's bookmark) through the console session. */
  async function twoPages<T>(
    s: ConsoleSignIn,
    path: string,
    read: (body: any) => { docs: T[]; bookmark: string; hasMore: boolean },
  ) {
    const sep = path.includes('?') ? '&' : '?';
    const res1 = await consoleRequest(t, s, 'GET', path);
    assert.equal(res1.statusCode, 200, res1.body);
    const first = read(res1.json());
    assert.equal(first.docs.length, PAGE);
    assert.equal(first.hasMore, true);
    const res2 = await consoleRequest(t, s, 'GET', `${path}${sep}bookmark=${encodeURIComponent(first.bookmark)}`);
    assert.equal(res2.statusCode, 200, res2.body);
    const second = read(res2.json());
    assert.equal(second.docs.length, 1);
    assert.equal(second.hasMore, false);
    return { bookmark: first.bookmark, docs: [...first.docs, ...second.docs], bodies: [res1.json(), res2.json()] };
  }

  /** Clicks "More …" and returns the bookmark the console asked the route for. */
  async function clickMore(page: Page, more: ReturnType<Page['getByRole']>, pathname: string): Promise<string | null> {
    const [request] = await Promise.all([
      page.waitForRequest((r) => new URL(r.url()).pathname === pathname),
      more.click(),
    ]);
    return new URL(request.url()).searchParams.get('bookmark');
  }

  test(`my claims: ${PAGE} of ${PAGE + 1} and "More claims"; the click adds the last one, each once, in the service's order; the button goes`, async () => {
    const { session, page } = await consolePage();
    const ids = Array.from({ length: PAGE + 1 }, (_, i) => `paging-${String(i).padStart(2, '0')}`);
    const created = await consoleRequest(t, session, 'POST', '/api/v0/claims', {
      claims: ids.map((claimId) => ({ claimId, metadata: { name: `Paging ${claimId}` }, plugins: [numUses(1)] })),
    });
    assert.equal(created.statusCode, 200, created.body);
    const service = await twoPages<{ claimId: string }>(session, '/api/v0/claims/mine', (b) => ({
      docs: b.claims,
      ...b.pagination,
    }));
    const order = service.docs.map((c) => c.claimId);
    assert.deepEqual([...order].sort(), ids, 'the service lists each claim once');

    await page.goto(`${base}/#/claims`);
    const list = page.getByRole('region', { name: 'Claims' });
    const more = list.getByRole('button', { name: 'More claims' });
    const shown = () => list.locator('li code').allInnerTexts();
    await more.waitFor();
    assert.deepEqual(await shown(), order.slice(0, PAGE));

    assert.equal(
      await clickMore(page, more, '/api/v0/claims/mine'),
      service.bookmark,
      '"More claims" asks for the page after the first',
    );
    await more.waitFor({ state: 'detached' });
    assert.deepEqual(await shown(), order);
    await page.context().close();
  });

  test(`a claim's attempts: ${PAGE} of ${PAGE + 1} under "Attempts (${PAGE + 1})"; "More attempts" adds the last, each once, in the service's order; the total stays`, async () => {
    const { session, page } = await consolePage();
    const claimId = 'paging-attempts';
    const FAILED = 5;
    const created = await consoleRequest(t, session, 'POST', '/api/v0/claims', {
      claims: [{ claimId, metadata: { name: 'Paging attempts' }, plugins: [numUses(PAGE + 1 - FAILED)] }],
    });
    assert.equal(created.statusCode, 200, created.body);
    // more attempts than uses: the queue fails the last FAILED with the plugin's text, listed and
    // counted too (includeErrors). The page's live "Simulate as address" of the console wallet then
    // answers 400 as well: at most a "console: … 400" line, not a failure.
    for (let i = 0; i <= PAGE; i++) {
      const res = await t.request('POST', `/api/v0/claims/complete/${claimId}/${testAccount().platformAddress}`, {
        body: { _expectedVersion: -1 },
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    assert.equal(await drainQueue(t.ctx), PAGE + 1);
    const path = `/api/v0/claims/${claimId}/attempts?includeErrors=true`;
    const service = await twoPages<{ platformAddress: string; success: boolean; claimNumber: number; error?: string }>(
      session,
      path,
      (b) => b,
    );
    assert.deepEqual(
      service.bodies.map((b) => b.total),
      [PAGE + 1, PAGE + 1],
    );
    const order = service.docs.map((a) => [a.platformAddress, a.success ? `claim #${a.claimNumber}` : a.error]);
    assert.equal(new Set(order.map(([address]) => address)).size, PAGE + 1, 'the service lists each attempt once');
    assert.deepEqual(
      order.slice(0, FAILED).map(([, result]) => result),
      Array(FAILED).fill('Overall max uses exceeded'),
    );
    assert.equal(order[PAGE][1], 'claim #0', 'the first attempt, the oldest, is on the second page');

    await page.goto(`${base}/#/claims/view/${claimId}`);
    const heading = page.getByRole('heading', { name: /^Attempts/ });
    const table = page.getByRole('table', { name: 'Attempts, newest first' });
    const more = page.getByRole('button', { name: 'More attempts' });
    const shown = async () => {
      const addresses = await table.locator('tbody tr td:nth-child(2) [data-testid=claimer-address]').allInnerTexts();
      const results = await table.locator('tbody tr td:nth-child(3)').allInnerTexts();
      return addresses.map((a, i) => [a, results[i]]);
    };
    await more.waitFor();
    assert.equal(await heading.innerText(), `Attempts (${PAGE + 1})`);
    assert.deepEqual(await shown(), order.slice(0, PAGE));

    assert.equal(
      await clickMore(page, more, `/api/v0/claims/${claimId}/attempts`),
      service.bookmark,
      '"More attempts" asks for the page after the first',
    );
    await more.waitFor({ state: 'detached' });
    assert.deepEqual(await shown(), order);
    assert.equal(await heading.innerText(), `Attempts (${PAGE + 1})`);
    await page.context().close();
  });
});
