// combineLinkedWallets on must-own-badges (chain read model) and min-badge (fake chain): two
// wallets that pass only together, summed exactly above 2^53 over overlapping token ranges; the
// default stays per address; a link made after the claim's creation does not count, and an unlink
// after it does not free the wallet's holdings for that claim; the linked wallet's own claim is
// refused; per-address limits apply to the claiming address; the param's validation.
import { describe, test, before, after } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { signIn, testAccount, type SignedIn, type TestAccount } from '../helpers/signin.ts';
import { collectionDoc, balanceStore, bal, startFakeChain, type FakeChain } from '../helpers/fake-chain.ts';
import { attempt, claimWithPlugins, completeAndWait, getClaim, manager, numUses } from '../claims/helpers.ts';
import { importSnapshot, parseSnapshot } from '../../src/chain/import.ts';
import type { ManualClock } from '../../src/shared/clock.ts';
import { linkEvm, unlinkReq } from './helpers.ts';

const NOW = 1_800_000_000_000;
const WHOLE = 1_000_000_000n;
const BIG = 2n ** 60n + 7n; // above 2^53: exact only in bigint
const ELSEWHERE =
  "This address was linked to another account when this claim was created, so its holdings count toward that account's claims, not its own.";

const range = (start: number | string, end: number | string = start) => ({ start: String(start), end: String(end) });
/** Must own between `min` and 2^64 - 1 of each of ids [from, to] of collection 7. */
const ownership = (from: number, to: number, min: bigint) => ({
  assets: [
    {
      chain: 'BitBadges',
      collectionId: '7',
      assetIds: [range(from, to)],
      ownershipTimes: [],
      mustOwnAmounts: range(min.toString(), (2n ** 64n - 1n).toString()),
    },
  ],
});
const mob = (req: unknown, combine?: unknown) => ({
  pluginId: 'must-own-badges',
  instanceId: 'own',
  publicParams: { ownershipRequirements: req, ...(combine === undefined ? {} : { combineLinkedWallets: combine }) },
  privateParams: {},
});
const minBadge = (minBalance: number, combine?: boolean) => ({
  pluginId: 'min-badge',
  instanceId: 'min',
  publicParams: { minBalance, ...(combine === undefined ? {} : { combineLinkedWallets: combine }) },
  privateParams: {},
});

