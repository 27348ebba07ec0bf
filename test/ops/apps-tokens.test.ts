// The operator's apps and tokens, through the CLI's commands (run in-process) and the HTTP API of the same
// database: CLI apps can be listed, changed, rotated, deleted and handed to a wallet; operator
// tokens are sessions for an address, stored as hashes, listed without values, revocable.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { cliJson, runCliInProcess } from '../helpers/cli.ts';
import {
  authorizeCode,
  codeExchangeBody,
  isSignedIn,
  signIn,
  testAccount,
  type TestClient,
} from '../helpers/signin.ts';
import { sha256Hex } from '../../src/shared/crypto.ts';

describe('platform app list / update / rotate-secret / delete / --owner', () => {
  const t = useApp();

  test('an app without a redirect URI needs --no-redirect-uri', async () => {
    const r = await runCliInProcess(['app', 'create', '--name', 'No Redirect'], t.database.env);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--redirect-uri <uri>, or --no-redirect-uri/);
    const ok = cliJson(
      await runCliInProcess(['app', 'create', '--name', 'No Redirect', '--no-redirect-uri'], t.database.env),
    );
    assert.deepEqual(ok.redirect_uris, []);
  });

  test('list, update, rotate-secret and delete a CLI app', async () => {
    const created = cliJson(
      await runCliInProcess(
        ['app', 'create', '--name', 'Ops App', '--redirect-uri', 'https://ops.example/cb'],
        t.database.env,
      ),
    );
    const listed = cliJson(await runCliInProcess(['app', 'list'], t.database.env));
    const mine = listed.find((a: { client_id: string }) => a.client_id === created.client_id);
    assert.equal(mine.name, 'Ops App');
    assert.equal(mine.owner, null);
    assert.ok(!JSON.stringify(listed).includes(created.client_secret), 'list never shows secrets');

    const updated = cliJson(
      await runCliInProcess(
        ['app', 'update', created.client_id, '--name', 'Ops App 2', '--redirect-uri', 'https://ops.example/cb2'],
        t.database.env,
      ),
    );
    assert.equal(updated.name, 'Ops App 2');
    assert.deepEqual(updated.redirect_uris, ['https://ops.example/cb2']);

    const rotated = cliJson(await runCliInProcess(['app', 'rotate-secret', created.client_id], t.database.env));
    assert.match(rotated.client_secret, /^[0-9a-f]{64}$/);
    assert.notEqual(rotated.client_secret, created.client_secret);
    const row = await t.ctx.db
      .selectFrom('signin_apps')
      .selectAll()
      .where('client_id', '=', created.client_id)
      .executeTakeFirstOrThrow();
    assert.equal(row.client_secret_hash, sha256Hex(rotated.client_secret));
    await new Promise((r) => setTimeout(r, 1100)); // the token endpoint trusts a client row for at most 1 s
    const client: TestClient = {
      clientId: created.client_id,
      clientSecret: created.client_secret,
      redirectUri: 'https://ops.example/cb2',
    };
    const { code } = await authorizeCode(t, { client });
    assert.equal(
      (await t.request('POST', '/api/v0/signin/token', { body: codeExchangeBody(client, code) })).statusCode,
      401,
      'old secret refused',
    );
    const tok = await t.request('POST', '/api/v0/signin/token', {
      body: codeExchangeBody({ ...client, clientSecret: rotated.client_secret }, code),
    });
    assert.equal(tok.statusCode, 200, tok.body);

    const deleted = cliJson(await runCliInProcess(['app', 'delete', created.client_id], t.database.env));
    assert.deepEqual(deleted, { client_id: created.client_id, deleted: true });
    assert.equal((await t.request('GET', `/api/v0/developerApp/${created.client_id}`)).statusCode, 404);
    assert.equal(await isSignedIn(t, tok.json().access_token), false, 'deleting the app revoked its sessions');

    const again = await runCliInProcess(['app', 'delete', created.client_id], t.database.env);
    assert.equal(again.code, 1, 'an unknown app is a failure, not a usage error');
    assert.match(again.stderr, /No developer app with client id/);
    assert.equal((await runCliInProcess(['app', 'update', created.client_id], t.database.env)).code, 2);
  });

  test('--owner hands a CLI app to a wallet, which then manages it over HTTP', async () => {
    const wallet = testAccount();
    const created = cliJson(
      await runCliInProcess(
        ['app', 'create', '--name', 'Handed Over', '--redirect-uri', 'https://w.example/cb', '--owner', wallet.address],
        t.database.env,
      ),
    );
    assert.equal(created.owner, wallet.platformAddress);
    const session = await signIn(t, { privateKey: wallet.privateKey, scopes: ['manageDeveloperApps'] });
    const put = await t.request('PUT', '/api/v0/developerApps', {
      token: session.accessToken,
      body: { clientId: created.client_id, name: 'Renamed by owner', rotateClientSecret: true },
    });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(put.json().developerApp.name, 'Renamed by owner');

    // an app created without an owner can be handed over later, and taken back
    const later = cliJson(
      await runCliInProcess(['app', 'create', '--name', 'Later', '--no-redirect-uri'], t.database.env),
    );
    const del = () =>
      t.request('DELETE', '/api/v0/developerApps', { token: session.accessToken, body: { clientId: later.client_id } });
    assert.equal((await del()).statusCode, 403);
    assert.equal(
      cliJson(
        await runCliInProcess(['app', 'update', later.client_id, '--owner', wallet.platformAddress], t.database.env),
      ).owner,
      wallet.platformAddress,
    );
    const byOwner = cliJson(await runCliInProcess(['app', 'list', '--owner', wallet.address], t.database.env));
    assert.deepEqual(
      byOwner.map((a: { client_id: string }) => a.client_id).sort(),
      [created.client_id, later.client_id].sort(),
    );
    assert.equal((await del()).statusCode, 200);

    const bad = await runCliInProcess(
      ['app', 'create', '--name', 'X', '--no-redirect-uri', '--owner', 'not-an-address'],
      t.database.env,
    );
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--owner/);
  });
});

