// An address's claim numbers (the success route, eligibility's "claimed", satisfies-claim) are read
// through its attempts joined to the claim ledger (migration 0032): the ledger stays the truth.
// A number counts for an address only while the ledger row of that number carries one of the
// address's attempts: clearing the ledger (setting numUses' state) leaves the attempts behind, and a
// cleared number is handed out again to a later attempt; a failed attempt holds no number.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { useApp } from '../helpers/use-app.ts';
import type { SignedIn } from '../helpers/signin.ts';
import { drainQueue } from '../../src/claims/queue.ts';
import { attempt, createClaim, getClaim, manager, newClaimId, numUses, randomAddress, status } from './helpers.ts';

describe("an address's claim numbers", () => {
  // the queue worker is off, so the attempts queued before a drain are all resolved by it, in order
  const t = useApp({ env: { RUN_WORKER: 'false' } });
  let m: SignedIn;
  before(async () => {
    m = await manager(t);
  });

  const claim = async (maxUses: number) => {
    const claimId = newClaimId();
    await createClaim(t, m.accessToken, { claimId, plugins: [numUses(maxUses)], showInSearchResults: true });
    return claimId;
  };
  /** Queues one attempt per [claim, address], in this order, then lets the worker resolve them all. */
  const complete = async (...attempts: Array<[string, string]>) => {
    const ids: string[] = [];
    for (const [claimId, address] of attempts) {
      const res = await attempt(t, 'complete', claimId, address);
      assert.equal(res.statusCode, 200, res.body);
      ids.push(res.json().claimAttemptId);
    }
    await drainQueue(t.ctx);
    return Promise.all(ids.map((id) => status(t, id)));
  };
  const success = async (claimId: string, address: string) => {
    const res = await t.request('GET', `/api/v0/claims/success/${claimId}/${address}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const eligibility = async (address: string, claimIds: string[]) => {
    const res = await t.request('POST', '/api/v0/eligibility', { body: { address, claimIds } });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json().docs as Array<Record<string, unknown>>).map(
      ({ claimId, state, successCount, claimNumbers }) => ({
        claimId,
        state,
        ...(successCount !== undefined ? { successCount, claimNumbers } : {}),
      }),
    );
  };

  test('a cleared ledger: earlier numbers stop counting, and a number handed out again counts for its new holder only', async () => {
    const claimId = await claim(10);
    const [x, y] = [randomAddress(), randomAddress()];
    await complete([claimId, x], [claimId, x]);
    assert.deepEqual(await success(claimId, x), { successCount: 2, claimNumbers: [0, 1] });
    assert.deepEqual(await eligibility(x, [claimId]), [
      { claimId, state: 'claimed', successCount: 2, claimNumbers: [0, 1] },
    ]);

    // setting numUses' state clears the ledger; x's two successful attempts remain
    const doc = await getClaim(t, claimId);
    const [p] = doc.plugins as Array<Record<string, unknown>>;
    const put = await t.request('PUT', '/api/v0/claims', {
      token: m.accessToken,
      body: {
        claims: [
          {
            claimId,
            plugins: [
              {
                pluginId: p!.pluginId,
                instanceId: p!.instanceId,
                version: p!.version,
                publicParams: p!.publicParams,
                newState: { numUses: 0 },
              },
            ],
            showInSearchResults: true,
          },
        ],
      },
    });
    assert.equal(put.statusCode, 200, put.body);
    assert.deepEqual(await success(claimId, x), { successCount: 0, claimNumbers: [] });
    assert.deepEqual(await eligibility(x, [claimId]), [{ claimId, state: 'eligible' }]);

    // number 0 again, now to y: x's old attempt with number 0 does not get it back
    const [ry] = await complete([claimId, y]);
    assert.equal(ry!.success, true);
    assert.deepEqual(await success(claimId, y), { successCount: 1, claimNumbers: [0] });
    assert.deepEqual(await success(claimId, x), { successCount: 0, claimNumbers: [] });
    assert.deepEqual(await eligibility(y, [claimId]), [
      { claimId, state: 'claimed', successCount: 1, claimNumbers: [0] },
    ]);
    assert.deepEqual(await eligibility(x, [claimId]), [{ claimId, state: 'eligible' }]);

    // and number 1 again, to x: only it counts for x
    await complete([claimId, x]);
    assert.deepEqual(await success(claimId, x), { successCount: 1, claimNumbers: [1] });
    assert.deepEqual(await eligibility(x, [claimId]), [
      { claimId, state: 'claimed', successCount: 1, claimNumbers: [1] },
    ]);
  });

  test('failed and successful attempts: only the successes hold numbers, by claim, ascending', async () => {
    // accepted while the claim had uses left; the failures happen at execution
    const [a, b, c] = [await claim(2), await claim(5), await claim(1)];
    const [x, z] = [randomAddress(), randomAddress()];
    const results = await complete([a, x], [a, z], [a, x], [c, z], [c, x], [b, x], [b, x], [b, z], [b, x]);
    assert.deepEqual(
      results.map((r) => r.success),
      [true, true, false, true, false, true, true, true, true],
    );
    assert.deepEqual(await success(a, x), { successCount: 1, claimNumbers: [0] });
    assert.deepEqual(await success(b, x), { successCount: 3, claimNumbers: [0, 1, 3] });
    assert.deepEqual(await success(c, x), { successCount: 0, claimNumbers: [] });
    assert.deepEqual(await success(c, z), { successCount: 1, claimNumbers: [0] });
    assert.deepEqual(await success(b, z), { successCount: 1, claimNumbers: [2] });
    const byId = (docs: Array<Record<string, unknown>>) =>
      docs.sort((p, q) => String(p.claimId).localeCompare(String(q.claimId)));
    assert.deepEqual(
      byId(await eligibility(x, [a, b, c])),
      byId([
        { claimId: a, state: 'claimed', successCount: 1, claimNumbers: [0] },
        { claimId: b, state: 'claimed', successCount: 3, claimNumbers: [0, 1, 3] },
        { claimId: c, state: 'notEligible' },
      ]),
    );
  });
});
