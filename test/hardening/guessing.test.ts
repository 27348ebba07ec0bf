// Guessing claim passwords and codes: failing guesses are throttled per claiming address, per IP and
// per claim, with one budget across processes sharing the database, and the owner sees the count.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase, startApp, type TestApp, type TestDatabase } from '../helpers/app.ts';
import type { SignedIn } from '../helpers/signin.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { claimCode } from '../../src/claims/onchain.ts';
import { claimWithPlugins, getClaim, manager, numUses, randomAddress } from '../claims/helpers.ts';

describe('guess throttling', () => {
  let database: TestDatabase;
  let a: TestApp; // two app instances on one database: two service processes
  let b: TestApp;
  let m: SignedIn;
  const clock = new ManualClock(1_700_000_000_000 - (1_700_000_000_000 % 60_000) + 1000); // 1 s into a window
  before(async () => {
    database = createTestDatabase();
    a = await startApp({ database, clock });
    b = await startApp({ database, clock });
    m = await manager(a);
  });
  after(async () => {
    await b.app.close();
    await b.ctx.close();
    await a.close();
  });

  const guess = (t: TestApp, claimId: string, address: string, ip: string, body: Record<string, unknown>) =>
    t.app.inject({
      method: 'POST',
      url: `/api/v0/claims/simulate/${claimId}/${address}`,
      remoteAddress: ip,
      headers: { 'x-api-key': t.apiKey },
      payload: { _expectedVersion: -1, ...body },
    });

  /** `n` wrong guesses, 20 at a time, alternating between the two instances. */
  async function wrongGuesses(claimId: string, address: string, ip: string, n: number, body: Record<string, unknown>) {
    for (let done = 0; done < n; done += 20) {
      const batch = await Promise.all(Array.from({ length: Math.min(20, n - done) }, (_, i) => guess((done + i) % 2 ? b : a, claimId, address, ip, body)));
      for (const res of batch) assert.equal(res.statusCode, 400, res.body);
    }
  }

  test('the 1,001st wrong password in a minute is refused; a right one from another address passes; the owner sees the count', async () => {
    const claimId = await claimWithPlugins(a, m.accessToken, [numUses(100_000), { pluginId: 'password', instanceId: 'pw', publicParams: {}, privateParams: { password: 'right' } }]);
    const attacker = randomAddress();
    await wrongGuesses(claimId, attacker, '10.0.0.1', 1000, { pw: { password: 'wrong' } });
    for (const body of [{ pw: { password: 'wrong' } }, { pw: { password: 'right' } }]) {
      const refused = await guess(a, claimId, attacker, '10.0.0.1', body);
      assert.equal(refused.statusCode, 429, refused.body);
      assert.match(refused.json().errorMessage, /Too many failed guesses/);
      assert.ok(Number(refused.headers['retry-after']) >= 1 && Number(refused.headers['retry-after']) <= 60);
    }
    // the attacker's IP with a fresh address is refused too (the IP bucket), and so is its address from elsewhere
    assert.equal((await guess(b, claimId, randomAddress(), '10.0.0.1', { pw: { password: 'wrong' } })).statusCode, 429);
    assert.equal((await guess(b, claimId, attacker, '10.0.0.9', { pw: { password: 'wrong' } })).statusCode, 429);
    // a right guess from another address and IP passes, on either instance
    for (const t of [a, b]) {
      const ok = await guess(t, claimId, randomAddress(), '10.0.0.2', { pw: { password: 'right' } });
      assert.equal(ok.statusCode, 200, ok.body);
    }
    // the owner sees the failed guesses; others do not
    const doc = await getClaim(a, claimId, '', m.accessToken);
    assert.deepEqual(doc._failedGuesses, { total: 1000, lastHour: 1000 });
    assert.equal((await getClaim(a, claimId))._failedGuesses, undefined);
    // the next window gives the attacker a new budget
    clock.advance(60_000);
    assert.equal((await guess(a, claimId, attacker, '10.0.0.1', { pw: { password: 'wrong' } })).statusCode, 400);
    assert.equal((await getClaim(b, claimId, '', m.accessToken))._failedGuesses.total, 1001);
  });

  test('codes count as guesses; the whole claim has its own, larger budget', async () => {
    const t = await startApp({ clock, env: { GUESS_LIMIT_PER_MINUTE: '5', GUESS_CLAIM_LIMIT_PER_MINUTE: '12' } });
    try {
      const owner = await manager(t);
      const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(100), { pluginId: 'codes', instanceId: 'c', publicParams: { numCodes: 3 }, privateParams: { seedCode: 'seed' } }]);
      const wrong = { c: { code: 'nope' } };
      for (let i = 0; i < 5; i++) assert.equal((await guess(t, claimId, randomAddress(), '10.1.0.1', wrong)).statusCode, 400);
      assert.equal((await guess(t, claimId, randomAddress(), '10.1.0.1', wrong)).statusCode, 429, 'the IP bucket');
      for (let i = 0; i < 5; i++) assert.equal((await guess(t, claimId, randomAddress(), '10.1.0.2', wrong)).statusCode, 400);
      assert.equal((await guess(t, claimId, randomAddress(), '10.1.0.3', wrong)).statusCode, 400);
      assert.equal((await guess(t, claimId, randomAddress(), '10.1.0.3', wrong)).statusCode, 400);
      // 12 failures on the claim: everyone waits for the next window
      const all = await guess(t, claimId, randomAddress(), '10.1.0.4', { c: { code: claimCode('seed', 1) } });
      assert.equal(all.statusCode, 429);
      assert.match(all.json().errorMessage, /on this claim/);
      // a claim without a password or codes is never throttled
      const plain = await claimWithPlugins(t, owner.accessToken, [numUses(1)]);
      assert.equal((await guess(t, plain, randomAddress(), '10.1.0.1', {})).statusCode, 200);
    } finally {
      await t.close();
    }
  });
});
