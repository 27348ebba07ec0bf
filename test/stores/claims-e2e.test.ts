// Dynamic stores seen through real claims: the whitelist plugin with useDynamicStore, over HTTP.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createStore, randomAddress, signInUser, type CreatedStore, type User } from './helpers.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

const claimId = () => `store${randomBytes(8).toString('hex')}`;

function storeClaim(
  id: string,
  store: { dynamicDataId: string; dataSecret?: string },
  maxUsesPerAddress = 0,
  maxUses = 100,
) {
  return {
    claimId: id,
    metadata: { name: `store claim ${id}` },
    plugins: [
      { pluginId: 'numUses', instanceId: 'numUses', publicParams: { maxUses }, privateParams: {} },
      {
        pluginId: 'whitelist',
        instanceId: 'wl',
        publicParams: { maxUsesPerAddress, hasPrivateList: true },
        privateParams: {
          useDynamicStore: true,
          dynamicDataId: store.dynamicDataId,
          ...(store.dataSecret !== undefined ? { dataSecret: store.dataSecret } : {}),
        },
      },
    ],
  };
}

describe('dynamic stores attached to claims (whitelist plugin)', () => {
  let owner: User;
  let other: User;
  let store: CreatedStore;
  const t = useApp();
  before(async () => {
    owner = await signInUser(t);
    other = await signInUser(t);
    store = await createStore(t, owner);
  });

  const createClaim = (token: string, claim: Record<string, unknown>) =>
    t.request('POST', '/api/v0/claims', { token, body: { claims: [claim] } });
  const act = (actionName: 'add' | 'remove', address: string, s: CreatedStore = store) =>
    t.request('POST', '/api/v0/storeActions/single', {
      body: { dynamicDataId: s.dynamicDataId, dataSecret: s.dataSecret, actionName, payload: { address } },
    });

  /** Completes a claim: the immediate 4xx of a failing simulation, or the resolved attempt. */
  async function complete(id: string, address: string): Promise<{ success: boolean; error: string }> {
    const res = await t.request('POST', `/api/v0/claims/complete/${id}/${address}`, { body: { _expectedVersion: -1 } });
    if (res.statusCode !== 200) {
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, res.body);
      return { success: false, error: res.json().errorMessage };
    }
    const { claimAttemptId } = res.json();
    const until = Date.now() + PATIENCE_MS;
    for (;;) {
      const s = await t.request('GET', `/api/v0/claims/status/${claimAttemptId}`);
      assert.equal(s.statusCode, 200, s.body);
      const body = s.json();
      if (body.success !== undefined) return { success: body.success, error: body.error };
      if (Date.now() > until) throw new Error('attempt did not resolve');
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  test('a claim passes right after an add and fails right after a remove (no delay)', async () => {
    const id = claimId();
    assert.equal((await createClaim(owner.token, storeClaim(id, store))).statusCode, 200);
    const who = randomAddress();
    assert.deepEqual(await complete(id, who.platformAddress), { success: false, error: 'User not in whitelist' });
    assert.equal((await act('add', who.evmAddress)).statusCode, 200);
    const passed = await complete(id, who.platformAddress);
    assert.equal(passed.success, true, passed.error);
    // the 0x form of the claiming address matches too
    assert.equal((await complete(id, who.evmAddress)).success, true);
    assert.equal((await act('remove', who.platformAddress)).statusCode, 200);
    assert.deepEqual(await complete(id, who.platformAddress), { success: false, error: 'User not in whitelist' });
    // batch edits are just as immediate
    const next = randomAddress();
    const b = await t.request('POST', '/api/v0/storeActions/batch', {
      token: owner.token,
      body: {
        dynamicDataId: store.dynamicDataId,
        actions: [{ actionName: 'add', payload: { address: next.platformAddress } }],
      },
    });
    assert.equal(b.statusCode, 200);
    assert.equal((await complete(id, next.evmAddress)).success, true);
  });

  test('one edit applies to every claim reading the store', async () => {
    const [c1, c2] = [claimId(), claimId()];
    await createClaim(owner.token, storeClaim(c1, store));
    await createClaim(owner.token, storeClaim(c2, store));
    const who = randomAddress().platformAddress;
    await act('add', who);
    assert.equal((await complete(c1, who)).success, true);
    assert.equal((await complete(c2, who)).success, true);
    await act('remove', who);
    assert.equal((await complete(c1, who)).error, 'User not in whitelist');
    assert.equal((await complete(c2, who)).error, 'User not in whitelist');
  });

  test('maxUsesPerAddress caps each member; removing and re-adding does not reset the count', async () => {
    const id = claimId();
    assert.equal((await createClaim(owner.token, storeClaim(id, store, 2))).statusCode, 200);
    const who = randomAddress();
    await act('add', who.platformAddress);
    assert.equal((await complete(id, who.platformAddress)).success, true);
    assert.equal((await complete(id, who.evmAddress)).success, true);
    assert.deepEqual(await complete(id, who.platformAddress), {
      success: false,
      error: 'User already exceeded max uses',
    });
    await act('remove', who.platformAddress);
    await act('add', who.evmAddress);
    assert.deepEqual(await complete(id, who.platformAddress), {
      success: false,
      error: 'User already exceeded max uses',
    });
    // another member still has both uses
    const second = randomAddress().platformAddress;
    await act('add', second);
    assert.equal((await complete(id, second)).success, true);
    assert.equal((await complete(id, second)).success, true);
  });

  test('error texts: Invalid data secret (wrong or rotated secret) and Dynamic data doc not found (deleted store)', async () => {
    const s = await createStore(t, owner);
    const who = randomAddress().platformAddress;
    await act('add', who, s);
    const wrong = claimId();
    assert.equal(
      (
        await createClaim(
          owner.token,
          storeClaim(wrong, { dynamicDataId: s.dynamicDataId, dataSecret: 'f'.repeat(64) }),
        )
      ).statusCode,
      200,
    );
    assert.deepEqual(await complete(wrong, who), { success: false, error: 'Invalid data secret' });

    const good = claimId();
    await createClaim(owner.token, storeClaim(good, s));
    assert.equal((await complete(good, who)).success, true);
    const rotated = await t.request('PUT', '/api/v0/dynamicStores', {
      token: owner.token,
      body: { dynamicDataId: s.dynamicDataId, rotateDataSecret: true },
    });
    assert.equal(rotated.statusCode, 200);
    assert.deepEqual(await complete(good, who), { success: false, error: 'Invalid data secret' });

    assert.equal(
      (
        await t.request('DELETE', '/api/v0/dynamicStores', {
          token: owner.token,
          body: { dynamicDataId: s.dynamicDataId },
        })
      ).statusCode,
      200,
    );
    assert.deepEqual(await complete(wrong, who), { success: false, error: 'Dynamic data doc not found' });
  });

  test('a store reference from its owner (id, no secret): the service attaches the secret; updates keep it', async () => {
    const s = await createStore(t, owner);
    const who = randomAddress();
    await act('add', who.platformAddress, s);
    const id = claimId();
    const res = await createClaim(owner.token, storeClaim(id, { dynamicDataId: s.dynamicDataId }));
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(await complete(id, who.platformAddress), { success: true, error: '' });
    // the document sent back without the secret (as the console does) keeps the attached one
    const upd = await t.request('PUT', '/api/v0/claims', {
      token: owner.token,
      body: { claims: [{ ...storeClaim(id, { dynamicDataId: s.dynamicDataId }), metadata: { name: 'renamed' } }] },
    });
    assert.equal(upd.statusCode, 200, upd.body);
    const again = randomAddress();
    await act('add', again.platformAddress, s);
    assert.deepEqual(await complete(id, again.platformAddress), { success: true, error: '' });
    // the existing contract, id + secret, still works
    const pair = claimId();
    assert.equal((await createClaim(owner.token, storeClaim(pair, s))).statusCode, 200);
    assert.equal((await complete(pair, who.platformAddress)).success, true);
  });

  test("attaching another user's store needs publicUseInClaims (else 403); a public store is read without a secret", async () => {
    const priv = await createStore(t, owner);
    const r403 = await createClaim(other.token, storeClaim(claimId(), priv));
    assert.equal(r403.statusCode, 403, r403.body);
    assert.deepEqual(r403.json(), {
      errorMessage: `Dynamic store ${priv.dynamicDataId} belongs to another user and is not publicUseInClaims: only its creator or manager can attach it to a claim`,
    });
    // a reference without the secret, from someone who does not own the store
    const byRef = await createClaim(other.token, storeClaim(claimId(), { dynamicDataId: priv.dynamicDataId }));
    assert.equal(byRef.statusCode, 403, byRef.body);
    assert.deepEqual(byRef.json(), {
      errorMessage: `Dynamic store ${priv.dynamicDataId} is not yours and not publicUseInClaims: only its creator or manager can attach it without its dataSecret`,
    });
    const unknown = await createClaim(other.token, storeClaim(claimId(), { dynamicDataId: 'f'.repeat(32) }));
    assert.equal(unknown.statusCode, 404, unknown.body);

    const pub = await createStore(t, owner, { publicUseInClaims: true });
    const id = claimId();
    const ok = await createClaim(other.token, storeClaim(id, { dynamicDataId: pub.dynamicDataId }));
    assert.equal(ok.statusCode, 200, ok.body);
    const who = randomAddress().platformAddress;
    assert.equal((await complete(id, who)).error, 'User not in whitelist');
    await act('add', who, pub);
    assert.equal((await complete(id, who)).success, true);
    // publicUseInClaims does not let the claim's creator edit the store
    const edit = await t.request('POST', '/api/v0/storeActions/single', {
      token: other.token,
      body: { dynamicDataId: pub.dynamicDataId, actionName: 'remove', payload: { address: who } },
    });
    assert.equal(edit.statusCode, 403);
    // once the owner makes it private again, the secret-less claim can no longer read it
    await t.request('PUT', '/api/v0/dynamicStores', {
      token: owner.token,
      body: { dynamicDataId: pub.dynamicDataId, publicUseInClaims: false },
    });
    assert.deepEqual(await complete(id, who), { success: false, error: 'Invalid data secret' });
  });
});
