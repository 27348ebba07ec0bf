// github-contributions against a local fake of GitHub's REST API: contributors paged through the
// Link header and matched by account id, the threshold, rate-limit and not-found answers as clear
// failures, the cache, and use in an on-demand claim.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createTestDatabase, startApp, type TestApp } from '../helpers/app.ts';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import { attempt, claimWithPlugins, manager, numUses } from '../claims/helpers.ts';
import { testCertificates } from '../helpers/https-endpoint.ts';
import { link, providerEnv, startMockProvider, type MockProvider } from './helpers.ts';
import type { ManualClock } from '../../src/shared/clock.ts';
import { CACHE_MS } from '../../src/plugins/githubContributions.ts';

interface FakeGithub {
  url: string;
  requests: string[];
  /** Request headers, in the order of `requests`. */
  headers: Array<Record<string, string | string[] | undefined>>;
  /** owner/name → contributors, or a status to answer with (0: never answers; -1: drops the connection). */
  repos: Map<
    string,
    Array<{ id: number; login: string; contributions: number }> | { status: number; headers?: Record<string, string> }
  >;
  server: Server;
}

async function fakeGithub(): Promise<FakeGithub> {
  const fake = { requests: [] as string[], headers: [], repos: new Map() } as unknown as FakeGithub;
  const { keyPem: key, certPem: cert } = testCertificates();
  fake.server = createServer({ key, cert }, (req, res) => {
    fake.requests.push(req.url!);
    fake.headers.push(req.headers);
    const u = new URL(req.url!, 'http://x');
    const m = /^\/repos\/([^/]+\/[^/]+)\/contributors$/.exec(u.pathname);
    const repo = m && fake.repos.get(m[1]);
    if (!req.headers['user-agent']) return void res.writeHead(403).end('{"message":"User-Agent required"}');
    if (!repo) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}');
    if (!Array.isArray(repo) && repo.status === 0) return; // never answers
    if (!Array.isArray(repo) && repo.status === -1) return void req.socket.destroy();
    if (!Array.isArray(repo))
      return void res
        .writeHead(repo.status, { 'content-type': 'application/json', ...repo.headers })
        .end(repo.status === 204 ? undefined : '{"message":"API rate limit exceeded"}');
    const perPage = Number(u.searchParams.get('per_page') ?? 30);
    const page = Number(u.searchParams.get('page') ?? 1);
    const slice = repo.slice((page - 1) * perPage, page * perPage);
    const last = Math.ceil(repo.length / perPage);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    // the answer that used the last request of the hour still counts
    if (m[1].startsWith('last/')) headers['x-ratelimit-remaining'] = '0';
    if (page < last)
      headers.link = `<${fake.url}/repos/${m[1]}/contributors?per_page=${perPage}&page=${page + 1}>; rel="next", <${fake.url}/repos/${m[1]}/contributors?per_page=${perPage}&page=${last}>; rel="last"`;
    res.writeHead(200, headers).end(JSON.stringify(slice.map((c) => ({ ...c, type: 'User' }))));
  });
  await new Promise<void>((r) => fake.server.listen(0, '127.0.0.1', r));
  fake.url = `https://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
  return fake;
}

const contributions = (repository: string, minContributions?: number, instanceId = 'gh') => ({
  pluginId: 'github-contributions',
  instanceId,
  publicParams: { repository, ...(minContributions !== undefined ? { minContributions } : {}) },
  privateParams: {},
});

describe('github-contributions', () => {
  let mock: MockProvider;
  let gh: FakeGithub;
  let t: TestApp;
  let owner: SignedIn;
  let dev: SignedIn;
  before(async () => {
    mock = await startMockProvider();
    gh = await fakeGithub();
    // 250 contributors: the linked account (id 583231) is on the third page, with 3 contributions
    gh.repos.set(
      'acme/rocket',
      Array.from({ length: 250 }, (_, i) => ({
        id: i === 240 ? 583231 : 10_000 + i,
        login: i === 240 ? 'octocat' : `u${i}`,
        contributions: 1000 - i * 4,
      })),
    );
    gh.repos.set('acme/limited', {
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1893456000' },
    });
    t = await startApp({ env: { ...providerEnv(mock, ['github']), GITHUB_API_URL: gh.url } });
    owner = await manager(t);
    dev = await signIn(t);
    // the login was renamed since: the match is on the stable id
    await link(t, mock, dev, 'github', { id: '583231', username: 'octo-renamed' });
  });
  after(async () => {
    await t.close();
    await mock.stop();
    gh.server.close();
  });

  test('pages through the contributors and matches the linked account by id', async () => {
    const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(5), contributions('acme/rocket', 40)]);
    const ok = await attempt(t, 'simulate', claimId, dev.platformAddress);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(
      gh.requests.filter((r) => r.startsWith('/repos/acme/rocket')),
      [
        '/repos/acme/rocket/contributors?per_page=100',
        '/repos/acme/rocket/contributors?per_page=100&page=2',
        '/repos/acme/rocket/contributors?per_page=100&page=3',
      ],
    );
  });

  test('below the threshold fails with the count; the cached list is reused', async () => {
    const before = gh.requests.length;
    const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(5), contributions('acme/rocket', 41)]);
    const r = await attempt(t, 'simulate', claimId, dev.platformAddress);
    assert.equal(r.statusCode, 400);
    assert.equal(
      r.json().errorMessage,
      'The linked GitHub account has 40 contributions to acme/rocket; at least 41 required.',
    );
    assert.equal(gh.requests.length, before, 'served from the cache');
  });

  test('rate limit, unknown repository and no linked account are clear failures', async () => {
    const limited = await claimWithPlugins(t, owner.accessToken, [numUses(5), contributions('acme/limited')]);
    const r1 = await attempt(t, 'simulate', limited, dev.platformAddress);
    assert.equal(r1.statusCode, 400);
    assert.equal(r1.json().errorMessage, 'GitHub API rate limit reached; try again after 2030-01-01T00:00:00.000Z.');
    const missing = await claimWithPlugins(t, owner.accessToken, [numUses(5), contributions('acme/nothing')]);
    assert.equal(
      (await attempt(t, 'simulate', missing, dev.platformAddress)).json().errorMessage,
      'Repository acme/nothing was not found on GitHub.',
    );
    const stranger = await signIn(t);
    assert.equal(
      (await attempt(t, 'simulate', missing, stranger.platformAddress)).json().errorMessage,
      'No GitHub account is linked to this address. Link one through the connections flow first.',
    );
  });

  test('stateless: usable in an on-demand claim (no numUses), evaluated live by the success route', async () => {
    const claimId = await claimWithPlugins(t, owner.accessToken, [contributions('acme/rocket', 10)]);
    const yes = await t.request('GET', `/api/v0/claims/success/${claimId}/${dev.platformAddress}`);
    assert.equal(yes.statusCode, 200, yes.body);
    assert.equal(yes.json().successCount, 1);
    const no = await t.request('GET', `/api/v0/claims/success/${claimId}/${owner.platformAddress}`);
    assert.equal(no.json().successCount, 0);
  });

  test('repository must be owner/name', async () => {
    const res = await t.request('POST', '/api/v0/claims', {
      token: owner.accessToken,
      body: { claims: [{ claimId: 'ghbad', plugins: [numUses(1), contributions('../../admin')] }] },
    });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().errorMessage, /publicParams\.repository must be "owner\/name"/);
  });

  test('GitHub answers other than a list: empty repository, server error, odd body, 429, a bare 403, a move', async () => {
    gh.repos.set('acme/empty', { status: 204 });
    // a renamed repository answers a redirect, which outbound calls never follow
    gh.repos.set('acme/renamed', { status: 301, headers: { location: `${gh.url}/repositories/1/contributors` } });
    gh.repos.set('acme/broken', { status: 500 });
    gh.repos.set('acme/odd', { status: 200 });
    gh.repos.set('acme/busy', { status: 429, headers: { 'retry-after': '60' } });
    gh.repos.set('acme/forbidden', { status: 403 });
    const errorOf = async (repository: string) => {
      const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(5), contributions(repository)]);
      const r = await attempt(t, 'simulate', claimId, dev.platformAddress);
      assert.equal(r.statusCode, 400, r.body);
      return r.json().errorMessage as string;
    };
    assert.equal(
      await errorOf('acme/empty'),
      'The linked GitHub account has 0 contributions to acme/empty; at least 1 required.',
    );
    assert.equal(await errorOf('acme/broken'), 'GitHub API answered 500 for acme/broken.');
    assert.equal(await errorOf('acme/odd'), 'GitHub API answered an unexpected body for acme/odd.');
    assert.equal(await errorOf('acme/busy'), 'GitHub API rate limit reached; try again later.');
    assert.equal(await errorOf('acme/forbidden'), 'GitHub API answered 403 for acme/forbidden.');
    assert.equal(
      await errorOf('acme/renamed'),
      'Repository acme/renamed has moved on GitHub; use its new "owner/name".',
    );
    assert.equal(gh.requests.filter((r) => r.startsWith('/repositories/')).length, 0, 'the redirect is not followed');
    // failures are not cached: the next attempt asks GitHub again
    const before = gh.requests.filter((r) => r.startsWith('/repos/acme/broken')).length;
    await errorOf('acme/broken');
    assert.equal(gh.requests.filter((r) => r.startsWith('/repos/acme/broken')).length, before + 1);
  });

  test('the default threshold is 1 contribution, and the text counts in the singular', async () => {
    gh.repos.set('acme/one', [
      { id: 583231, login: 'octocat', contributions: 1 },
      { id: 7, login: 'other', contributions: 9 },
    ]);
    const byDefault = await claimWithPlugins(t, owner.accessToken, [numUses(5), contributions('acme/one')]);
    assert.equal((await attempt(t, 'simulate', byDefault, dev.platformAddress)).statusCode, 200);
    const two = await claimWithPlugins(t, owner.accessToken, [numUses(5), contributions('acme/one', 2)]);
    assert.deepEqual((await attempt(t, 'simulate', two, dev.platformAddress)).json(), {
      errorMessage: 'The linked GitHub account has 1 contribution to acme/one; at least 2 required.',
    });
    // the cached list is shared whatever the case of the repository's name
    const before = gh.requests.length;
    const upper = await claimWithPlugins(t, owner.accessToken, [numUses(5), contributions('ACME/One')]);
    assert.equal((await attempt(t, 'simulate', upper, dev.platformAddress)).statusCode, 200);
    assert.equal(gh.requests.length, before);
  });

  test('params: exact 400s for the repository, the threshold and private params', async () => {
    const refused = async (
      publicParams: Record<string, unknown>,
      privateParams: Record<string, unknown>,
      errorMessage: string,
    ) => {
      const res = await t.request('POST', '/api/v0/claims', {
        token: owner.accessToken,
        body: {
          claims: [
            {
              claimId: `g${Math.random().toString(36).slice(2)}`,
              plugins: [
                numUses(1),
                { pluginId: 'github-contributions', instanceId: 'gh', publicParams, privateParams },
              ],
            },
          ],
        },
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(res.json(), { errorMessage });
    };
    const P = 'claims[0].plugins[1]';
    const repoText = `${P}.publicParams.repository must be "owner/name" (letters, digits, _ . -)`;
    for (const repository of [
      'acme',
      'acme/',
      '/rocket',
      'acme/rocket/x',
      `${'a'.repeat(101)}/b`,
      'ac me/rocket',
      7,
      ['acme/rocket'],
    ])
      await refused({ repository }, {}, repoText);
    await refused(
      { repository: 'acme/rocket', minContributions: 0 },
      {},
      `${P}.publicParams.minContributions must be an integer from 1 to 1000000000`,
    );
    await refused(
      { repository: 'acme/rocket', other: 1 },
      {},
      `${P}.publicParams has unknown field "other" (allowed: repository, minContributions)`,
    );
    await refused(
      { repository: 'acme/rocket' },
      { x: 1 },
      `${P}.privateParams has unknown field "x" (this plugin takes no params here)`,
    );
    const ok = await claimWithPlugins(t, owner.accessToken, [
      numUses(1),
      contributions(`${'a'.repeat(100)}/${'b'.repeat(100)}`),
    ]);
    assert.ok(ok);
  });
});

describe('github-contributions: API token, page limit, slow and unreachable API', () => {
  let mock: MockProvider;
  let gh: FakeGithub;
  let t: TestApp;
  /** Gives GitHub 300 ms: for the repository that never answers (so the limit is always reached). */
  let impatient: TestApp;
  /** The same database as `impatient`, without its short limit: the account is linked through it,
   * since a loaded machine can take longer than 300 ms for the link's own calls. */
  let patient: TestApp;
  let owner: SignedIn;
  let dev: SignedIn;
  before(async () => {
    mock = await startMockProvider();
    gh = await fakeGithub();
    // 1,100 contributors: the linked account is on page 11, past the 10 pages read
    gh.repos.set(
      'big/repo',
      Array.from({ length: 1100 }, (_, i) => ({
        id: i === 1050 ? 583231 : 20_000 + i,
        login: `u${i}`,
        contributions: 5000 - i,
      })),
    );
    // ids as strings are matched too
    gh.repos.set('str/ids', [{ id: '583231' as unknown as number, login: 'octocat', contributions: 3 }]);
    gh.repos.set('slow/repo', { status: 0 });
    gh.repos.set('gone/repo', { status: -1 });
    gh.repos.set('last/page', [{ id: 583231, login: 'octocat', contributions: 2 }]);
    gh.repos.set('odd/entries', [
      { id: 583231, contributions: 'many' as unknown as number, login: 'octocat' },
      { login: 'anonymous', contributions: 4 } as unknown as { id: number; login: string; contributions: number },
    ]);
    t = await startApp({
      manualClock: true,
      env: {
        ...providerEnv(mock, ['github']),
        GITHUB_API_URL: gh.url,
        GITHUB_API_TOKEN: 'ghp_test_token',
      },
    });
    const shared = createTestDatabase();
    impatient = await startApp({
      database: shared,
      env: { ...providerEnv(mock, ['github']), GITHUB_API_URL: gh.url, CONNECTIONS_TIMEOUT_MS: '300' },
    });
    patient = await startApp({ database: shared, env: { ...providerEnv(mock, ['github']), GITHUB_API_URL: gh.url } });
    owner = await manager(t);
    dev = await signIn(t);
    await link(t, mock, dev, 'github', { id: '583231', username: 'octocat' });
  });
  after(async () => {
    await t.close();
    await impatient.close();
    await patient.close();
    await mock.stop();
    gh.server.closeAllConnections();
    gh.server.close();
  });

  const simulate = async (app: TestApp, token: string, repository: string, address: string) => {
    const claimId = await claimWithPlugins(app, token, [numUses(5), contributions(repository)]);
    return attempt(app, 'simulate', claimId, address);
  };

  test("calls carry the API token, GitHub's media type and a User-Agent; ids given as strings match", async () => {
    const r = await simulate(t, owner.accessToken, 'str/ids', dev.platformAddress);
    assert.equal(r.statusCode, 200, r.body);
    const h = gh.headers[gh.requests.findIndex((u) => u.startsWith('/repos/str/ids'))]!;
    assert.equal(h.authorization, 'Bearer ghp_test_token');
    assert.equal(h.accept, 'application/vnd.github+json');
    assert.equal(h['user-agent'], 'platform-github-contributions');
  });

  test('at most 10 pages are read', async () => {
    const r = await simulate(t, owner.accessToken, 'big/repo', dev.platformAddress);
    assert.deepEqual(r.json(), {
      errorMessage: 'The linked GitHub account has 0 contributions to big/repo; at least 1 required.',
    });
    assert.equal(gh.requests.filter((u) => u.startsWith('/repos/big/repo')).length, 10);
  });

  test('a slow API fails after CONNECTIONS_TIMEOUT_MS; an unreachable one says so', async () => {
    const owner2 = await manager(impatient);
    const dev2 = await signIn(impatient);
    await link(patient, mock, dev2, 'github', { id: '583231', username: 'octocat' });
    assert.deepEqual((await simulate(impatient, owner2.accessToken, 'slow/repo', dev2.platformAddress)).json(), {
      errorMessage: 'GitHub API did not answer within 300 ms.',
    });
    assert.deepEqual((await simulate(t, owner.accessToken, 'gone/repo', dev.platformAddress)).json(), {
      errorMessage: 'GitHub API could not be reached.',
    });
  });

  test('a contributors list is cached for 5 minutes of the service clock, then read again', async () => {
    const clock = t.clock as ManualClock;
    const reads = () => gh.requests.filter((u) => u.startsWith('/repos/last/page')).length;
    const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(5), contributions('last/page', 2)]);
    // a 200 that used the last request of the rate limit is still an answer
    assert.equal((await attempt(t, 'simulate', claimId, dev.platformAddress)).statusCode, 200);
    assert.equal(reads(), 1);
    clock.advance(CACHE_MS - 1);
    assert.equal((await attempt(t, 'simulate', claimId, dev.platformAddress)).statusCode, 200);
    assert.equal(reads(), 1);
    clock.advance(1);
    assert.equal((await attempt(t, 'simulate', claimId, dev.platformAddress)).statusCode, 200);
    assert.equal(reads(), 2);
  });

  test('entries without an id or with a non-numeric count are skipped; two instances may share a claim', async () => {
    const claimId = await claimWithPlugins(t, owner.accessToken, [
      numUses(5),
      contributions('odd/entries', 1, 'a'),
      contributions('str/ids', 1, 'b'),
    ]);
    assert.deepEqual((await attempt(t, 'simulate', claimId, dev.platformAddress)).json(), {
      errorMessage: 'The linked GitHub account has 0 contributions to odd/entries; at least 1 required.',
    });
  });
});
