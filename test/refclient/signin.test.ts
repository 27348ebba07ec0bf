// The reference client's sign-in calls, unchanged, against a running service: the code exchange
// (`/api/v0/siwbb/token` renamed to `/api/v0/signin/token` in the path only), the session check,
// and the revocation, each with one refusal.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { authorizeCode, codeExchangeBody, signIn } from '../helpers/signin.ts';
import { refusal, sdkClient, type SdkClient } from './sdk.ts';

describe('reference client: sign-in', () => {
  let sdk: SdkClient;
  const t = useApp({ listen: true });
  before(async () => {
    sdk = sdkClient(t);
  });

  test('exchangeSIWBBAuthorizationCode, checkIfSignedIn and revokeOauthAuthorization', async () => {
    const { code, client, account } = await authorizeCode(t, { scopes: ['manageAccount'] });
    const tokens = (await sdk.api.exchangeSIWBBAuthorizationCode(
      codeExchangeBody(client, code) as never,
    )) as unknown as {
      access_token: string;
      refresh_token: string;
      address: string;
    };
    assert.equal(tokens.address.toLowerCase(), account.address.toLowerCase());
    assert.match(tokens.access_token, /\S{20,}/);
    assert.deepEqual(sdk.paths.at(-1), 'POST /api/v0/signin/token');
    const signedIn = sdkClient(t, tokens.access_token).api;
    assert.equal((await signedIn.checkIfSignedIn({})).signedIn, true);
    await sdk.api.revokeOauthAuthorization({ token: tokens.access_token });
    assert.deepEqual(sdk.paths.at(-1), 'POST /api/v0/signin/token/revoke');
    assert.equal((await signedIn.checkIfSignedIn({})).signedIn, false);
    // refusals: a code used twice; a revocation without a token
    assert.deepEqual(await refusal(sdk.api.exchangeSIWBBAuthorizationCode(codeExchangeBody(client, code) as never)), {
      errorMessage: 'The authorization of this code has been revoked.',
      error: 'invalid_grant',
      error_description: 'The authorization of this code has been revoked.',
    });
    assert.deepEqual(await refusal(sdk.api.revokeOauthAuthorization({ token: '' })), {
      errorMessage: 'token is required.',
      error: 'invalid_request',
      error_description: 'token is required.',
    });
    const noKey = sdkClient(t).api;
    noKey.axios.defaults.headers['x-api-key'] = 'not-a-key';
    assert.deepEqual(await refusal(noKey.checkIfSignedIn({})), {
      errorMessage: 'Unauthorized request. Error validating API key.',
      unauthorized: true,
    });
  });

  test('developer apps through the client: create, update, fetch, read, delete', async () => {
    const owner = await signIn(t, { scopes: ['manageDeveloperApps'] });
    const api = sdkClient(t, owner.accessToken).api;
    const created = (await api.createDeveloperApp({
      name: 'SDK app',
      description: '',
      image: '',
      redirectUris: ['https://sdk.example/cb'],
    } as never)) as unknown as { clientId: string; clientSecret: string };
    assert.match(created.clientSecret, /\S{20,}/);
    // (the client's answer class keeps only success and clientSecret of the answer)
    await api.updateDeveloperApp({ clientId: created.clientId, name: 'SDK app 2' } as never);
    const mine = await api.getDeveloperApps({} as never);
    assert.deepEqual(
      mine.developerApps.map((a) => a.clientId),
      [created.clientId],
    );
    const one = await sdk.api.getDeveloperApp(created.clientId, {} as never);
    assert.deepEqual([one.developerApp.clientId, one.developerApp.name], [created.clientId, 'SDK app 2']);
    await api.deleteDeveloperApp({ clientId: created.clientId });
    // refusals
    const noSession = {
      errorMessage:
        'Unauthorized request. This route requires a signed-in session (Authorization: Bearer <access token>).',
      unauthorized: true,
    };
    const gone = { errorMessage: `No developer app with clientId ${created.clientId}` };
    assert.deepEqual(
      await refusal(
        sdk.api.createDeveloperApp({ name: 'x', description: '', image: '', redirectUris: ['https://x.example/cb'] }),
      ),
      noSession,
    );
    assert.deepEqual(await refusal(api.updateDeveloperApp({ clientId: created.clientId, name: 'y' } as never)), gone);
    assert.deepEqual(await refusal(sdk.api.getDeveloperApps({} as never)), noSession);
    assert.deepEqual(await refusal(sdk.api.getDeveloperApp(created.clientId, {} as never)), gone);
    assert.deepEqual(await refusal(api.deleteDeveloperApp({ clientId: created.clientId })), gone);
  });
});
