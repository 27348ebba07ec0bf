// Guessing claim passwords and codes: wrong answers are throttled per client IP (a rolling limit),
// per claiming address (a growing back-off) and per claim (a rolling limit that only participants
// feel), with one budget across processes sharing the database; the owner sees the counts; and a
// trusted backend's users are told apart by the IP it forwards.
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { createTestDatabase, startApp, type TestApp, type TestDatabase } from '../helpers/app.ts';
import { cliJson, runCliInProcess } from '../helpers/cli.ts';
import type { SignedIn } from '../helpers/signin.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { claimCode } from '../../src/claims/onchain.ts';
import { claimWithPlugins, getClaim, manager, numUses, randomAddress, resolved } from '../claims/helpers.ts';

const WRONG = { pw: { password: 'wrong' } };
const RIGHT = { pw: { password: 'right' } };
const passwordClaim = (t: TestApp, token: string) =>
  claimWithPlugins(t, token, [
    numUses(100_000),
    { pluginId: 'password', instanceId: 'pw', publicParams: {}, privateParams: { password: 'right' } },
  ]);

const guess = (
  t: TestApp,
  claimId: string,
  address: string,
  ip: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) =>
  t.app.inject({
    method: 'POST',
    url: `/api/v0/claims/simulate/${claimId}/${address}`,
    remoteAddress: ip,
    headers: { 'x-api-key': t.apiKey, ...headers },
    payload: { _expectedVersion: -1, ...body },
  });

/** The refusal's exact body and Retry-After. */
function assertRefused(
  res: { statusCode: number; body: string; headers: Record<string, unknown>; json(): any },
  errorMessage: string,
  retryAfter: number,
) {
  assert.equal(res.statusCode, 429, res.body);
  assert.deepEqual(res.json(), { errorMessage });
  assert.equal(res.headers['retry-after'], String(retryAfter));
}

