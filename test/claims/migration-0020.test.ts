// Migration 0020_guess_buckets on a database written before it: the owner's failed-guess counts
// (the total and the minutes of the last hour) carry over from the old one-minute windows, the old
// per-address and per-IP windows are dropped, and existing API keys keep working, unmarked.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from '../helpers/app.ts';
import { seedDatabaseAt } from '../helpers/seed-database.ts';
import { cliJson, runCli } from '../helpers/cli.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { randomHex, sha256Hex } from '../../src/shared/crypto.ts';
import { createClaim, getClaim, manager, newClaimId, numUses, randomAddress } from '../claims/helpers.ts';

describe('migration 0020_guess_buckets', () => {
  let t: TestApp;
  const now = 1_700_000_000_000;
  const minute = now - (now % 60_000);
  const claimId = newClaimId('mig');
  const oldKey = randomHex(32);

  before(async () => {
    const database = await seedDatabaseAt('0018_secret_key_check', async (db) => {
      await db
        .insertInto('claim_guess_failures' as never)
        .values([
          { claim_id: claimId, scope: 'total', window_start: 0, failures: 1001 },
          { claim_id: claimId, scope: 'claim', window_start: minute, failures: 3 },
          { claim_id: claimId, scope: 'claim', window_start: minute - 10 * 60_000, failures: 4 },
          { claim_id: claimId, scope: 'claim', window_start: minute - 2 * 3_600_000, failures: 994 },
          { claim_id: claimId, scope: 'ip:10.0.0.1', window_start: minute, failures: 7 },
          { claim_id: claimId, scope: `address:${randomAddress()}`, window_start: minute, failures: 7 },
        ] as never)
        .execute();
      await db
        .insertInto('api_keys' as never)
        .values({
          id: 'key_0123456789abcdef',
          label: 'before 0020',
          key_hash: sha256Hex(oldKey),
          created_at: now,
          revoked_at: null,
          owner: null,
          last_used_at: null,
        } as never)
        .execute();
    });
    // applies 0020; the ping route shows what the gate made of the key
    t = await startApp({
      database,
      clock: new ManualClock(now),
      extend: (app) =>
        app.get('/api/v0/ping', async (req) => ({ keyId: req.apiKeyId, trustedBackend: req.apiKeyTrustedBackend })),
    });
  });
  after(() => t.close());

  test("the owner's counts carry over: the total and the minutes of the last hour", async () => {
    const m = await manager(t);
    await createClaim(t, m.accessToken, {
      claimId,
      plugins: [
        numUses(10),
        { pluginId: 'password', instanceId: 'pw', publicParams: {}, privateParams: { password: 'right' } },
      ],
    });
    assert.deepEqual((await getClaim(t, claimId, '', m.accessToken))._failedGuesses, { total: 1001, lastHour: 7 });
    // the old per-IP window is gone: that IP has its full budget (a burst of 25)
    for (let i = 0; i < 25; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/v0/claims/simulate/${claimId}/${randomAddress()}`,
        remoteAddress: '10.0.0.1',
        headers: { 'x-api-key': t.apiKey },
        payload: { _expectedVersion: -1, pw: { password: 'wrong' } },
      });
      assert.equal(res.statusCode, 400, res.body);
    }
    assert.deepEqual((await getClaim(t, claimId, '', m.accessToken))._failedGuesses, { total: 1026, lastHour: 32 });
  });

  test('a key made before the migration still works and is not a trusted backend', async () => {
    assert.deepEqual((await t.request('GET', '/api/v0/ping', { apiKey: oldKey })).json(), {
      keyId: 'key_0123456789abcdef',
      trustedBackend: false,
    });
    const list: Array<{ id: string; trustedBackend: boolean }> = cliJson(
      await runCli(['api-key', 'list'], t.database.env),
    );
    assert.deepEqual(
      list.find((k) => k.id === 'key_0123456789abcdef'),
      { id: 'key_0123456789abcdef', label: 'before 0020', createdAt: now, revokedAt: null, trustedBackend: false },
    );
  });
});
