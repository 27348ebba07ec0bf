// The provider calls (code exchange, account read) go through the egress module like every outbound
// call: https only (checked when the configuration is read) and public addresses only. Here the mock
// provider is on loopback, and the app is not told to allow it: the link fails, saying why.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import {
  approveAtProvider,
  providerEnv,
  proveWallet,
  startLink,
  startMockProvider,
  type MockProvider,
} from './helpers.ts';

describe('connections: provider calls go through the egress module', () => {
  let mock: MockProvider;
  let t: TestApp;
  let user: SignedIn;
  before(async () => {
    mock = await startMockProvider();
    const env = providerEnv(mock, ['github']);
    delete env.EGRESS_ALLOW_PRIVATE_CIDRS;
    t = await startApp({ env });
    user = await signIn(t, { scopes: ['manageConnections'] });
  });
  after(async () => {
    await t?.close();
    await mock?.stop();
  });

  test('a provider on a private address is refused unless EGRESS_ALLOW_PRIVATE_CIDRS opens it', async () => {
    const { authorizeUrl, cookie } = await proveWallet(
      t,
      await startLink(t, user.accessToken, 'github'),
      user.privateKey,
    );
    mock.shape = 'github';
    const back = await approveAtProvider(authorizeUrl);
    const res = await t.request('GET', `/api/v0/connections/github/callback${back.search}`, {
      apiKey: null,
      headers: { cookie },
    });
    assert.equal(res.statusCode, 302);
    const error = new URL(res.headers.location as string).searchParams.get('connectionError') ?? '';
    assert.match(error, /^The code exchange with github failed: .*127\.0\.0\.1.*/);
    assert.equal(mock.tokenRequests.length, 0, 'the token endpoint was never called');
    const list = await t.request('GET', '/api/v0/connections', { token: user.accessToken });
    assert.deepEqual(list.json().connections, []);
  });

  test('token and user endpoints must be https (the service calls them); the authorization URL may be http', () => {
    const base = { CONNECTIONS_GITHUB_CLIENT_ID: 'id', CONNECTIONS_GITHUB_CLIENT_SECRET: 'secret' };
    for (const name of ['CONNECTIONS_GITHUB_TOKEN_URL', 'CONNECTIONS_GITHUB_USERINFO_URL']) {
      assert.throws(
        () => loadConfig({ ...base, [name]: 'http://idp.example/x' }),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.message.includes(name) &&
          e.message.includes('must use https: the service calls it, and outbound calls are https only'),
      );
    }
    assert.doesNotThrow(() => loadConfig({ ...base, CONNECTIONS_GITHUB_AUTHORIZATION_URL: 'http://idp.example/a' }));
  });
});