describe('guess throttling', () => {
  let database: TestDatabase;
  let a: TestApp; // two app instances on one database: two service processes
  let b: TestApp;
  let m: SignedIn;
  // 1 s before the end of a fixed minute: where the old fixed windows gave twice the limit
  const clock = new ManualClock(1_700_000_000_000 - (1_700_000_000_000 % 60_000) + 59_000);
  before(async () => {
    database = createTestDatabase();
    a = await startApp({ database, clock, env: { GUESS_LIMIT_PER_MINUTE: '20' } });
    b = await startApp({ database, clock, env: { GUESS_LIMIT_PER_MINUTE: '20' } });
    m = await manager(a);
  });
  after(async () => {
    await b.app.close();
    await b.ctx.close();
    await a.close();
  });

  test('one IP with fresh addresses gets at most 20 wrong answers evaluated in any 60 s, across a minute boundary too', async () => {
    const claimId = await passwordClaim(a, m.accessToken);
    // a limit of 20 per 60 s: a burst of 5, then one every 4 s (15 a minute)
    const evaluated: number[] = [];
    const start = clock.now();
    for (let step = 0; step <= 130; step++) {
      // a flood at the start, then 3 tries every half second, from both instances
      const tries = step === 0 ? 40 : 3;
      for (let i = 0; i < tries; i++) {
        const res = await guess(i % 2 ? b : a, claimId, randomAddress(), '10.0.0.1', WRONG);
        if (res.statusCode === 400) {
          assert.deepEqual(res.json(), { errorMessage: 'Incorrect password.' });
          evaluated.push(clock.now() - start);
        } else {
          assert.equal(res.statusCode, 429, res.body);
          assert.match(
            res.json().errorMessage,
            new RegExp(
              `^Too many failed guesses from this IP address on claim ${claimId}: 20 per minute\\. Try again in [1-4] s\\.$`,
            ),
          );
        }
      }
      clock.advance(500);
    }
    // at most 20 in any 60 s window (closed at both ends)
    const most = Math.max(...evaluated.map((t0) => evaluated.filter((t) => t >= t0 && t <= t0 + 60_000).length));
    assert.equal(most, 20, `evaluated at ${evaluated.join(', ')}`);
    assert.deepEqual(evaluated.slice(0, 7), [0, 0, 0, 0, 0, 4000, 8000]);
    // another IP is not affected; right answers are not counted against the IP
    assert.equal((await guess(b, claimId, randomAddress(), '10.0.0.2', RIGHT)).statusCode, 200);
    for (let i = 0; i < 10; i++)
      assert.equal((await guess(a, claimId, randomAddress(), '10.0.0.3', RIGHT)).statusCode, 200);
    for (let i = 0; i < 5; i++)
      assert.equal((await guess(a, claimId, randomAddress(), '10.0.0.3', WRONG)).statusCode, 400);
    assert.equal((await guess(a, claimId, randomAddress(), '10.0.0.3', WRONG)).statusCode, 429);
    // the owner sees every failed guess; others do not
    const doc = await getClaim(a, claimId, '', m.accessToken);
    assert.deepEqual(doc._failedGuesses, { total: evaluated.length + 5, lastHour: evaluated.length + 5 });
    assert.equal((await getClaim(a, claimId))._failedGuesses, undefined);
  });

  test('one address is held back longer after every wrong answer past the fifth, from any IP; a right answer resets it', async () => {
    const claimId = await passwordClaim(a, m.accessToken);
    const address = randomAddress();
    let ip = 0;
    const fresh = () => `10.2.0.${++ip}`;
    for (let i = 0; i < 5; i++)
      assert.equal((await guess(i % 2 ? b : a, claimId, address, fresh(), WRONG)).statusCode, 400);
    for (const [n, wait] of [
      [5, 1],
      [6, 2],
      [7, 4],
      [8, 8],
    ]) {
      // refused from any IP, right answer included, until the wait is over
      assertRefused(
        await guess(a, claimId, address, fresh(), WRONG),
        `Too many failed guesses for this address on claim ${claimId}: ${n} in a row. Try again in ${wait} s.`,
        wait,
      );
      clock.advance(wait * 1000 - 1);
      assertRefused(
        await guess(b, claimId, address, fresh(), RIGHT),
        `Too many failed guesses for this address on claim ${claimId}: ${n} in a row. Try again in 1 s.`,
        1,
      );
      clock.advance(1);
      assert.equal((await guess(b, claimId, address, fresh(), WRONG)).statusCode, 400);
    }
    // another address is not held back, and neither is this address on another claim
    assert.equal((await guess(a, claimId, randomAddress(), fresh(), WRONG)).statusCode, 400);
    const other = await passwordClaim(a, m.accessToken);
    assert.equal((await guess(a, other, address, fresh(), WRONG)).statusCode, 400);
    // after the wait, the right answer passes and the count starts again
    assertRefused(
      await guess(a, claimId, address, fresh(), RIGHT),
      `Too many failed guesses for this address on claim ${claimId}: 9 in a row. Try again in 16 s.`,
      16,
    );
    clock.advance(16_000);
    assert.equal((await guess(a, claimId, address, fresh(), RIGHT)).statusCode, 200);
    for (let i = 0; i < 5; i++) assert.equal((await guess(b, claimId, address, fresh(), WRONG)).statusCode, 400);
    assertRefused(
      await guess(a, claimId, address, fresh(), WRONG),
      `Too many failed guesses for this address on claim ${claimId}: 5 in a row. Try again in 1 s.`,
      1,
    );
    // a refused version (no plugin ran) costs nothing: the same wait, the same count
    clock.advance(1000);
    assert.equal((await guess(a, claimId, address, fresh(), { ...WRONG, _expectedVersion: 99 })).statusCode, 409);
    assert.equal((await guess(a, claimId, address, fresh(), WRONG)).statusCode, 400);
    assertRefused(
      await guess(a, claimId, address, fresh(), WRONG),
      `Too many failed guesses for this address on claim ${claimId}: 6 in a row. Try again in 2 s.`,
      2,
    );
    clock.advance(60_000);
  });

  test('wrong codes count as guesses, used ones do not; a claim without a password or codes is never throttled', async () => {
    const claimId = await claimWithPlugins(a, m.accessToken, [
      numUses(100),
      { pluginId: 'codes', instanceId: 'c', publicParams: { numCodes: 3 }, privateParams: { seedCode: 'seed' } },
    ]);
    const wrong = { c: { code: 'nope' } };
    for (let i = 0; i < 5; i++)
      assert.equal((await guess(a, claimId, randomAddress(), '10.1.0.1', wrong)).statusCode, 400);
    assertRefused(
      await guess(a, claimId, randomAddress(), '10.1.0.1', wrong),
      `Too many failed guesses from this IP address on claim ${claimId}: 20 per minute. Try again in 4 s.`,
      4,
    );
    assert.equal(
      (await guess(a, claimId, randomAddress(), '10.1.0.2', { c: { code: claimCode('seed', 1) } })).statusCode,
      200,
    );
    // a code already used was a right answer: racing for shared codes costs no guesses
    const used = claimCode('seed', 2);
    const winner = randomAddress();
    const done = await a.app.inject({
      method: 'POST',
      url: `/api/v0/claims/complete/${claimId}/${winner}`,
      remoteAddress: '10.1.0.3',
      headers: { 'x-api-key': a.apiKey },
      payload: { _expectedVersion: -1, c: { code: used } },
    });
    assert.equal(done.statusCode, 200, done.body);
    assert.equal((await resolved(a, done.json().claimAttemptId)).success, true);
    for (let i = 0; i < 30; i++) {
      const res = await guess(i % 2 ? b : a, claimId, randomAddress(), '10.1.0.3', { c: { code: used } });
      assert.deepEqual([res.statusCode, res.json()], [400, { errorMessage: 'Code already used.' }]);
    }
    const plain = await claimWithPlugins(a, m.accessToken, [numUses(1)]);
    for (let i = 0; i < 30; i++) assert.equal((await guess(a, plain, randomAddress(), '10.1.0.1', {})).statusCode, 200);
    assert.equal((await getClaim(a, claimId, '', m.accessToken))._failedGuesses.total, 5);
  });
});

