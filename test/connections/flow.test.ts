// The connections flow end to end against a local OAuth 2.0 provider (oauth2-mock-server): start,
// the wallet's proof at the link page, the provider's redirect, the callback's code exchange (with
// PKCE where the provider has it), the account read in each provider's own shape, and the links as
// the user sees them. The browser's side is played over HTTP (its binding cookie included); the
// refusals of the proof and the binding are in binding.test.ts, the browser itself in browser.test.ts.
import { describe, test, before, after } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { startApp } from '../helpers/app.ts';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import type { ManualClock } from '../../src/shared/clock.ts';
import {
  approveAtProvider,
  callback,
  link,
  PROVIDERS,
  providerEnv,
  proveWallet,
  startLink,
  startMockProvider,
  type MockProvider,
} from './helpers.ts';

describe('social connections flow', () => {
  let mock: MockProvider;
  let user: SignedIn;
  before(async () => {
    mock = await startMockProvider();
  });
  const t = useApp({ clock: true, env: () => providerEnv(mock) });
  before(async () => {
    user = await signIn(t, { scopes: ['completeClaims', 'manageConnections'] });
  });
  after(() => mock.stop());

  test('discord: PKCE S256 start, code exchange, link listed and shown by auth/status, then unlinked', async () => {
    const { authorizeUrl: start, cookie } = await proveWallet(
      t,
      await startLink(t, user.accessToken, 'discord'),
      user.privateKey,
    );
    assert.equal(start.searchParams.get('client_id'), 'discord-client');
    assert.equal(start.searchParams.get('scope'), 'identify');
    assert.equal(start.searchParams.get('code_challenge_method'), 'S256');
    assert.match(start.searchParams.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.equal(start.searchParams.get('redirect_uri'), `${t.config.publicUrl}/api/v0/connections/discord/callback`);
    mock.shape = 'discord';
    mock.nextUser = { id: '80351110224678912', username: 'nelly' };
    const back = await approveAtProvider(start);
    const done = await callback(t, 'discord', back, cookie);
    assert.equal(done.toString(), 'https://app.example/account?connected=discord');
    // the mock checks the verifier against the challenge; the verifier was sent
    assert.match(mock.tokenRequests.at(-1)?.get('code_verifier') ?? '', /^[A-Za-z0-9_-]{43,128}$/);
    assert.equal(mock.tokenRequests.at(-1)?.get('client_secret'), 'discord-secret', 'client_secret_post');

    const list = await t.request('GET', '/api/v0/connections', { token: user.accessToken });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(
      list
        .json()
        .connections.map((c: Record<string, string>) => ({ provider: c.provider, id: c.id, username: c.username })),
      [{ provider: 'discord', id: '80351110224678912', username: 'nelly' }],
    );
    assert.deepEqual(list.json().availableProviders, [...PROVIDERS]);
    const status = await t.request('POST', '/api/v0/auth/status', { token: user.accessToken, body: {} });
    assert.deepEqual(status.json().discord, { id: '80351110224678912', username: 'nelly' });
    assert.equal(status.json().github, undefined);

    // the same state cannot be used twice
    const again = await callback(t, 'discord', back, cookie);
    assert.equal(
      again.searchParams.get('connectionError'),
      'This link request is unknown, used or expired. Start again.',
    );

    assert.equal(
      (await t.request('DELETE', '/api/v0/connections/discord', { token: user.accessToken })).statusCode,
      200,
    );
    const gone = await t.request('DELETE', '/api/v0/connections/discord', { token: user.accessToken });
    assert.equal(gone.statusCode, 404);
    assert.match(gone.json().errorMessage, /No discord account is linked/);
    assert.equal(
      (await t.request('POST', '/api/v0/auth/status', { token: user.accessToken, body: {} })).json().discord,
      undefined,
    );
  });

  test("every provider's account is read from its own user-endpoint shape (ids kept as strings)", async () => {
    const accounts = {
      discord: { id: '80351110224678912', username: 'nelly' },
      github: { id: '583231', username: 'octocat' },
      google: { id: '110169484474386276334', username: 'ada@example.com' },
      twitch: { id: '141981764', username: 'twitchdev' },
      twitter: { id: '2244994945', username: 'XDevelopers' },
    };
    for (const p of PROVIDERS) {
      const done = await link(t, mock, user, p, accounts[p]);
      assert.equal(done.searchParams.get('connected'), p, `${p}: ${done}`);
    }
    const list = (await t.request('GET', '/api/v0/connections', { token: user.accessToken })).json().connections;
    assert.deepEqual(
      Object.fromEntries(list.map((c: Record<string, string>) => [c.provider, { id: c.id, username: c.username }])),
      accounts,
    );
  });

  test('twitch: no PKCE, and its array-valued scope in the token response is accepted', async () => {
    const { authorizeUrl: start, cookie } = await proveWallet(
      t,
      await startLink(t, user.accessToken, 'twitch'),
      user.privateKey,
    );
    assert.equal(start.searchParams.get('code_challenge'), null, 'Twitch does not support PKCE');
    const onToken = (res: { body: Record<string, unknown> }) => {
      res.body.scope = ['user:read:email'];
      res.body.token_type = 'bearer';
    };
    mock.server.service.once('beforeResponse', onToken);
    mock.shape = 'twitch';
    mock.nextUser = { id: '42', username: 'streamer' };
    const done = await callback(t, 'twitch', await approveAtProvider(start), cookie);
    assert.equal(done.searchParams.get('connected'), 'twitch', done.toString());
    assert.equal(mock.tokenRequests.at(-1)?.get('code_verifier'), null);
  });

  test('github: a failed exchange answered with 200 and an error body is an error, not a link', async () => {
    await t.request('DELETE', '/api/v0/connections/github', { token: user.accessToken });
    const { authorizeUrl: start, cookie } = await proveWallet(
      t,
      await startLink(t, user.accessToken, 'github'),
      user.privateKey,
    );
    mock.server.service.once('beforeResponse', (res: { body: Record<string, unknown>; statusCode: number }) => {
      res.statusCode = 200;
      res.body = { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' };
    });
    const done = await callback(t, 'github', await approveAtProvider(start), cookie);
    assert.equal(done.searchParams.get('connectionError'), 'github refused the code exchange: bad_verification_code');
    const list = (await t.request('GET', '/api/v0/connections', { token: user.accessToken })).json().connections;
    assert.ok(!list.some((c: { provider: string }) => c.provider === 'github'));
  });

  test('a user who declines at the provider is sent back with the reason; nothing is linked', async () => {
    const { authorizeUrl: start, cookie } = await proveWallet(
      t,
      await startLink(t, user.accessToken, 'google'),
      user.privateKey,
    );
    const back = new URL(start.searchParams.get('redirect_uri')!);
    back.searchParams.set('error', 'access_denied');
    back.searchParams.set('state', start.searchParams.get('state')!);
    const done = await callback(t, 'google', back, cookie);
    assert.equal(done.searchParams.get('connectionError'), 'You declined the google authorization.');
  });

  test('a request older than 10 minutes is refused at the callback', async () => {
    const { authorizeUrl: start, cookie } = await proveWallet(
      t,
      await startLink(t, user.accessToken, 'discord'),
      user.privateKey,
    );
    const back = await approveAtProvider(start);
    (t.clock as ManualClock).advance(10 * 60_000 + 1);
    const done = await callback(t, 'discord', back, cookie);
    assert.equal(
      done.searchParams.get('connectionError'),
      'This link request is unknown, used or expired. Start again.',
    );
  });

  test('start needs a session; unknown and unconfigured providers are 404s naming them', async () => {
    const anon = await t.request('POST', '/api/v0/connections/discord/start');
    assert.equal(anon.statusCode, 401);
    const unknown = await t.request('POST', '/api/v0/connections/myspace/start', { token: user.accessToken });
    assert.equal(unknown.statusCode, 404);
    assert.match(
      unknown.json().errorMessage,
      /Unknown provider "myspace" \(known: discord, github, google, twitch, twitter\)/,
    );
    const bare = await startApp();
    try {
      const u = await signIn(bare);
      const off = await bare.request('POST', '/api/v0/connections/github/start', { token: u.accessToken });
      assert.equal(off.statusCode, 404);
      assert.equal(off.json().errorMessage, 'Connections to github are not enabled on this service');
      assert.deepEqual((await bare.request('GET', '/api/v0/connections', { token: u.accessToken })).json(), {
        connections: [],
        availableProviders: [],
      });
    } finally {
      await bare.close();
    }
  });
});
