// Ownership of on-chain claims: linking a claim to an approval (trackerDetails) needs the caller to
// manage that approval as the chain says: the collection's manager for collection-level approvals,
// the approver for incoming and outgoing ones. No chain (unset, down, failing): no link.
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.ts';
import { collectionDoc, startFakeChain, type FakeChain } from '../helpers/fake-chain.ts';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import { newClaimId, numUses } from '../claims/helpers.ts';

const tracker = (over: Record<string, unknown> = {}) => ({
  collectionId: '7',
  approvalId: 'claimable',
  challengeTrackerId: newClaimId('ct'),
  approvalLevel: 'collection',
  approverAddress: '',
  ...over,
});

function create(t: TestApp, who: SignedIn, claim: Record<string, unknown>) {
  return t.request('POST', '/api/v0/claims', {
    token: who.accessToken,
    body: { claims: [{ plugins: [numUses(3)], ...claim }] },
  });
}
function update(t: TestApp, who: SignedIn, claim: Record<string, unknown>) {
  return t.request('PUT', '/api/v0/claims', {
    token: who.accessToken,
    body: { claims: [{ _expectedVersion: -1, ...claim }] },
  });
}
const exists = async (t: TestApp, claimId: string) =>
  (await t.request('GET', `/api/v0/claim/${claimId}`)).statusCode === 200;