describe('guessing through a backend', () => {
  let m: SignedIn;
  let trusted: { id: string; key: string };
  const clock = new ManualClock(1_700_000_000_000);
  // 100 a minute per IP (a burst of 25): small enough that one user's guesses use it up quickly
  const t = useApp({ clock, env: { GUESS_LIMIT_PER_MINUTE: '100' } });
  before(async () => {
    m = await manager(t);
    trusted = cliJson(
      await runCliInProcess(['api-key', 'create', '--label', 'claims backend', '--trusted-backend'], t.database.env),
    );
  });

  const viaBackend = (
    key: string,
    claimId: string,
    address: string,
    endUserIp: string,
    body: Record<string, unknown>,
  ) =>
    t.app.inject({
      method: 'POST',
      url: `/api/v0/claims/simulate/${claimId}/${address}`,
      remoteAddress: '192.0.2.10', // the backend's own address, the same for all its users
      headers: { 'x-api-key': key, 'x-end-user-ip': endUserIp },
      payload: { _expectedVersion: -1, ...body },
    });

  test('the CLI marks a key as a trusted backend; api-key list shows the mark', async () => {
    assert.match(trusted.id, /^key_[0-9a-f]{16}$/);
    assert.equal((trusted as unknown as { trustedBackend: boolean }).trustedBackend, true);
    const plain = cliJson(await runCliInProcess(['api-key', 'create', '--label', 'plain'], t.database.env));
    assert.equal(plain.trustedBackend, false);
    const list: Array<{ id: string; trustedBackend: boolean }> = cliJson(
      await runCliInProcess(['api-key', 'list'], t.database.env),
    );
    assert.equal(list.find((k) => k.id === trusted.id)?.trustedBackend, true);
    assert.equal(list.find((k) => k.id === plain.id)?.trustedBackend, false);
  });

  test("through a trusted backend, one user's 1,000 wrong guesses do not affect its other users", async () => {
    const claimId = await passwordClaim(t, m.accessToken);
    let evaluated = 0;
    for (let done = 0; done < 1000; done += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, () => viaBackend(trusted.key, claimId, randomAddress(), '198.51.100.7', WRONG)),
      );
      for (const res of batch) {
        assert.ok(res.statusCode === 400 || res.statusCode === 429, res.body);
        if (res.statusCode === 400) evaluated++;
      }
    }
    assert.equal(evaluated, 25, 'the burst of the limit (100 per 60 s) at one instant');
    assertRefused(
      await viaBackend(trusted.key, claimId, randomAddress(), '198.51.100.7', RIGHT),
      `Too many failed guesses from this IP address on claim ${claimId}: 100 per minute. Try again in 1 s.`,
      1,
    );
    // the backend's other users: right answers pass, wrong ones are evaluated (IPv4 and IPv6)
    for (const ip of ['198.51.100.8', '198.51.100.9', '2001:db8:1::5', '203.0.113.1', '203.0.113.2']) {
      assert.equal((await viaBackend(trusted.key, claimId, randomAddress(), ip, RIGHT)).statusCode, 200, ip);
      assert.equal((await viaBackend(trusted.key, claimId, randomAddress(), ip, WRONG)).statusCode, 400, ip);
    }
    assert.deepEqual((await getClaim(t, claimId, '', m.accessToken))._failedGuesses, { total: 30, lastHour: 30 });
  });

  test('without the mark the header is ignored: all users of the key share its IP', async () => {
    const claimId = await passwordClaim(t, m.accessToken);
    for (let i = 0; i < 25; i++)
      assert.equal((await viaBackend(t.apiKey, claimId, randomAddress(), '198.51.100.7', WRONG)).statusCode, 400);
    const refused = `Too many failed guesses from this IP address on claim ${claimId}: 100 per minute. Try again in 1 s.`;
    assertRefused(await viaBackend(t.apiKey, claimId, randomAddress(), '198.51.100.8', RIGHT), refused, 1);
    assertRefused(await viaBackend(t.apiKey, claimId, randomAddress(), 'not an ip', RIGHT), refused, 1);
  });

  test('a trusted backend must send one valid IP address in x-end-user-ip; without the header its own IP counts', async () => {
    const claimId = await passwordClaim(t, m.accessToken);
    for (const bad of ['nope', '198.51.100.300', '1', '010.1.1.1', '198.51.100.7, 198.51.100.8', '::ffff:zz', ' ']) {
      const res = await viaBackend(trusted.key, claimId, randomAddress(), bad, WRONG);
      assert.equal(res.statusCode, 400, bad);
      assert.deepEqual(res.json(), {
        errorMessage:
          "The x-end-user-ip header must be one IPv4 or IPv6 address (the end user's, sent by a trusted backend)",
      });
    }
    const noHeader = () =>
      t.app.inject({
        method: 'POST',
        url: `/api/v0/claims/simulate/${claimId}/${randomAddress()}`,
        remoteAddress: '192.0.2.77',
        headers: { 'x-api-key': trusted.key },
        payload: { _expectedVersion: -1, ...WRONG },
      });
    for (let i = 0; i < 25; i++) assert.equal((await noHeader()).statusCode, 400);
    assert.equal((await noHeader()).statusCode, 429);
    // the backend's users are unaffected by its own IP's failures
    assert.equal((await viaBackend(trusted.key, claimId, randomAddress(), '198.51.100.20', WRONG)).statusCode, 400);
  });
});

