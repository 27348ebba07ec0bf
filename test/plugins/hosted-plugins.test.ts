// The other hosted plugins: min-badge (native balance, its 60 s / 10 s result windows under a
// manual clock, an unreadable chain), satisfies-claim (indexed and on-demand targets, cycles and the
// chain-length limit at create and update), username-set, and the display-only url-clicker and
// custom-instructions.
import { describe, test, before, after } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import { startFakeChain, type FakeChain } from '../helpers/fake-chain.ts';
import {
  attempt,
  claimWithPlugins,
  createClaim,
  manager,
  numUses,
  randomAddress,
  resolved,
} from '../claims/helpers.ts';
import type { ManualClock } from '../../src/shared/clock.ts';

const plugin = (pluginId: string, publicParams: Record<string, unknown> = {}, instanceId = 'h') => ({
  pluginId,
  instanceId,
  publicParams,
  privateParams: {},
});
const WHOLE = 1_000_000_000n;

describe('hosted plugins', () => {
  let chain: FakeChain;
  let owner: SignedIn;
  let clock: ManualClock;
  before(async () => {
    chain = await startFakeChain();
  });
  const t = useApp({ clock: true, env: () => ({ CHAIN_REST_URL: chain.url, CHAIN_TIMEOUT_MS: '1000' }) });
  before(async () => {
    clock = t.clock as ManualClock;
    owner = await manager(t);
  });
  after(() => chain.close());

  async function simulate(claimId: string, address: string): Promise<string | null> {
    const r = await attempt(t, 'simulate', claimId, address);
    return r.statusCode === 200 ? null : r.json().errorMessage;
  }
  /** The chain client reuses a native balance for 2 s of real time. */
  const pastClientCache = () => new Promise((r) => setTimeout(r, 2100));

  test('min-badge: whole units, truncating; a pass is kept 60 s and a failure 10 s', async () => {
    const rich = randomAddress();
    const poor = randomAddress();
    chain.nativeBalances.set(rich, (5n * WHOLE + WHOLE - 1n).toString()); // 5.999… whole
    chain.nativeBalances.set(poor, (4n * WHOLE).toString());
    const claimId = await claimWithPlugins(t, owner.accessToken, [
      numUses(100),
      plugin('min-badge', { minBalance: 5 }),
    ]);
    assert.equal(await simulate(claimId, rich), null);
    assert.equal(await simulate(claimId, poor), 'Insufficient balance');
    const six = await claimWithPlugins(t, owner.accessToken, [numUses(100), plugin('min-badge', { minBalance: 6 })]);
    assert.equal(await simulate(six, rich), 'Insufficient balance', 'truncating division: 5.999 whole is 5');

    // balances change on the chain
    chain.nativeBalances.set(rich, '0');
    chain.nativeBalances.set(poor, (100n * WHOLE).toString());
    await pastClientCache();
    clock.advance(9_000);
    assert.equal(await simulate(claimId, rich), null, 'a pass is kept for 60 s');
    assert.equal(await simulate(claimId, poor), 'Insufficient balance', 'a failure is kept for 10 s');
    clock.advance(1_001);
    assert.equal(await simulate(claimId, poor), null, 'after 10 s the failure is read again');
    assert.equal(await simulate(claimId, rich), null);
    clock.advance(50_000);
    assert.equal(await simulate(claimId, rich), 'Insufficient balance', 'after 60 s the pass is read again');
  });

  test("min-badge: a failure is kept only from a chain read made for the check, never from the account route's balance cache", async () => {
    const who = randomAddress();
    chain.nativeBalances.set(who, '0');
    const claimId = await claimWithPlugins(t, owner.accessToken, [
      numUses(100),
      plugin('min-badge', { minBalance: 2 }),
    ]);
    const reads = () => chain.requests.filter((r) => r.path.includes(`/balances/${who}/`)).length;
    // the account route reads the native balance, which the chain client keeps for 2 s
    const account = await t.request('GET', `/api/v0/user?address=${who}`);
    assert.deepEqual(account.json().account.balance, { amount: '0', denom: 'ubadge' });
    chain.nativeBalances.set(who, (2n * WHOLE).toString());
    const before = reads();
    assert.equal(await simulate(claimId, who), null, 'the chain already says 2 whole units');
    assert.equal(reads(), before + 1, 'the check read the chain itself');
    // and a failure it keeps is one it read: 0 again, read now, kept 10 s
    chain.nativeBalances.set(who, '0');
    clock.advance(60_001);
    assert.equal(await simulate(claimId, who), 'Insufficient balance');
    assert.equal(reads(), before + 2);
  });

  test('min-badge: an unreachable chain fails with a clear text, and is not kept', async () => {
    const who = randomAddress();
    chain.nativeBalances.set(who, (10n * WHOLE).toString());
    const claimId = await claimWithPlugins(t, owner.accessToken, [
      numUses(100),
      plugin('min-badge', { minBalance: 1 }),
    ]);
    chain.intercept({
      match: (p) => p.includes(`/balances/${who}/`),
      action: { status: 500, message: 'node down' },
      times: 1,
    });
    assert.match((await simulate(claimId, who)) ?? '', /^Could not read the balance from the chain: /);
    assert.equal(await simulate(claimId, who), null, 'the next check reads the chain again');
    const bad = await t.request('POST', '/api/v0/claims', {
      token: owner.accessToken,
      body: { claims: [{ claimId: 'mb-bad', plugins: [numUses(1), plugin('min-badge', { minBalance: -1 })] }] },
    });
    assert.match(bad.json().errorMessage, /minBalance must be a non-negative integer/);
  });

  test('satisfies-claim: an indexed target needs one recorded success; an on-demand target is evaluated now', async () => {
    const user = await signIn(t);
    const other = randomAddress();
    const target = await claimWithPlugins(t, owner.accessToken, [numUses(10)]);
    const gated = await claimWithPlugins(t, owner.accessToken, [
      numUses(10),
      plugin('satisfies-claim', { claimIdToCheck: target }),
    ]);
    assert.equal(await simulate(gated, user.platformAddress), `Address has not satisfied claim ${target}.`);
    const done = await attempt(t, 'complete', target, user.platformAddress);
    assert.equal((await resolved(t, done.json().claimAttemptId)).success, true);
    assert.equal(await simulate(gated, user.platformAddress), null);
    assert.equal(await simulate(gated, other), `Address has not satisfied claim ${target}.`);

    // on-demand target: the time window decides, now
    const start = clock.now();
    const onDemand = await claimWithPlugins(t, owner.accessToken, [
      plugin('transferTimes', { transferTimes: [{ start: String(start), end: String(start + 1000) }] }),
    ]);
    const viaOnDemand = await claimWithPlugins(t, owner.accessToken, [
      numUses(10),
      plugin('satisfies-claim', { claimIdToCheck: onDemand }),
    ]);
    assert.equal(await simulate(viaOnDemand, other), null);
    clock.advance(2000);
    assert.equal(await simulate(viaOnDemand, other), `Address has not satisfied claim ${onDemand}.`);
  });

  test('satisfies-claim: cycles and chains longer than 5 are refused at create and update, naming the chain', async () => {
    const missing = await t.request('POST', '/api/v0/claims', {
      token: owner.accessToken,
      body: {
        claims: [
          { claimId: 'sc-missing', plugins: [numUses(1), plugin('satisfies-claim', { claimIdToCheck: 'nope' })] },
        ],
      },
    });
    assert.equal(missing.statusCode, 400);
    assert.match(missing.json().errorMessage, /names claim "nope", which does not exist/);
    const self = await t.request('POST', '/api/v0/claims', {
      token: owner.accessToken,
      body: {
        claims: [
          { claimId: 'sc-self', plugins: [numUses(1), plugin('satisfies-claim', { claimIdToCheck: 'sc-self' })] },
        ],
      },
    });
    assert.match(self.json().errorMessage, /forms a cycle: sc-self → sc-self/);

    // c1 ← c2 ← … ← c5 is allowed (5 claims); c6 → c5 makes 6
    await createClaim(t, owner.accessToken, { claimId: 'c1', plugins: [numUses(1)] });
    for (let i = 2; i <= 5; i++)
      await createClaim(t, owner.accessToken, {
        claimId: `c${i}`,
        plugins: [numUses(1), plugin('satisfies-claim', { claimIdToCheck: `c${i - 1}` })],
      });
    const six = await t.request('POST', '/api/v0/claims', {
      token: owner.accessToken,
      body: { claims: [{ claimId: 'c6', plugins: [numUses(1), plugin('satisfies-claim', { claimIdToCheck: 'c5' })] }] },
    });
    assert.equal(six.statusCode, 400);
    assert.match(six.json().errorMessage, /chain longer than 5: c6 → c5 → c4 → c3 → c2 → c1/);

    // an update closing a loop: c1 → c3 while c3 → c2 → c1
    const loop = await t.request('PUT', '/api/v0/claims', {
      token: owner.accessToken,
      body: { claims: [{ claimId: 'c1', plugins: [numUses(1), plugin('satisfies-claim', { claimIdToCheck: 'c3' })] }] },
    });
    assert.equal(loop.statusCode, 400);
    assert.match(loop.json().errorMessage, /forms a cycle: c1 → c3 → c2 → c1/);

    // joining two short chains counts the claims that check the changed one: d2 → d1 is short, but
    // c1 → d2 would make c5 → c4 → c3 → c2 → c1 → d2 → d1, seven claims
    await createClaim(t, owner.accessToken, { claimId: 'd1', plugins: [numUses(1)] });
    await createClaim(t, owner.accessToken, {
      claimId: 'd2',
      plugins: [numUses(1), plugin('satisfies-claim', { claimIdToCheck: 'd1' })],
    });
    const join = await t.request('PUT', '/api/v0/claims', {
      token: owner.accessToken,
      body: { claims: [{ claimId: 'c1', plugins: [numUses(1), plugin('satisfies-claim', { claimIdToCheck: 'd2' })] }] },
    });
    assert.equal(join.statusCode, 400);
    assert.match(join.json().errorMessage, /chain longer than 5: c5 → c4 → c3 → c2 → c1 → d2 → d1$/);
    // within the bound it is allowed: c3 → d1 makes c5 → c4 → c3 → d1, and c2 → c1 stay as they were
    const within = await t.request('PUT', '/api/v0/claims', {
      token: owner.accessToken,
      body: { claims: [{ claimId: 'c3', plugins: [numUses(1), plugin('satisfies-claim', { claimIdToCheck: 'd1' })] }] },
    });
    assert.equal(within.statusCode, 200, within.body);
    // a deleted claim no longer lengthens a chain: with c5 gone, c4 → c3 → d1 → d0 → c1 fits (below)
    assert.equal(
      (await t.request('DELETE', '/api/v0/claims', { token: owner.accessToken, body: { claimIds: ['c5'] } }))
        .statusCode,
      200,
    );
    await createClaim(t, owner.accessToken, { claimId: 'd0', plugins: [numUses(1)] });
    const longer = await t.request('PUT', '/api/v0/claims', {
      token: owner.accessToken,
      body: { claims: [{ claimId: 'd1', plugins: [numUses(1), plugin('satisfies-claim', { claimIdToCheck: 'd0' })] }] },
    });
    assert.equal(longer.statusCode, 200, longer.body);
    // d0 → c1 gives c4 → c3 → d1 → d0 → c1, five claims; d0 → c2 would give six, named through the longest way in
    const five = await t.request('PUT', '/api/v0/claims', {
      token: owner.accessToken,
      body: { claims: [{ claimId: 'd0', plugins: [numUses(1), plugin('satisfies-claim', { claimIdToCheck: 'c1' })] }] },
    });
    assert.equal(five.statusCode, 200, five.body);
    const six2 = await t.request('PUT', '/api/v0/claims', {
      token: owner.accessToken,
      body: { claims: [{ claimId: 'd0', plugins: [numUses(1), plugin('satisfies-claim', { claimIdToCheck: 'c2' })] }] },
    });
    assert.equal(six2.statusCode, 400);
    assert.match(six2.json().errorMessage, /chain longer than 5: c4 → c3 → d1 → d0 → c2 → c1$/);
  });

  test('username-set: passes once the address has a username', async () => {
    const user = await signIn(t);
    const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(10), plugin('username-set')]);
    assert.equal(await simulate(claimId, user.platformAddress), 'No username is set for this address.');
    const set = await t.request('POST', '/api/v0/user/updateAccount', {
      token: user.accessToken,
      body: { username: `u${Date.now().toString(36).slice(-8)}` },
    });
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(await simulate(claimId, user.platformAddress), null);
  });

  test('url-clicker and custom-instructions always pass, need interaction (not on-demand) and take no input', async () => {
    const claimId = await claimWithPlugins(t, owner.accessToken, [
      numUses(10),
      plugin('url-clicker', { url: 'https://example.com/docs' }, 'link'),
      plugin('custom-instructions', { instructions: 'Follow us, then claim.' }, 'howto'),
    ]);
    assert.equal(await simulate(claimId, randomAddress()), null);
    const withInput = await attempt(t, 'simulate', claimId, randomAddress(), { link: { clicked: true } });
    assert.equal(withInput.json().errorMessage, 'url-clicker takes no input');
    const onDemand = await t.request('POST', '/api/v0/claims', {
      token: owner.accessToken,
      body: { claims: [{ claimId: 'uc-od', plugins: [plugin('url-clicker', { url: 'https://example.com' })] }] },
    });
    assert.equal(onDemand.statusCode, 400, 'user interaction needs numUses');
    const badUrl = await t.request('POST', '/api/v0/claims', {
      token: owner.accessToken,
      body: {
        claims: [{ claimId: 'uc-bad', plugins: [numUses(1), plugin('url-clicker', { url: 'javascript:alert(1)' })] }],
      },
    });
    assert.match(badUrl.json().errorMessage, /url must be an http\(s\) URL/);
  });
});

