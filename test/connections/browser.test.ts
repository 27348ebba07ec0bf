// Linking a provider in a real browser (Debian's chromium driven by playwright-core): the page opens
// the authorization URL the service hands out, the provider (oauth2-mock-server) redirects to the
// service's callback, and the service redirects to the configured return page with ?connected=.
// Every hop is a real HTTP redirect followed by the browser.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { type Browser } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.ts';
import { signIn } from '../helpers/signin.ts';
import { providerEnv, startMockProvider, type MockProvider } from './helpers.ts';
import { freePort } from '../helpers/process.ts';
import { launchChromium } from '../helpers/chromium.ts';


describe('connections in a browser', () => {
  let mock: MockProvider;
  let t: TestApp;
  let browser: Browser;
  let page: Server;
  let pageUrl = '';
  before(async () => {
    mock = await startMockProvider();
    // the app's own "account" page the flow returns to
    page = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>account</title><p>${req.url}</p>`));
    await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
    pageUrl = `http://127.0.0.1:${(page.address() as { port: number }).port}/account`;
    const port = await freePort();
    t = await startApp({ listen: false, env: { ...providerEnv(mock, ['github']), CONNECTIONS_RETURN_URL: pageUrl, PUBLIC_URL: `http://127.0.0.1:${port}` } });
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await new Promise((r) => page.close(r));
    await t?.close();
    await mock?.stop();
  });

  test('the browser follows provider → callback → return page, and the account is linked', async () => {
    const user = await signIn(t);
    const start = await t.request('POST', '/api/v0/connections/github/start', { token: user.accessToken });
    assert.equal(start.statusCode, 200, start.body);
    mock.shape = 'github';
    mock.nextUser = { id: '583231', username: 'octocat' };
    const context = await browser.newContext();
    const tab = await context.newPage();
    const hops: string[] = [];
    tab.on('request', (r) => {
      if (r.isNavigationRequest()) hops.push(new URL(r.url()).pathname);
    });
    await tab.goto(start.json().url);
    await tab.waitForURL((u) => u.toString().startsWith(pageUrl));
    assert.equal(tab.url(), `${pageUrl}?connected=github`);
    assert.deepEqual(hops, ['/authorize', '/api/v0/connections/github/callback', '/account']);
    await context.close();
    const links = (await t.request('GET', '/api/v0/connections', { token: user.accessToken })).json().connections;
    assert.deepEqual(links.map((l: Record<string, string>) => [l.provider, l.id, l.username]), [['github', '583231', 'octocat']]);
  });
});