describe('combineLinkedWallets', () => {
  let chain: FakeChain;
  let clock: ManualClock;
  let owner: SignedIn;
  let user: SignedIn;
  let wallet: TestAccount;
  let before5to10: string;
  before(async () => {
    chain = await startFakeChain();
  });
  const t = useApp({ clock: true, env: () => ({ CHAIN_REST_URL: chain.url, CHAIN_TIMEOUT_MS: '1000' }) });
  before(async () => {
    clock = t.clock as ManualClock;
    clock.set(NOW);
    owner = await manager(t);
    user = await signIn(t);
    wallet = testAccount();
    // collection 7: the user holds BIG of ids 1-10, the wallet BIG of ids 5-15; together 2·BIG of 5-10
    await importSnapshot(
      t.ctx.db,
      parseSnapshot({
        height: '1',
        blockTime: '2026-07-13T12:00:00Z',
        collections: [collectionDoc('7', user.platformAddress)],
        balances: [
          { collectionId: '7', address: user.platformAddress, balance: balanceStore([bal(BIG, 1, 10)]) },
          { collectionId: '7', address: wallet.platformAddress, balance: balanceStore([bal(BIG, 5, 15)]) },
        ],
      }),
      NOW,
    );
    chain.nativeBalances.set(user.platformAddress, (3n * WHOLE).toString());
    chain.nativeBalances.set(wallet.platformAddress, (2n * WHOLE).toString());
    // a claim created before the link
    before5to10 = await claimWithPlugins(t, owner.accessToken, [numUses(10), mob(ownership(5, 10, 2n * BIG), true)]);
    clock.advance(1000);
    await linkEvm(t, user.accessToken, wallet);
    clock.advance(1000);
  });
  after(() => chain.close());

  async function simulate(claimId: string, address: string): Promise<string | null> {
    const r = await attempt(t, 'simulate', claimId, address);
    if (r.statusCode === 200) return null;
    assert.equal(r.statusCode, 400, r.body);
    return r.json().errorMessage;
  }
  const notEnough = (ids: string, min: bigint) =>
    `Address does not own enough of IDs ${ids} in collection 7 to meet minimum balance requirement of ${min}`;

  test('must-own-badges: two wallets that pass only together; the default stays per address', async () => {
    const combined = await claimWithPlugins(t, owner.accessToken, [numUses(10), mob(ownership(5, 10, 2n * BIG), true)]);
    const plain = await claimWithPlugins(t, owner.accessToken, [numUses(10), mob(ownership(5, 10, 2n * BIG))]);
    assert.equal(await simulate(combined, user.platformAddress), null, 'BIG + BIG of ids 5-10, summed exactly');
    assert.equal(await simulate(plain, user.platformAddress), notEnough('5-10', 2n * BIG));
    assert.equal(await simulate(plain, wallet.platformAddress), notEnough('5-10', 2n * BIG));
    // the linked wallet's own claim counts nothing: its holdings are the account's
    assert.equal(await simulate(combined, wallet.platformAddress), ELSEWHERE);
    assert.equal(await simulate(combined, wallet.address), ELSEWHERE, 'in either address form');
    // ids 1-4 are the user's alone, 11-15 the wallet's alone: not 2·BIG there
    const wider = await claimWithPlugins(t, owner.accessToken, [numUses(10), mob(ownership(1, 10, 2n * BIG), true)]);
    assert.equal(await simulate(wider, user.platformAddress), notEnough('1-4', 2n * BIG));
    const justOver = await claimWithPlugins(t, owner.accessToken, [
      numUses(10),
      mob(ownership(5, 10, 2n * BIG + 1n), true),
    ]);
    assert.equal(await simulate(justOver, user.platformAddress), notEnough('5-10', 2n * BIG + 1n));
  });

  test('the eligibility answer counts linked wallets as simulate does', async () => {
    const combined = await claimWithPlugins(t, owner.accessToken, [numUses(10), mob(ownership(5, 10, 2n * BIG), true)]);
    const plain = await claimWithPlugins(t, owner.accessToken, [numUses(10), mob(ownership(5, 10, 2n * BIG))]);
    const ask = async (address: string) => {
      const res = await t.request('POST', '/api/v0/eligibility', {
        body: { address, claimIds: [combined, plain, before5to10] },
      });
      assert.equal(res.statusCode, 200, res.body);
      return Object.fromEntries(
        (res.json().docs as Array<{ claimId: string; state: string; error?: string }>).map((d) => [
          d.claimId === combined ? 'combined' : d.claimId === plain ? 'plain' : 'before',
          d.error ? `${d.state}: ${d.error}` : d.state,
        ]),
      );
    };
    assert.deepEqual(await ask(user.platformAddress), {
      combined: 'eligible',
      plain: `notEligible: ${notEnough('5-10', 2n * BIG)}`,
      before: `notEligible: ${notEnough('5-10', 2n * BIG)}`,
    });
    assert.deepEqual(await ask(wallet.platformAddress), {
      combined: `notEligible: ${ELSEWHERE}`,
      plain: `notEligible: ${notEnough('5-10', 2n * BIG)}`,
      before: `notEligible: ${notEnough('5-10', 2n * BIG)}`,
    });
  });

  test('a link made after the claim was created does not count', async () => {
    assert.equal(await simulate(before5to10, user.platformAddress), notEnough('5-10', 2n * BIG));
    // and the wallet, unlinked when that claim was created, counts its own holdings there
    assert.equal(await simulate(before5to10, wallet.platformAddress), notEnough('5-10', 2n * BIG));
  });

  test('min-badge: native balances summed; the default stays per address', async () => {
    const combined = await claimWithPlugins(t, owner.accessToken, [numUses(10), minBadge(5, true)]);
    const plain = await claimWithPlugins(t, owner.accessToken, [numUses(10), minBadge(5)]);
    const six = await claimWithPlugins(t, owner.accessToken, [numUses(10), minBadge(6, true)]);
    assert.equal(await simulate(combined, user.platformAddress), null, '3 + 2 whole');
    assert.equal(await simulate(plain, user.platformAddress), 'Insufficient balance');
    assert.equal(await simulate(six, user.platformAddress), 'Insufficient balance');
    assert.equal(await simulate(combined, wallet.platformAddress), ELSEWHERE);
  });

  test('per-address limits apply to the claiming address', async () => {
    const claimId = await claimWithPlugins(t, owner.accessToken, [
      numUses(10),
      {
        pluginId: 'whitelist',
        instanceId: 'wl',
        publicParams: {
          list: { addresses: [user.platformAddress, wallet.platformAddress] },
          maxUsesPerAddress: 1,
        },
        privateParams: {},
      },
      mob(ownership(5, 10, 2n * BIG), true),
    ]);
    const first = await completeAndWait(t, claimId, user.platformAddress);
    assert.equal(first.success, true, first.error);
    const second = await attempt(t, 'complete', claimId, user.platformAddress);
    assert.equal(second.statusCode, 400);
    assert.equal(second.json().errorMessage, 'User already exceeded max uses');
    const byWallet = await attempt(t, 'complete', claimId, wallet.platformAddress);
    assert.equal(byWallet.statusCode, 400);
    assert.equal(byWallet.json().errorMessage, ELSEWHERE);
  });

  test('unlinking after a claim was created does not free the wallet for that claim', async () => {
    const whileLinked = await claimWithPlugins(t, owner.accessToken, [numUses(10), mob(ownership(5, 10, BIG), true)]);
    clock.advance(1000);
    const gone = await unlinkReq(t, user.accessToken, wallet.address);
    assert.equal(gone.statusCode, 200, gone.body);
    clock.advance(1000);
    // the claim reads the links as they stood at its creation: still the user's, not the wallet's
    assert.equal(await simulate(whileLinked, user.platformAddress), null);
    assert.equal(await simulate(whileLinked, wallet.platformAddress), ELSEWHERE);
    // a claim created after the unlink: each address alone
    const after = await claimWithPlugins(t, owner.accessToken, [numUses(10), mob(ownership(5, 10, BIG), true)]);
    assert.equal(await simulate(after, wallet.platformAddress), null);
    const together = await claimWithPlugins(t, owner.accessToken, [numUses(10), mob(ownership(5, 10, 2n * BIG), true)]);
    assert.equal(await simulate(together, user.platformAddress), notEnough('5-10', 2n * BIG));
    // linked again later: counted again for claims created from then on, not for earlier ones
    clock.advance(1000);
    await linkEvm(t, user.accessToken, wallet);
    clock.advance(1000);
    const relinked = await claimWithPlugins(t, owner.accessToken, [numUses(10), mob(ownership(5, 10, 2n * BIG), true)]);
    assert.equal(await simulate(relinked, user.platformAddress), null);
    assert.equal(await simulate(together, user.platformAddress), notEnough('5-10', 2n * BIG));
  });

  test('the param: a boolean; true is kept, false is the default and dropped', async () => {
    const bad = await t.request('POST', '/api/v0/claims', {
      token: owner.accessToken,
      body: { claims: [{ claimId: 'lw-bad', plugins: [numUses(1), mob(ownership(1, 1, 1n), 'yes')] }] },
    });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), {
      errorMessage: 'claims[0].plugins[1].publicParams.combineLinkedWallets must be a boolean',
    });
    const badMin = await t.request('POST', '/api/v0/claims', {
      token: owner.accessToken,
      body: {
        claims: [
          {
            claimId: 'lw-bad2',
            plugins: [numUses(1), { ...minBadge(1), publicParams: { minBalance: 1, combineLinkedWallets: 1 } }],
          },
        ],
      },
    });
    assert.deepEqual(badMin.json(), {
      errorMessage: 'claims[0].plugins[1].publicParams.combineLinkedWallets must be a boolean',
    });
    const on = await claimWithPlugins(t, owner.accessToken, [numUses(1), minBadge(1, true)]);
    const off = await claimWithPlugins(t, owner.accessToken, [numUses(1), minBadge(1, false)]);
    const pub = async (id: string) =>
      (await getClaim(t, id)).plugins.find((p: { instanceId: string }) => p.instanceId === 'min').publicParams;
    assert.deepEqual(await pub(on), { minBalance: 1, combineLinkedWallets: true });
    assert.deepEqual(await pub(off), { minBalance: 1 });
    // the console's forms read the hosted documents' schemas: the checkbox is there, in both locales
    for (const [pluginId, label] of [
      ['must-own-badges', 'Combine linked wallets'],
      ['min-badge', 'Combine linked wallets'],
      ['min-badge-es', 'Combinar billeteras vinculadas'],
    ]) {
      const doc = (await t.request('GET', `/api/v0/plugin/${pluginId}`)).json().plugin;
      const field = doc.versions[0].publicParamsSchema.find((f: { key: string }) => f.key === 'combineLinkedWallets');
      assert.equal(field?.type, 'boolean', pluginId);
      assert.equal(field?.label, label);
    }
  });
});
