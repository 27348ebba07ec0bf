// POST /api/v0/eligibility: the five states, compared with simulate claim by claim for every plugin
// type; the privacy rule (a private list or store cannot be probed); paging and filters; and the
// index kept current as claims, their state and stores change.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from '../helpers/app.ts';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import { addressOf, bal, balanceStore, collectionDoc, startFakeChain, type FakeChain } from '../helpers/fake-chain.ts';
import {
  attempt,
  completeAndWait,
  createClaim,
  manager,
  newClaimId,
  numUses,
  randomAddress,
} from '../claims/helpers.ts';
import { createStore, type User } from '../stores/helpers.ts';
import { importSnapshot, parseSnapshot } from '../../src/chain/import.ts';
import type { ManualClock } from '../../src/shared/clock.ts';

const NOW = 1_800_000_000_000;
const range = (s: number, e = s) => ({ start: String(s), end: String(e) });
const own = (collectionId: string, instanceId = 'own') => ({
  pluginId: 'must-own-badges',
  instanceId,
  publicParams: {
    ownershipRequirements: {
      assets: [
        {
          chain: 'BitBadges',
          collectionId,
          assetIds: [range(1)],
          ownershipTimes: [],
          mustOwnAmounts: range(1, 100),
        },
      ],
    },
  },
  privateParams: {},
});
const hosted = (pluginId: string, publicParams: Record<string, unknown> = {}, instanceId = 'h') => ({
  pluginId,
  instanceId,
  publicParams,
  privateParams: {},
});

interface Case {
  name: string;
  plugins: unknown[];
  extra?: Record<string, unknown>;
  /** The inputs that make an "afterInput" answer pass. */
  inputs?: Record<string, unknown>;
}