describe('a distributed attack on one claim', () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  const clock = new ManualClock(1_700_000_000_000);
  before(async () => {
    database = createTestDatabase();
    a = await startApp({ database, clock, env: { GUESS_LIMIT_PER_MINUTE: '100' } });
    b = await startApp({ database, clock, env: { GUESS_LIMIT_PER_MINUTE: '100' } });
  });
  after(async () => {
    await b.app.close();
    await b.ctx.close();
    await a.close();
  });

  test('11 IPs, 10,400 wrong guesses in 10.4 s: the claim slows them down, and a fresh claimer with the right password still succeeds', async () => {
    const m = await manager(a);
    const claimId = await passwordClaim(a, m.accessToken);
    const attackers = Array.from({ length: 11 }, (_, i) => `10.66.0.${i + 1}`);
    let evaluated = 0;
    let refusedOnClaim = 0;
    let fresh = 0;
    for (let sent = 0; sent < 10_400; sent += 20) {
      const batch = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          guess((sent + i) % 2 ? b : a, claimId, randomAddress(), attackers[(sent + i) % 11], WRONG),
        ),
      );
      for (const res of batch) {
        if (res.statusCode === 400) evaluated++;
        else {
          assert.equal(res.statusCode, 429, res.body);
          if (/^Too many failed guesses on claim /.test(res.json().errorMessage)) refusedOnClaim++;
        }
      }
      clock.advance(20); // 1 ms a guess
      if (sent % 1000 === 0) {
        // during the attack, a claimer who took no part passes with the right password
        const ok = await guess(sent % 2000 ? a : b, claimId, randomAddress(), `172.16.0.${++fresh}`, RIGHT);
        assert.equal(ok.statusCode, 200, `${sent}: ${ok.body}`);
      }
    }
    // one more flood at the same instant uses whatever the claim has left
    for (const res of await Promise.all(
      attackers.flatMap((ip) => [ip, ip]).map((ip) => guess(a, claimId, randomAddress(), ip, WRONG)),
    )) {
      if (res.statusCode === 400) evaluated++;
      else assert.equal(res.statusCode, 429, res.body);
    }
    // the claim-wide limit (1,000 per 60 s: a burst of 250, then one every 80 ms) was reached, where
    // 11 IPs at 100 per 60 s each would have had 418; requests in flight together (at most 22 here) may pass it
    assert.ok(refusedOnClaim > 0);
    assert.ok(evaluated <= 250 + Math.floor(10_400 / 80) + 22, `${evaluated}`);
    // a participant is refused, right answer included; a fresh address does not help it
    const claimRefusal = await guess(a, claimId, randomAddress(), attackers[0], RIGHT);
    assert.equal(claimRefusal.statusCode, 429);
    assert.match(
      claimRefusal.json().errorMessage,
      new RegExp(
        `^Too many failed guesses on claim ${claimId} \\(1000 per minute\\); until it is under that, only addresses and IP addresses without a wrong answer in the last 10 minutes are evaluated\\. Try again in \\d+ s\\.$`,
      ),
    );
    // fresh claimers pass on both instances; a fresh one's wrong answer is evaluated once, then it is a participant
    for (const t of [a, b])
      assert.equal((await guess(t, claimId, randomAddress(), `172.16.1.${++fresh}`, RIGHT)).statusCode, 200);
    assert.equal((await guess(a, claimId, randomAddress(), '172.16.2.1', WRONG)).statusCode, 400);
    assert.equal((await guess(b, claimId, randomAddress(), '172.16.2.1', RIGHT)).statusCode, 429);
    assert.equal((await guess(b, claimId, randomAddress(), '2001:db8:66:1::1', WRONG)).statusCode, 400);
    assert.equal((await guess(b, claimId, randomAddress(), '2001:db8:66:1::2', RIGHT)).statusCode, 429, 'the same /64');
    assert.equal((await guess(b, claimId, randomAddress(), '2001:db8:66:2::2', RIGHT)).statusCode, 429, 'the same /48');
    assert.equal((await guess(b, claimId, randomAddress(), '2001:db8:67:2::2', RIGHT)).statusCode, 200);
    // the owner sees every evaluated wrong answer
    assert.deepEqual((await getClaim(b, claimId, '', m.accessToken))._failedGuesses, {
      total: evaluated + 2,
      lastHour: evaluated + 2,
    });
    // once the attack stops, the claim's budget comes back: participants are evaluated again
    clock.advance(60_000);
    assert.equal((await guess(a, claimId, randomAddress(), attackers[0], RIGHT)).statusCode, 200);
  });
});

