// Migration 0007_signin_token_selectors on a database written before it: every sign-in row survives
// (an unexchanged code can still be exchanged, and then issues selector.verifier tokens), the token
// hashes lose their unique indexes, rotated tokens are re-keyed by family, and tokens issued in the
// old 64-hex format stop working without revoking anything.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { startApp, TEST_DB, type TestApp } from '../helpers/app.ts';
import { seedDatabaseAt } from '../helpers/seed-database.ts';
import { testAccount } from '../helpers/signin.ts';
import { randomHex, sha256Hex } from '../../src/shared/crypto.ts';
import { createDeveloperApp } from '../../src/signin/apps.ts';
import type { SigninAuthorizationTable, SigninRotatedTokenTable } from '../../src/signin/storage.ts';

const TOKEN = '/api/v0/signin/token';
const MINUTE = 60_000;
const DAY = 86_400_000;

describe('migration 0007_signin_token_selectors', () => {
  let t: TestApp;
  const now = Date.now();
  const account = testAccount();
  const code = randomHex(32);
  const oldAccess = randomHex(32);
  const oldRefresh = randomHex(32);
  const oldRotated = randomHex(32);
  let client: { clientId: string; clientSecret: string };
  // rows as 0007 knew them (0022 added oidc_nonce)
  let pending: Omit<SigninAuthorizationTable, 'oidc_nonce'>;
  let live: Omit<SigninAuthorizationTable, 'oidc_nonce'>;
  let rotated: SigninRotatedTokenTable;

  before(async () => {
    const database = await seedDatabaseAt('0006_swap', async (db) => {
      const { app, clientSecret } = await createDeveloperApp(
        db,
        { name: 'Before 0007', redirectUris: ['https://app.example/callback'] },
        now,
      );
      client = { clientId: app.clientId, clientSecret };
      const base = {
        client_id: app.clientId,
        redirect_uri: null,
        scopes: JSON.stringify(['completeClaims']),
        code_challenge: null,
        address: account.address,
        platform_address: account.platformAddress,
        chain: 'ETH' as const,
        message: 'the signed message',
        created_at: now,
        code_expires_at: now + 10 * MINUTE,
      };
      // a code approved before the upgrade and not exchanged yet
      pending = {
        ...base,
        authorization_id: randomHex(16),
        code_hash: sha256Hex(code),
        code_consumed_at: null,
        expires_at: null,
        revoked_at: null,
        access_hash: null,
        access_scopes: null,
        access_expires_at: null,
        refresh_hash: null,
        refresh_expires_at: null,
      };
      // a live family with old-format tokens (SHA-256 of the whole 64-hex token) and one rotated refresh token
      live = {
        ...base,
        authorization_id: randomHex(16),
        code_hash: sha256Hex(randomHex(32)),
        code_consumed_at: now,
        expires_at: now + 60 * DAY,
        revoked_at: null,
        access_hash: sha256Hex(oldAccess),
        access_scopes: base.scopes,
        access_expires_at: now + DAY,
        refresh_hash: sha256Hex(oldRefresh),
        refresh_expires_at: now + 60 * DAY,
      };
      rotated = { token_hash: sha256Hex(oldRotated), authorization_id: live.authorization_id, rotated_at: now };
      await db.insertInto('signin_authorizations').values([pending, live]).execute();
      await db.insertInto('signin_rotated_tokens').values(rotated).execute();
    });
    t = await startApp({ database }); // applies 0007
  });
  after(() => t?.close());

  test('every row written before 0007 survives it unchanged', async () => {
    const rows = await t.ctx.db.selectFrom('signin_authorizations').selectAll().orderBy('authorization_id').execute();
    // (0022, applied since, adds oidc_nonce: null to every row)
    assert.deepEqual(
      rows,
      [pending, live]
        .map((r) => ({ ...r, oidc_nonce: null }))
        .sort((a, b) => a.authorization_id.localeCompare(b.authorization_id)),
    );
    assert.deepEqual(await t.ctx.db.selectFrom('signin_rotated_tokens').selectAll().execute(), [rotated]);
  });

  test('the token hashes are no longer unique; rotated tokens are keyed by (authorization_id, token_hash)', async () => {
    // two rows may hold the same hash now (only the selector finds a row)
    const twin = {
      ...pending,
      authorization_id: randomHex(16),
      code_hash: sha256Hex(randomHex(32)),
      access_hash: 'same',
      refresh_hash: 'same',
    };
    await t.ctx.db
      .insertInto('signin_authorizations')
      .values([twin, { ...twin, authorization_id: randomHex(16), code_hash: sha256Hex(randomHex(32)) }])
      .execute();
    await t.ctx.db.deleteFrom('signin_authorizations').where('access_hash', '=', 'same').execute();
    // one token hash in two families is allowed; the same (family, hash) twice is not
    const other = { token_hash: rotated.token_hash, authorization_id: pending.authorization_id, rotated_at: now };
    await t.ctx.db.insertInto('signin_rotated_tokens').values(other).execute();
    await assert.rejects(t.ctx.db.insertInto('signin_rotated_tokens').values(other).execute());
    await t.ctx.db
      .deleteFrom('signin_rotated_tokens')
      .where('authorization_id', '=', pending.authorization_id)
      .execute();
    const pk =
      TEST_DB === 'sqlite'
        ? (
            await sql<{
              name: string;
              pk: number;
            }>`select name, pk from pragma_table_info('signin_rotated_tokens') where pk > 0 order by pk`.execute(
              t.ctx.db,
            )
          ).rows.map((r) => r.name)
        : (
            await sql<{ attname: string }>`select a.attname from pg_index i
              join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
              where i.indrelid = 'signin_rotated_tokens'::regclass and i.indisprimary
              order by array_position(i.indkey::int2[], a.attnum)`.execute(t.ctx.db)
          ).rows.map((r) => r.attname);
    assert.deepEqual(pk, ['authorization_id', 'token_hash']);
  });

  test('a code approved before the upgrade is exchanged for selector.verifier tokens', async () => {
    const res = await t.request('POST', TOKEN, {
      body: { grant_type: 'authorization_code', code, client_id: client.clientId, client_secret: client.clientSecret },
    });
    assert.equal(res.statusCode, 200, res.body);
    const tokens = res.json();
    assert.equal(tokens.platformAddress, account.platformAddress);
    assert.match(tokens.access_token, new RegExp(`^${pending.authorization_id}\\.[0-9a-f]{64}$`));
    const status = await t.request('POST', '/api/v0/auth/status', { token: tokens.access_token, body: {} });
    assert.equal(status.json().signedIn, true);
    assert.equal(status.json().message, 'the signed message');
    const refreshed = await t.request('POST', TOKEN, {
      body: {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      },
    });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
  });

  test('old-format tokens stop working, and presenting them revokes nothing', async () => {
    for (const token of [oldAccess, oldRefresh, oldRotated]) {
      const status = await t.request('POST', '/api/v0/auth/status', { token, body: {} });
      assert.equal(status.json().signedIn, false);
      const res = await t.request('POST', TOKEN, {
        body: {
          grant_type: 'refresh_token',
          refresh_token: token,
          client_id: client.clientId,
          client_secret: client.clientSecret,
        },
      });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error, 'invalid_grant');
      assert.equal((await t.request('POST', '/api/v0/signin/token/revoke', { body: { token } })).statusCode, 200);
    }
    const row = await t.ctx.db
      .selectFrom('signin_authorizations')
      .select('revoked_at')
      .where('authorization_id', '=', live.authorization_id)
      .executeTakeFirstOrThrow();
    assert.equal(row.revoked_at, null);
  });
});