describe('ownership of on-chain claims', () => {
  let chain: FakeChain;
  let manager: SignedIn;
  let stranger: SignedIn;
  before(async () => {
    chain = await startFakeChain();
  });
  const t = useApp({ env: () => ({ CHAIN_REST_URL: chain.url, CHAIN_TIMEOUT_MS: '1000' }) });
  before(async () => {
    [manager, stranger] = await Promise.all([signIn(t), signIn(t)]);
    chain.setCollection('7', collectionDoc('7', manager.platformAddress), chain.height);
  });
  after(() => chain.close());

  test('collection level: the collection manager links; anyone else gets a 403 and nothing is written', async () => {
    const ok = await create(t, manager, { claimId: newClaimId(), trackerDetails: tracker() });
    assert.equal(ok.statusCode, 200, ok.body);

    const claimId = newClaimId();
    const r = await create(t, stranger, { claimId, trackerDetails: tracker() });
    assert.equal(r.statusCode, 403, r.body);
    assert.equal(
      r.json().errorMessage,
      `claims[0].trackerDetails: only the manager of collection 7 may link a claim to its collection-level approval claimable; the chain says the manager is ${manager.platformAddress}, and you are ${stranger.platformAddress}`,
    );
    assert.equal(await exists(t, claimId), false);
  });

  test('a manager change on the chain moves the right to link', async () => {
    chain.setCollection('8', collectionDoc('8', manager.platformAddress), chain.height);
    assert.equal(
      (await create(t, stranger, { claimId: newClaimId(), trackerDetails: tracker({ collectionId: '8' }) })).statusCode,
      403,
    );
    chain.setCollection('8', collectionDoc('8', stranger.platformAddress));
    chain.addBlock();
    const r = await create(t, stranger, { claimId: newClaimId(), trackerDetails: tracker({ collectionId: '8' }) });
    assert.equal(r.statusCode, 200, r.body);
    const gone = await create(t, manager, { claimId: newClaimId(), trackerDetails: tracker({ collectionId: '8' }) });
    assert.equal(gone.statusCode, 403, 'read fresh, not from a cache');
  });

  for (const level of ['incoming', 'outgoing'] as const) {
    test(`${level} level: only the approver links (either address form), not the collection manager`, async () => {
      const own = await create(t, stranger, {
        claimId: newClaimId(),
        trackerDetails: tracker({ approvalLevel: level, approverAddress: stranger.address }),
      });
      assert.equal(own.statusCode, 200, own.body);
      const claimId = newClaimId();
      const r = await create(t, manager, {
        claimId,
        trackerDetails: tracker({ approvalLevel: level, approverAddress: stranger.platformAddress }),
      });
      assert.equal(r.statusCode, 403, r.body);
      assert.equal(
        r.json().errorMessage,
        `claims[0].trackerDetails: only the approver ${stranger.platformAddress} may link a claim to its ${level} approval claimable in collection 7; you are ${manager.platformAddress}`,
      );
      assert.equal(await exists(t, claimId), false);
    });
  }

  test('a collection the chain does not know is a 400', async () => {
    const r = await create(t, manager, { claimId: newClaimId(), trackerDetails: tracker({ collectionId: '404' }) });
    assert.equal(r.statusCode, 400, r.body);
    assert.match(
      r.json().errorMessage,
      /claims\[0\]\.trackerDetails\.collectionId: collection 404 does not exist on the chain/,
    );
  });

  test('updates: a new link is checked; edits that keep the link are not; a batch fails as a whole', async () => {
    const claimId = newClaimId();
    assert.equal((await create(t, manager, { claimId })).statusCode, 200, 'off-chain claim');
    // the manager of the claim is not the collection's manager: linking is refused
    const claimOwnedByStranger = newClaimId();
    assert.equal((await create(t, stranger, { claimId: claimOwnedByStranger })).statusCode, 200);
    const refused = await update(t, stranger, { claimId: claimOwnedByStranger, trackerDetails: tracker() });
    assert.equal(refused.statusCode, 403, refused.body);

    const link = tracker();
    const linked = await update(t, manager, { claimId, trackerDetails: link });
    assert.equal(linked.statusCode, 200, linked.body);

    // standalone → on-chain again is a new link (and is checked)
    const standalone = newClaimId();
    assert.equal(
      (await create(t, stranger, { claimId: standalone, trackerDetails: tracker(), standaloneClaim: true })).statusCode,
      200,
      'a standalone claim links to nothing',
    );
    assert.equal((await update(t, stranger, { claimId: standalone, standaloneClaim: false })).statusCode, 403);

    // with the chain down, edits that keep the link still work
    await chain.down();
    try {
      const rename = await update(t, manager, { claimId, metadata: { name: 'renamed' } });
      assert.equal(rename.statusCode, 200, rename.body);
      const relink = await update(t, manager, { claimId, trackerDetails: tracker() });
      assert.equal(relink.statusCode, 503, relink.body);
    } finally {
      await chain.up();
    }

    // one refused link fails the whole batch
    const a = newClaimId();
    const b = newClaimId();
    const batch = await t.request('POST', '/api/v0/claims', {
      token: stranger.accessToken,
      body: {
        claims: [
          {
            claimId: a,
            plugins: [numUses(1)],
            trackerDetails: tracker({ approvalLevel: 'incoming', approverAddress: stranger.platformAddress }),
          },
          { claimId: b, plugins: [numUses(1)], trackerDetails: tracker() },
        ],
      },
    });
    assert.equal(batch.statusCode, 403, batch.body);
    assert.match(batch.json().errorMessage, /^claims\[1\]\.trackerDetails/);
    assert.equal(await exists(t, a), false);
    assert.equal(await exists(t, b), false);
  });

  test('a claim changed while its link was being verified: the unverified link is refused (409)', async () => {
    const claimId = newClaimId();
    const t1 = tracker();
    const t2 = tracker();
    assert.equal((await create(t, manager, { claimId, trackerDetails: t1, standaloneClaim: true })).statusCode, 200);
    let release!: () => void;
    chain.intercept({
      match: (p) => p.includes('/get_collection/7'),
      action: { wait: new Promise<void>((r) => (release = r)) },
      times: 1,
    });
    const seen = chain.requests.length;
    // A: make the claim on-chain (links t1): its chain read is held
    const a = update(t, manager, { claimId, standaloneClaim: false });
    while (!chain.requests.slice(seen).some((r) => r.path.includes('/get_collection/7')))
      await new Promise((r) => setTimeout(r, 2));
    // B: meanwhile the claim's tracker becomes t2 (still standalone: no link, no chain read)
    const b = await update(t, manager, { claimId, trackerDetails: t2 });
    assert.equal(b.statusCode, 200, b.body);
    release();
    const r = await a;
    assert.equal(r.statusCode, 409, r.body);
    assert.match(r.json().errorMessage, /changed while its on-chain link was being verified; send the request again/);
    const claim = (await t.request('GET', `/api/v0/claim/${claimId}`)).json().claim;
    assert.equal(claim.standaloneClaim, true);
    assert.deepEqual(claim.trackerDetails, t2);
    // sent again, it verifies t2 and links
    assert.equal((await update(t, manager, { claimId, standaloneClaim: false })).statusCode, 200);
  });

  test('chain down or failing: the link is refused with a clear 503/502 and nothing is written', async () => {
    await chain.down();
    try {
      for (const level of ['collection', 'incoming']) {
        const claimId = newClaimId();
        const r = await create(t, manager, {
          claimId,
          trackerDetails: tracker(
            level === 'collection' ? {} : { approvalLevel: level, approverAddress: manager.platformAddress },
          ),
        });
        assert.equal(r.statusCode, 503, r.body);
        assert.match(r.json().errorMessage, /chain/i);
        assert.match(r.json().errorMessage, /CHAIN_REST_URL/);
        assert.equal(await exists(t, claimId), false);
      }
    } finally {
      await chain.up();
    }
    chain.intercept({
      match: (p) => p.includes('/get_collection/7'),
      action: { status: 500, message: 'internal error' },
      times: 1,
    });
    const claimId = newClaimId();
    const r = await create(t, manager, { claimId, trackerDetails: tracker() });
    assert.equal(r.statusCode, 502, r.body);
    assert.match(r.json().errorMessage, /chain/i);
    assert.equal(await exists(t, claimId), false);
    // and once the chain answers again, the same request passes
    assert.equal((await create(t, manager, { claimId, trackerDetails: tracker() })).statusCode, 200);
  });
});

describe('ownership of on-chain claims without a configured chain', () => {
  let user: SignedIn;
  const t = useApp();
  before(async () => {
    user = await signIn(t);
  });

  test('linking is refused (503 naming CHAIN_REST_URL); claims without a link still work', async () => {
    const claimId = newClaimId();
    const r = await create(t, user, { claimId, trackerDetails: tracker() });
    assert.equal(r.statusCode, 503, r.body);
    assert.equal(
      r.json().errorMessage,
      "claims[0].trackerDetails: linking a claim to an on-chain approval needs the chain to confirm the approval's manager, and the chain is not configured (set CHAIN_REST_URL)",
    );
    assert.equal(await exists(t, claimId), false);
    assert.equal(
      (await create(t, user, { claimId, collectionId: '7' })).statusCode,
      200,
      'a collection id alone links to no approval',
    );
    assert.equal(
      (await create(t, user, { claimId: newClaimId(), trackerDetails: tracker(), standaloneClaim: true })).statusCode,
      200,
      'standalone claims link to nothing',
    );
  });
});