describe('POST /api/v0/integrations/query/{pluginId}', () => {
  let chain: FakeChain;
  before(async () => {
    chain = await startFakeChain();
  });
  const t = useApp({ env: () => ({ CHAIN_REST_URL: chain.url, CHAIN_TIMEOUT_MS: '1000' }) });
  after(() => chain.close());
  const query = (id: string, body: Record<string, unknown>) =>
    t.request('POST', `/api/v0/integrations/query/${id}`, { body });

  test('answers like a plugin endpoint: 200 {} to pass, 400 with { message } to fail; localised ids work', async () => {
    const who = randomAddress();
    chain.nativeBalances.set(who, (3n * WHOLE).toString());
    const pass = await query('min-badge', {
      minBalance: 3,
      platformAddress: who,
      claimId: 'x',
      _isSimulation: true,
      locale: 'en',
    });
    assert.equal(pass.statusCode, 200, pass.body);
    assert.deepEqual(pass.json(), {});
    const fail = await query('min-badge-es', { minBalance: 4, platformAddress: who });
    assert.equal(fail.statusCode, 400);
    assert.deepEqual(fail.json(), { errorMessage: 'Insufficient balance', message: 'Insufficient balance' });
  });

  test('bad params are 400s naming the field; unknown ids are 404s listing the hosted plugins; the API key is required', async () => {
    const bad = await query('must-own-badges', {
      ownershipRequirements: { assets: [] },
      platformAddress: randomAddress(),
    });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().errorMessage, /body\.ownershipRequirements\.assets must be a non-empty array/);
    const addr = await query('username-set', { platformAddress: 'not-an-address' });
    assert.match(addr.json().errorMessage, /platformAddress is not a valid address/);
    const unknown = await query('numUses', {});
    assert.equal(unknown.statusCode, 404);
    assert.match(unknown.json().errorMessage, /hosted plugins: must-own-badges, min-badge/);
    const anon = await t.request('POST', '/api/v0/integrations/query/min-badge', { apiKey: null, body: {} });
    assert.equal(anon.statusCode, 401);
  });
});