describe('eligibility', () => {
  let t: TestApp;
  let chain: FakeChain;
  let owner: SignedIn;
  let holder: SignedIn; // holds tokens in collection 7, is in the store and on the lists
  let stranger: SignedIn; // another signed-in user, on nothing
  const nobody = randomAddress();
  const ids = new Map<string, string>();
  const inputs = new Map<string, Record<string, unknown>>();

  const eligibility = (body: Record<string, unknown>, token?: string) =>
    t.request('POST', '/api/v0/eligibility', { body, ...(token ? { token } : {}) });
  const answer = async (body: Record<string, unknown>, token?: string) => {
    const res = await eligibility(body, token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { docs: Array<Record<string, any>>; bookmark: string; hasMore: boolean };
  };

  before(async () => {
    chain = await startFakeChain();
    chain.setCollection('9', collectionDoc('9', addressOf(50)));
    chain.advanceTo(3);
    t = await startApp({
      manualClock: true,
      env: { CHAIN_REST_URL: chain.url, CHAIN_TIMEOUT_MS: '1000' },
    });
    (t.clock as ManualClock).set(NOW);
    owner = await manager(t);
    holder = await signIn(t, { scopes: ['completeClaims'] });
    stranger = await signIn(t, { scopes: ['completeClaims'] });
    chain.nativeBalances.set(holder.platformAddress, (6n * 1_000_000_000n).toString());
    await importSnapshot(
      t.ctx.db,
      parseSnapshot({
        height: '1',
        blockTime: '2026-07-13T12:00:00Z',
        collections: [collectionDoc('7', addressOf(50))],
        balances: [{ collectionId: '7', address: holder.platformAddress, balance: balanceStore([bal(5, 1, 1)]) }],
      }),
      NOW,
    );
    const storeOwner: User = { token: owner.accessToken } as unknown as User;
    const store = await createStore(t, storeOwner);
    const added = await t.request('POST', '/api/v0/storeActions/single', {
      token: owner.accessToken,
      body: { dynamicDataId: store.dynamicDataId, actionName: 'add', payload: { address: holder.platformAddress } },
    });
    assert.equal(added.statusCode, 200, added.body);

    const cases: Case[] = [
      { name: 'open', plugins: [numUses(10)] },
      { name: 'used up', plugins: [numUses(0)] },
      {
        name: 'password',
        plugins: [
          numUses(10),
          { pluginId: 'password', instanceId: 'pw', publicParams: {}, privateParams: { password: 'open sesame' } },
        ],
        inputs: { pw: { password: 'open sesame' } },
      },
      {
        name: 'codes',
        plugins: [
          numUses(10),
          {
            pluginId: 'codes',
            instanceId: 'c1',
            publicParams: { numCodes: 2 },
            privateParams: { codes: ['x0', 'x1'] },
          },
        ],
        inputs: { c1: { code: 'x0' } },
      },
      {
        name: 'public list',
        plugins: [
          numUses(10),
          {
            pluginId: 'whitelist',
            instanceId: 'wl',
            publicParams: { list: { addresses: [holder.platformAddress] } },
            privateParams: {},
          },
        ],
      },
      {
        name: 'denylist',
        plugins: [
          numUses(10),
          {
            pluginId: 'whitelist',
            instanceId: 'wl',
            publicParams: { list: { addresses: [holder.platformAddress], whitelist: false } },
            privateParams: {},
          },
        ],
      },
      {
        name: 'private list',
        plugins: [
          numUses(10),
          {
            pluginId: 'whitelist',
            instanceId: 'wl',
            publicParams: { hasPrivateList: true },
            privateParams: { list: { addresses: [holder.platformAddress] } },
          },
        ],
      },
      {
        name: 'store',
        plugins: [
          numUses(10),
          {
            pluginId: 'whitelist',
            instanceId: 'wl',
            publicParams: {},
            privateParams: { useDynamicStore: true, dynamicDataId: store.dynamicDataId, dataSecret: store.dataSecret },
          },
        ],
      },
      { name: 'halted', plugins: [numUses(10), { pluginId: 'halt', instanceId: 'h' }] },
      { name: 'anonymous', plugins: [numUses(10), { pluginId: 'anonymous', instanceId: 'an' }] },
      {
        name: 'time window passed',
        plugins: [
          numUses(10),
          { pluginId: 'transferTimes', instanceId: 'tt', publicParams: { transferTimes: [{ start: '1', end: '2' }] } },
        ],
      },
      {
        name: 'time window open',
        plugins: [
          numUses(10),
          {
            pluginId: 'transferTimes',
            instanceId: 'tt',
            publicParams: { transferTimes: [{ start: '1', end: String(NOW + 1000) }] },
          },
        ],
      },
      { name: 'initiatedBy', plugins: [numUses(10), { pluginId: 'initiatedBy', instanceId: 'ib' }] },
      { name: 'owns collection 7', plugins: [numUses(10), own('7')] },
      { name: 'owns collection 9 (chain only)', plugins: [numUses(10), own('9')] },
      { name: 'min-badge', plugins: [numUses(10), hosted('min-badge', { minBalance: 5 })] },
      { name: 'username-set', plugins: [numUses(10), hosted('username-set')] },
      {
        name: 'display only',
        plugins: [
          numUses(10),
          hosted('url-clicker', { url: 'https://example.com/docs' }, 'link'),
          hosted('custom-instructions', { instructions: 'Read it.' }, 'howto'),
        ],
      },
      {
        name: 'github-contributions',
        plugins: [numUses(10), hosted('github-contributions', { repository: 'octo/repo' })],
      },
      {
        name: 'discord',
        plugins: [
          numUses(10),
          { pluginId: 'discord', instanceId: 'd', publicParams: { users: ['someone'] }, privateParams: {} },
        ],
      },
      {
        name: 'OR of password and list',
        plugins: [
          numUses(10),
          { pluginId: 'password', instanceId: 'pw', publicParams: {}, privateParams: { password: 'pw' } },
          {
            pluginId: 'whitelist',
            instanceId: 'wl',
            publicParams: { list: { addresses: [holder.platformAddress] } },
            privateParams: {},
          },
        ],
        extra: { satisfyMethod: { type: 'OR', conditions: ['pw', 'wl'] } },
        inputs: { pw: { password: 'pw' } },
      },
      { name: 'on demand', plugins: [own('7')] },
    ];
    for (const c of cases) {
      const claimId = newClaimId();
      await createClaim(t, owner.accessToken, {
        claimId,
        plugins: c.plugins,
        showInSearchResults: true,
        categories: c.name === 'open' ? ['featured'] : [],
        metadata: { name: c.name, description: '', image: '' },
        ...c.extra,
      });
      ids.set(c.name, claimId);
      if (c.inputs) inputs.set(claimId, c.inputs);
    }
    // satisfies-claim needs its target first
    const sc = newClaimId();
    await createClaim(t, owner.accessToken, {
      claimId: sc,
      plugins: [numUses(10), hosted('satisfies-claim', { claimIdToCheck: ids.get('open') })],
      showInSearchResults: true,
      metadata: { name: 'satisfies-claim', description: '', image: '' },
    });
    ids.set('satisfies-claim', sc);
  });
  after(async () => {
    await t?.close();
    await chain?.close();
  });

  /** Each answer, checked against simulate (and the success route) with the same session. */
  async function compareWithSimulate(address: string, token: string | undefined, includeOutbound = false) {
    const { docs } = await answer({ address, claimIds: [...ids.values()], includeOutbound }, token);
    assert.equal(docs.length, ids.size);
    const seen: Record<string, string> = {};
    for (const doc of docs) {
      seen[doc.name] = doc.state;
      const sim = await attempt(t, 'simulate', doc.claimId, address, {}, token);
      const label = `${doc.name} for ${address}: ${JSON.stringify(doc)} vs ${sim.body}`;
      switch (doc.state) {
        case 'eligible':
          assert.equal(sim.statusCode, 200, label);
          break;
        case 'notEligible':
          assert.notEqual(sim.statusCode, 200, label);
          assert.equal(sim.json().errorMessage, doc.error, label);
          break;
        case 'afterInput': {
          assert.notEqual(sim.statusCode, 200, label);
          const withInput = await attempt(t, 'simulate', doc.claimId, address, inputs.get(doc.claimId), token);
          assert.equal(withInput.statusCode, 200, `${label} with input: ${withInput.body}`);
          assert.deepEqual(
            doc.inputs.map((i: { instanceId: string }) => i.instanceId).sort(),
            Object.keys(inputs.get(doc.claimId)!).sort(),
          );
          break;
        }
        case 'claimed': {
          const s = await t.request('GET', `/api/v0/claims/success/${doc.claimId}/${address}`);
          assert.equal(s.json().successCount, doc.successCount, label);
          assert.deepEqual(s.json().claimNumbers, doc.claimNumbers, label);
          break;
        }
        case 'unknown':
          // a private list is compared only where the caller may see it (the privacy test)
          assert.ok(['outboundCall', 'customPlugin', 'privateList'].includes(doc.reason), label);
          break;
        default:
          assert.fail(label);
      }
    }
    return seen;
  }

  test('every plugin type answers as simulate does, claim by claim (the holder, by its own session)', async () => {
    const seen = await compareWithSimulate(holder.platformAddress, holder.accessToken);
    assert.equal(seen.open, 'eligible');
    assert.equal(seen['used up'], 'notEligible');
    assert.equal(seen.password, 'afterInput');
    assert.equal(seen.codes, 'afterInput');
    assert.equal(seen['public list'], 'eligible');
    assert.equal(seen.denylist, 'notEligible');
    assert.equal(seen['private list'], 'eligible');
    assert.equal(seen.store, 'eligible');
    assert.equal(seen.halted, 'notEligible');
    assert.equal(seen['time window passed'], 'notEligible');
    assert.equal(seen['time window open'], 'eligible');
    assert.equal(seen.initiatedBy, 'eligible');
    assert.equal(seen['owns collection 7'], 'eligible');
    assert.equal(seen['owns collection 9 (chain only)'], 'unknown');
    assert.equal(seen['min-badge'], 'unknown');
    assert.equal(seen['github-contributions'], 'unknown');
    assert.equal(seen['OR of password and list'], 'eligible');
    assert.equal(seen['on demand'], 'eligible');
  });

  test('an address on nothing: the kept address-independent answers match simulate too', async () => {
    const seen = await compareWithSimulate(nobody, undefined);
    assert.equal(seen['public list'], 'notEligible');
    assert.equal(seen['owns collection 7'], 'notEligible');
    assert.equal(seen['OR of password and list'], 'afterInput');
    assert.equal(seen.initiatedBy, 'notEligible');
  });

  test('outbound checks on request: min-badge, the chain-only collection and GitHub as simulate gives them', async () => {
    const seen = await compareWithSimulate(holder.platformAddress, holder.accessToken, true);
    // five per request at most: the first five outbound claims in id order are evaluated
    const evaluated = ['owns collection 9 (chain only)', 'min-badge', 'github-contributions'].filter(
      (n) => seen[n] !== 'unknown',
    );
    assert.equal(evaluated.length, 3);
    assert.equal(seen['min-badge'], 'eligible');
  });

  test('claimed: successCount and claim numbers, as the success route gives them', async () => {
    const claimId = ids.get('open')!;
    await completeAndWait(t, claimId, holder.platformAddress);
    const { docs } = await answer({ address: holder.platformAddress, claimIds: [claimId] });
    assert.deepEqual(docs, [{ claimId, name: 'open', state: 'claimed', successCount: 1, claimNumbers: [0] }]);
    // and satisfies-claim, which reads it, now passes for the holder
    const sc = await answer({ address: holder.platformAddress, claimIds: [ids.get('satisfies-claim')!] });
    assert.equal(sc.docs[0].state, 'eligible');
    await compareWithSimulate(holder.platformAddress, holder.accessToken);
  });

  test('privacy: a private list or store is answered only to the address or the creator; others cannot probe it', async () => {
    const privateIds = [ids.get('private list')!, ids.get('store')!];
    const hidden = (name: string, claimId: string) => ({
      claimId,
      name,
      state: 'unknown',
      reason: 'privateList',
      message: 'Checked at claim time',
    });
    const expected = [hidden('private list', ids.get('private list')!), hidden('store', ids.get('store')!)].sort(
      (a, b) => (a.claimId < b.claimId ? -1 : 1),
    );
    // a member and a non-member look the same to an API key alone and to another user's session
    for (const token of [undefined, stranger.accessToken]) {
      for (const address of [holder.platformAddress, nobody]) {
        const { docs } = await answer({ address, claimIds: privateIds }, token);
        assert.deepEqual(docs, expected, `${address} with ${token ? 'a stranger' : 'no session'}`);
      }
    }
    // the address's own session and the creator see the truth
    for (const token of [holder.accessToken, owner.accessToken]) {
      const { docs } = await answer({ address: holder.platformAddress, claimIds: privateIds }, token);
      assert.deepEqual(
        docs.map((d) => d.state),
        ['eligible', 'eligible'],
      );
    }
    const { docs } = await answer({ address: stranger.platformAddress, claimIds: privateIds }, stranger.accessToken);
    assert.deepEqual(
      docs.map((d) => d.error),
      ['User not in whitelist', 'User not in whitelist'],
    );
  });

  test('no filter covers every searchable claim, paginated; filters by collection and category', async () => {
    const hiddenId = newClaimId();
    await createClaim(t, owner.accessToken, { claimId: hiddenId, plugins: [numUses(1)], showInSearchResults: false });
    const all: string[] = [];
    let bookmark = '';
    for (let i = 0; i < 10; i++) {
      const page = await answer({ address: nobody, bookmark });
      all.push(...page.docs.map((d) => d.claimId));
      if (!page.hasMore) break;
      bookmark = page.bookmark;
    }
    assert.deepEqual(all, [...ids.values()].sort());
    const featured = await answer({ address: nobody, category: 'featured' });
    assert.deepEqual(
      featured.docs.map((d) => d.name),
      ['open'],
    );
    const none = await answer({ address: nobody, collectionId: '7' });
    assert.deepEqual(none.docs, []);
    const states = await answer({ address: nobody, states: ['afterInput'] });
    assert.deepEqual(states.docs.map((d) => d.name).sort(), ['OR of password and list', 'codes', 'password']);
  });

  test('kept current: a claim update, a store edit and a new claim show in the next answer', async () => {
    const storeClaim = ids.get('store')!;
    const before = await answer({ address: stranger.platformAddress, claimIds: [storeClaim] }, owner.accessToken);
    assert.equal(before.docs[0].state, 'notEligible');
    const store = (
      await t.ctx.db.selectFrom('dynamic_store_members').select('dynamic_data_id').executeTakeFirstOrThrow()
    ).dynamic_data_id;
    const added = await t.request('POST', '/api/v0/storeActions/single', {
      token: owner.accessToken,
      body: { dynamicDataId: store, actionName: 'add', payload: { address: stranger.platformAddress } },
    });
    assert.equal(added.statusCode, 200, added.body);
    const after = await answer({ address: stranger.platformAddress, claimIds: [storeClaim] }, owner.accessToken);
    assert.equal(after.docs[0].state, 'eligible');
    // the kept verdict of a member goes when it leaves the store
    const removed = await t.request('POST', '/api/v0/storeActions/single', {
      token: owner.accessToken,
      body: { dynamicDataId: store, actionName: 'remove', payload: { address: stranger.platformAddress } },
    });
    assert.equal(removed.statusCode, 200, removed.body);
    const left = await answer(
      { address: stranger.platformAddress, states: ['eligible', 'notEligible'], pageSize: 100 },
      owner.accessToken,
    );
    assert.equal(left.docs.find((d) => d.claimId === storeClaim)?.error, 'User not in whitelist');

    // a new searchable claim that names the stranger, then halting it
    const claimId = newClaimId();
    const plugins = [
      numUses(10),
      {
        pluginId: 'whitelist',
        instanceId: 'wl',
        publicParams: { list: { addresses: [stranger.platformAddress] } },
        privateParams: {},
      },
    ];
    await createClaim(t, owner.accessToken, { claimId, plugins, showInSearchResults: true });
    const listed = await answer({ address: stranger.platformAddress, states: ['eligible'] });
    assert.ok(listed.docs.some((d) => d.claimId === claimId));
    const upd = await t.request('PUT', '/api/v0/claims', {
      token: owner.accessToken,
      body: {
        claims: [{ claimId, plugins: [...plugins, { pluginId: 'halt', instanceId: 'h' }], showInSearchResults: true }],
      },
    });
    assert.equal(upd.statusCode, 200, upd.body);
    const halted = await answer({ address: stranger.platformAddress, claimIds: [claimId] });
    assert.equal(halted.docs[0].error, 'Claim halted');
    // used up by others: the numUses count is the claim's state
    const usedUp = newClaimId();
    await createClaim(t, owner.accessToken, { claimId: usedUp, plugins: [numUses(1)], showInSearchResults: true });
    assert.equal((await answer({ address: nobody, claimIds: [usedUp] })).docs[0].state, 'eligible');
    await completeAndWait(t, usedUp, randomAddress());
    assert.deepEqual(
      (await answer({ address: nobody, claimIds: [usedUp] })).docs[0].error,
      'Overall max uses exceeded',
    );
  });

  test('a username set, changed or cleared shows in the next answer (username-set), as simulate gives it', async () => {
    const claimId = ids.get('username-set')!;
    const who = await signIn(t, { scopes: ['manageAccount'] });
    const state = async () => {
      const { docs } = await answer({ address: who.platformAddress, claimIds: [claimId] });
      const sim = await attempt(t, 'simulate', claimId, who.platformAddress);
      assert.equal(docs[0].state === 'eligible', sim.statusCode === 200, `${docs[0].state} vs ${sim.body}`);
      if (sim.statusCode !== 200) assert.equal(docs[0].error, sim.json().errorMessage);
      return docs[0].state === 'eligible' ? 'eligible' : docs[0].error;
    };
    const setName = async (username: string) => {
      const res = await t.request('POST', '/api/v0/user/updateAccount', {
        token: who.accessToken,
        body: { username },
      });
      assert.equal(res.statusCode, 200, res.body);
    };
    // twice each: the second answer may come from a kept verdict
    assert.equal(await state(), 'No username is set for this address.');
    assert.equal(await state(), 'No username is set for this address.');
    await setName(`e1_${who.platformAddress.slice(-8)}`);
    assert.equal(await state(), 'eligible');
    assert.equal(await state(), 'eligible');
    await setName(`e2_${who.platformAddress.slice(-8)}`);
    assert.equal(await state(), 'eligible');
    await setName('');
    assert.equal(await state(), 'No username is set for this address.');
    // and over the whole list, not only a named claim
    const { docs } = await answer({ address: who.platformAddress, states: ['notEligible'], pageSize: 100 });
    assert.equal(docs.find((d) => d.claimId === claimId)?.error, 'No username is set for this address.');
    await setName(`e3_${who.platformAddress.slice(-8)}`);
    const listed = await answer({ address: who.platformAddress, states: ['eligible'], pageSize: 100 });
    assert.ok(listed.docs.some((d) => d.claimId === claimId));
  });

  test('a time window closing shows in the next answer (the kept answer holds only between its boundaries)', async () => {
    const claimId = ids.get('time window open')!;
    const clock = t.clock as ManualClock;
    assert.equal((await answer({ address: nobody, claimIds: [claimId] })).docs[0].state, 'eligible');
    clock.set(NOW + 1000);
    assert.equal((await answer({ address: nobody, claimIds: [claimId] })).docs[0].state, 'eligible');
    clock.set(NOW + 1001);
    assert.equal(
      (await answer({ address: nobody, claimIds: [claimId] })).docs[0].error,
      'We are currently outside the approved time window.',
    );
    clock.set(NOW);
    assert.equal((await answer({ address: nobody, claimIds: [claimId] })).docs[0].state, 'eligible');
  });

  test('over the whole list too: a time window closing and reopening, uses running out for a listed address', async () => {
    const windowed = ids.get('time window open')!;
    const clock = t.clock as ManualClock;
    const stateIn = async (address: string, claimId: string) => {
      const { docs, hasMore } = await answer({ address, pageSize: 1000 });
      assert.equal(hasMore, false);
      const doc = docs.find((d) => d.claimId === claimId);
      assert.ok(doc, `${claimId} listed`);
      return doc.state === 'notEligible' ? doc.error : doc.state;
    };
    assert.equal(await stateIn(nobody, windowed), 'eligible');
    assert.equal(await stateIn(nobody, windowed), 'eligible'); // the kept answer
    clock.set(NOW + 1001);
    assert.equal(await stateIn(nobody, windowed), 'We are currently outside the approved time window.');
    clock.set(NOW);
    assert.equal(await stateIn(nobody, windowed), 'eligible');

    // an address on the claim's list is evaluated for itself; the claim's use count is its state
    const listed = randomAddress();
    const other = randomAddress();
    const claimId = newClaimId();
    await createClaim(t, owner.accessToken, {
      claimId,
      plugins: [
        numUses(1),
        {
          pluginId: 'whitelist',
          instanceId: 'wl',
          publicParams: { list: { addresses: [listed, other] } },
          privateParams: {},
        },
      ],
      showInSearchResults: true,
    });
    assert.equal(await stateIn(listed, claimId), 'eligible');
    assert.equal(await stateIn(nobody, claimId), 'User not in whitelist');
    await completeAndWait(t, claimId, other);
    assert.equal(await stateIn(listed, claimId), 'Overall max uses exceeded');
    assert.equal(await stateIn(nobody, claimId), 'Overall max uses exceeded'); // the count is checked first
  });

  test('bad input: a clear 400 naming what is wrong', async () => {
    const bad = await eligibility({ address: 'nope' });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().errorMessage, /address/);
    const forged = await eligibility({ address: nobody, bookmark: 'abc.def' });
    assert.equal(forged.statusCode, 400);
    assert.deepEqual(forged.json(), {
      errorMessage: 'Invalid bookmark: it was not issued by this list. Send an empty bookmark for the first page.',
    });
    const other = await answer({ address: nobody, claimIds: [] });
    assert.deepEqual(other, { docs: [], bookmark: '', hasMore: false });
  });
});
