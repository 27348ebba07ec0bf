// On-chain claims (contracts.md): the claim-level seed, claimCode, the onchain.ts loaders, the
// status route's `code` for permitted readers only, and useCreatorAddressAsLeaf.
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { collectionDoc, startFakeChain, type FakeChain } from '../helpers/fake-chain.ts';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import {
  claimCode,
  findOnChainClaimByTracker,
  loadOnChainClaim,
  successfulClaimNumbers,
} from '../../src/claims/onchain.ts';
import {
  attempt,
  completeAndWait,
  createClaim,
  getClaim,
  manager,
  newClaimId,
  numUses,
  randomAddress,
  resolved,
  status,
} from './helpers.ts';

describe('on-chain claims', () => {
  let m: SignedIn;
  let chain: FakeChain;
  before(async () => {
    // linking a claim to an approval needs the chain to name the caller as its manager
    chain = await startFakeChain();
  });
  const t = useApp({ env: () => ({ CHAIN_REST_URL: chain.url }) });
  before(async () => {
    m = await manager(t);
    for (const id of ['17', '18', '19']) chain.setCollection(id, collectionDoc(id, m.platformAddress), chain.height);
  });
  after(() => chain.close());

  const tracker = (collectionId: string, challengeTrackerId: string) => ({
    collectionId,
    approvalId: 'approval1',
    challengeTrackerId,
    approvalLevel: 'collection' as const,
    approverAddress: '',
  });

  test('claimCode follows docs/onchain-claims.md', () => {
    const seed = 'ab'.repeat(32);
    const expected = createHash('sha256').update(`${seed}-7`).digest('hex') + '-7';
    assert.equal(claimCode(seed, 7), expected);
  });

  test('create generates an encrypted seed; loaders, status code and private read agree', async () => {
    const claimId = newClaimId('oc');
    const t1 = tracker('17', 'tracker-a');
    await createClaim(t, m.accessToken, { claimId, collectionId: '17', trackerDetails: t1, plugins: [numUses(10)] });

    const row = await t.ctx.db
      .selectFrom('claims')
      .select(['seed_code'])
      .where('claim_id', '=', claimId)
      .executeTakeFirstOrThrow();
    assert.ok(row.seed_code?.startsWith('v1.'), 'seed stored encrypted');

    const oc = await loadOnChainClaim(t.ctx, claimId);
    assert.ok(oc);
    assert.match(oc.seedCode, /^[0-9a-f]{64}$/);
    assert.ok(!row.seed_code!.includes(oc.seedCode));
    assert.equal(oc.maxUses, 10);
    assert.equal(oc.collectionId, '17');
    assert.deepEqual(oc.trackerDetails, t1);
    assert.equal(oc.useCreatorAddressAsLeaf, false);
    assert.deepEqual(oc.whitelistAddresses, []);
    assert.equal((await findOnChainClaimByTracker(t.ctx, t1))?.claimId, claimId);
    assert.equal(await findOnChainClaimByTracker(t.ctx, { ...t1, approvalId: 'other' }), null);

    // the seed is returned only with private params, to the creator with readPrivateClaimData
    assert.equal((await getClaim(t, claimId))._seedCode, undefined);
    assert.equal((await getClaim(t, claimId, 'fetchPrivateParams=true', m.accessToken))._seedCode, oc.seedCode);

    // a claimer signed in with completeClaims sees the code of their claim number
    const claimer = await signIn(t, { scopes: ['completeClaims'] });
    const other = await signIn(t, { scopes: ['completeClaims'] });
    await completeAndWait(t, claimId, randomAddress()); // claim number 0 for someone else
    const a = await completeAndWait(t, claimId, claimer.address);
    assert.equal(a.success, true);
    assert.deepEqual(await successfulClaimNumbers(t.ctx.db, claimId, claimer.platformAddress), [1]);
    assert.equal((await status(t, a.claimAttemptId, claimer.accessToken)).code, claimCode(oc.seedCode, 1));
    assert.equal(
      (await status(t, a.claimAttemptId, m.accessToken)).code,
      claimCode(oc.seedCode, 1),
      'creator with readPrivateClaimData',
    );
    assert.equal((await status(t, a.claimAttemptId)).code, undefined, 'no session: no code');
    assert.equal((await status(t, a.claimAttemptId, other.accessToken)).code, undefined, 'another user: no code');
  });

  test('standalone claims and claims without trackerDetails are not on-chain', async () => {
    const standalone = newClaimId('sa');
    await createClaim(t, m.accessToken, {
      claimId: standalone,
      collectionId: '18',
      trackerDetails: tracker('18', 'x'),
      standaloneClaim: true,
      plugins: [numUses(1)],
    });
    assert.equal(await loadOnChainClaim(t.ctx, standalone), null);
    const plain = newClaimId('pl');
    await createClaim(t, m.accessToken, { claimId: plain, plugins: [numUses(1)] });
    assert.equal(await loadOnChainClaim(t.ctx, plain), null);
    assert.equal(await loadOnChainClaim(t.ctx, 'missing'), null);
    const a = await completeAndWait(t, plain, randomAddress());
    assert.equal(a.success, true);
    assert.equal((await status(t, a.claimAttemptId, m.accessToken)).code, undefined, 'no code for off-chain claims');
  });

  test('useCreatorAddressAsLeaf exposes the whitelist addresses in list order; one claim per tracker', async () => {
    const claimId = newClaimId('leaf');
    const addrs = [randomAddress(), randomAddress(), randomAddress()];
    const t2 = tracker('19', 'tracker-leaf');
    await createClaim(t, m.accessToken, {
      claimId,
      collectionId: '19',
      trackerDetails: t2,
      useCreatorAddressAsLeaf: true,
      assignMethod: 'wl',
      plugins: [
        numUses(3),
        { pluginId: 'whitelist', instanceId: 'wl', publicParams: { list: { addresses: addrs, whitelist: true } } },
      ],
    });
    const oc = await loadOnChainClaim(t.ctx, claimId);
    assert.equal(oc?.useCreatorAddressAsLeaf, true);
    assert.deepEqual(oc?.whitelistAddresses, addrs);
    const r = await attempt(t, 'complete', claimId, addrs[2]);
    assert.equal(r.statusCode, 200, r.body);
    assert.equal((await resolved(t, r.json().claimAttemptId)).success, true);
    assert.deepEqual(await successfulClaimNumbers(t.ctx.db, claimId, addrs[2]), [2]);

    const dup = await t.request('POST', '/api/v0/claims', {
      token: m.accessToken,
      body: { claims: [{ claimId: newClaimId(), trackerDetails: t2, plugins: [numUses(1)] }] },
    });
    assert.equal(dup.statusCode, 409, dup.body);
  });
});