describe('platform token create / list / revoke', () => {
  const t = useApp();

  test('mints a session for an address that acts with its scopes, stored as a hash, revocable at once', async () => {
    const who = testAccount();
    const r = await runCliInProcess(
      [
        'token',
        'create',
        '--address',
        who.address,
        '--scopes',
        'manageDeveloperApps,manageClaims',
        '--expires',
        '2h',
        '--label',
        'billing backend',
      ],
      t.database.env,
    );
    const minted = cliJson(r);
    assert.match(minted.access_token, /^[0-9a-f]{32}\.[0-9a-f]{64}$/);
    assert.equal(minted.token_type, 'Bearer');
    assert.equal(minted.scope, 'manageDeveloperApps manageClaims');
    assert.equal(minted.platformAddress, who.platformAddress);
    assert.equal(minted.expires_in, 7200);
    assert.match(r.stderr, /operator token created/, 'creation is logged (stderr)');
    assert.ok(!r.stderr.includes(minted.access_token), 'the log never holds the token');

    const status = await t.request('POST', '/api/v0/auth/status', { token: minted.access_token, body: {} });
    assert.equal(status.json().signedIn, true);
    assert.equal(status.json().platformAddress, who.platformAddress);
    assert.deepEqual(
      status.json().scopes.map((x: { scopeId: string }) => x.scopeId),
      ['manageDeveloperApps', 'manageClaims'],
      'only the scopes it was given',
    );
    assert.match(status.json().message, /^Operator token "billing backend" minted with the platform CLI/);
    // acts as the address: what it creates belongs to that address
    const app = await t.request('POST', '/api/v0/developerApps', {
      token: minted.access_token,
      body: { name: 'Made by backend', redirectUris: ['https://b.example/cb'] },
    });
    assert.equal(app.statusCode, 200, app.body);
    assert.equal(
      (await t.request('GET', `/api/v0/developerApp/${app.json().clientId}`)).json().developerApp.createdBy,
      who.platformAddress,
    );

    const row = await t.ctx.db
      .selectFrom('signin_authorizations')
      .selectAll()
      .where('authorization_id', '=', minted.id)
      .executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(minted.access_token.split('.')[1]), 'only the hash is stored');
    assert.equal(row.access_hash, sha256Hex(minted.access_token.split('.')[1]));

    const list = cliJson(await runCliInProcess(['token', 'list'], t.database.env));
    const listed = list.find((x: { id: string }) => x.id === minted.id);
    assert.equal(listed.label, 'billing backend');
    assert.deepEqual(listed.scopes, ['manageDeveloperApps', 'manageClaims']);
    assert.equal(listed.revokedAt, null);
    assert.ok(!JSON.stringify(list).includes(minted.access_token));

    const revoked = await runCliInProcess(['token', 'revoke', minted.id], t.database.env);
    assert.deepEqual(cliJson(revoked), { id: minted.id, revoked: true });
    assert.match(revoked.stderr, /operator token revoked/);
    assert.equal(await isSignedIn(t, minted.access_token), false);
    assert.equal((await runCliInProcess(['token', 'revoke', minted.id], t.database.env)).code, 1);
  });

  test('a wallet session cannot be revoked as an operator token; bad input is one line', async () => {
    const wallet = await signIn(t);
    const id = wallet.accessToken.split('.')[0];
    assert.equal((await runCliInProcess(['token', 'revoke', id], t.database.env)).code, 1);
    assert.equal(await isSignedIn(t, wallet.accessToken), true);
    for (const [args, why] of [
      [['--address', 'nope', '--scopes', 'manageClaims'], /--address/],
      [['--address', testAccount().address, '--scopes', 'root'], /Unknown scope\(s\) root/],
      [['--address', testAccount().address, '--scopes', 'manageClaims', '--expires', 'forever'], /--expires/],
      [['--address', testAccount().address, '--scopes', 'manageClaims', '--expires', '400d'], /366d/],
    ] as const) {
      const r = await runCliInProcess(['token', 'create', ...args], t.database.env);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, why);
    }
  });
});