describe('parallel attempts from one address', () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let m: SignedIn;
  const clock = new ManualClock(1_700_000_000_000);
  before(async () => {
    database = createTestDatabase();
    // the default limits: one IP may have 250 attempts in flight, so only the address's count can refuse
    a = await startApp({ database, clock });
    b = await startApp({ database, clock });
    m = await manager(a);
  });
  after(async () => {
    await b.app.close();
    await b.ctx.close();
    await a.close();
  });

  /** `n` attempts at once from one address and one IP, alternating between the two instances. */
  const parallel = (claimId: string, address: string, n: number, body: Record<string, unknown>) =>
    Promise.all(Array.from({ length: n }, (_, i) => guess(i % 2 ? b : a, claimId, address, '10.9.0.1', body)));

  test('64 right answers at once from one address are all evaluated, after wrong ones too', async () => {
    const claimId = await passwordClaim(a, m.accessToken);
    const address = randomAddress();
    for (const res of await parallel(claimId, address, 64, RIGHT)) assert.equal(res.statusCode, 200, res.body);
    // 4 wrong answers in a row leave one free: still, nobody is refused who did not fail 5 times
    for (let i = 0; i < 4; i++) assert.equal((await guess(a, claimId, address, '10.9.0.1', WRONG)).statusCode, 400);
    for (const res of await parallel(claimId, address, 64, RIGHT)) assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual((await getClaim(a, claimId, '', m.accessToken))._failedGuesses, { total: 4, lastHour: 4 });
  });

  test('64 wrong answers at once: exactly 5 are evaluated, and the refusals name the real count', async () => {
    const claimId = await passwordClaim(a, m.accessToken);
    const address = randomAddress();
    const first = await parallel(claimId, address, 64, WRONG);
    assert.equal(first.filter((r) => r.statusCode === 400).length, 5);
    for (const res of first.filter((r) => r.statusCode !== 400))
      assertRefused(
        res,
        `Too many failed guesses for this address on claim ${claimId}: 5 in a row. Try again in 1 s.`,
        1,
      );
    // after the wait, one more wrong answer at a time, however many are sent together
    clock.advance(1000);
    const second = await parallel(claimId, address, 64, WRONG);
    assert.equal(second.filter((r) => r.statusCode === 400).length, 1);
    for (const res of second.filter((r) => r.statusCode !== 400))
      assertRefused(
        res,
        `Too many failed guesses for this address on claim ${claimId}: 6 in a row. Try again in 2 s.`,
        2,
      );
    assert.deepEqual((await getClaim(a, claimId, '', m.accessToken))._failedGuesses, { total: 6, lastHour: 6 });
  });
});
