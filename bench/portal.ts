// Time-to-interactive of the public claim page in headless Chromium on loopback.
//   node bench/portal.ts            20 cold loads of each page (median printed; goal < 300 ms)
//   BENCH_LOADS=100 node bench/portal.ts
// TTI here: from navigation start (performance.timeOrigin) until the page can be used — the claim's
// name, its requirements and the "Connect" button are rendered, i.e. the HTML, the JS and CSS,
// and the three API reads (claim, plugin descriptions, session) are done. Each load uses a fresh
// browser context (no HTTP cache, a new visitor cookie): a first visit. Baseline, same run: a
// static blank page from the same server (one HTML response, no script), loaded the same way.
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { startApp } from '../test/helpers/app.ts';
import { signIn } from '../test/helpers/signin.ts';
import { PORTAL_DIST } from '../src/portal/static.ts';

const LOADS = Number(process.env.BENCH_LOADS ?? 20);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (apt-get install -y chromium)`);
if (!existsSync(join(PORTAL_DIST, 'claim.html'))) throw new Error('portal/dist is missing: npm run build:portal');

const port = await new Promise<number>((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const p = (s.address() as { port: number }).port;
    s.close(() => resolve(p));
  });
});
const base = `http://127.0.0.1:${port}`;
const t = await startApp({
  env: { PUBLIC_URL: base, DATABASE_URL: '' },
  database: undefined,
  extend: (app) => {
    app.get('/bench-blank', { schema: { hide: true } }, async (_req, reply) =>
      reply
        .header('content-type', 'text/html; charset=utf-8')
        .send('<!doctype html><html lang="en"><title>blank</title><p id="ready">ready</p></html>'),
    );
  },
});
await t.app.listen({ port, host: '127.0.0.1' });
const session = await signIn(t, { scopes: ['manageClaims'] });
const created = await t.request('POST', '/api/v0/claims', {
  token: session.accessToken,
  body: {
    claims: [
      {
        claimId: 'bench',
        metadata: {
          name: 'Bench drop',
          description: 'A claim with a use cap, a password and a time window.',
          image: '',
        },
        plugins: [
          { pluginId: 'numUses', instanceId: 'n', publicParams: { maxUses: 100 } },
          { pluginId: 'password', instanceId: 'pw', privateParams: { password: 'x' } },
          {
            pluginId: 'transferTimes',
            instanceId: 'tt',
            publicParams: { transferTimes: [{ start: '0', end: '18446744073709551615' }] },
          },
        ],
      },
    ],
  },
});
if (created.statusCode !== 200) throw new Error(`claim create: ${created.body}`);

// Records when the ready element first exists (MutationObserver: no polling delay in the figure).
const MARK = (selector: string) => `
  (() => {
    const mark = () => { if (!window.__tti && document.querySelector(${JSON.stringify(selector)})) { window.__tti = performance.now(); return true; } return false; };
    new MutationObserver((_, o) => { if (mark()) o.disconnect(); }).observe(document, { childList: true, subtree: true });
  })();`;

/** Cold: a fresh context per load. Warm: one context, reloaded (hashed assets come from its cache). */
async function measure(
  browser: Browser,
  url: string,
  selector: string,
  warm = false,
): Promise<{ tti: number[]; dcl: number[] }> {
  const tti: number[] = [];
  const dcl: number[] = [];
  let context = await browser.newContext();
  await context.addInitScript(MARK(selector));
  let page = await context.newPage();
  for (let i = 0; i < LOADS + 2; i++) {
    if (!warm && i > 0) {
      await context.close();
      context = await browser.newContext();
      await context.addInitScript(MARK(selector));
      page = await context.newPage();
    }
    await page.goto(url);
    await page.waitForSelector(selector);
    const r = await page.evaluate(() => {
      const g = globalThis as unknown as {
        __tti: number;
        performance: { getEntriesByType(t: string): Array<{ domContentLoadedEventEnd: number }> };
      };
      return { tti: g.__tti, dcl: g.performance.getEntriesByType('navigation')[0]?.domContentLoadedEventEnd ?? 0 };
    });
    if (i >= 2) {
      // two warm-up loads (server JIT, chromium's first-process costs)
      tti.push(r.tti);
      dcl.push(r.dcl);
    }
  }
  await context.close();
  return { tti, dcl };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))];

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
try {
  const blank = await measure(browser, `${base}/bench-blank`, '#ready');
  const claim = await measure(browser, `${base}/claim/bench`, '#connect-evm');
  const warm = await measure(browser, `${base}/claim/bench`, '#connect-evm', true);
  const fmt = (n: number) => `${n.toFixed(1)} ms`.padStart(9);
  console.log(
    `portal TTI, ${LOADS} loads each, headless Chromium on loopback, SQLite (cold: fresh context per load; warm: reloads in one context)`,
  );
  console.log(`  baseline: static blank page, cold     median ${fmt(median(blank.tti))}   p90 ${fmt(p90(blank.tti))}`);
  console.log(
    `  claim page /claim/{id}, cold          median ${fmt(median(claim.tti))}   p90 ${fmt(p90(claim.tti))}   DOMContentLoaded median ${fmt(median(claim.dcl))}   ${(median(claim.tti) / median(blank.tti)).toFixed(2)}x the blank page`,
  );
  console.log(
    `  claim page /claim/{id}, warm          median ${fmt(median(warm.tti))}   p90 ${fmt(p90(warm.tti))}   DOMContentLoaded median ${fmt(median(warm.dcl))}`,
  );
  console.log(`  goal: cold median < 300 ms: ${median(claim.tti) < 300 ? 'met' : 'NOT met'}`);
} finally {
  await browser.close();
  await t.close();
}
