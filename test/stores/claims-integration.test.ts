// The functions the claims engine's whitelist plugin calls (contracts.md), exercised directly.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/shared/errors.ts';
import { attachStore, readStoreMembership } from '../../src/stores/claims-integration.ts';
import { createStore, randomAddress, signInUser, type User } from './helpers.ts';

describe('store membership for the whitelist plugin', () => {
  let owner: User;
  let other: User;
  const t = useApp();
  before(async () => {
    owner = await signInUser(t);
    other = await signInUser(t);
  });

  const act = (id: string, actionName: string, address: string) =>
    t.request('POST', '/api/v0/storeActions/single', {
      token: owner.token,
      body: { dynamicDataId: id, actionName, payload: { address } },
    });

  test('membership follows each action immediately; the secret is required for private stores', async () => {
    const s = await createStore(t, owner);
    const a = randomAddress();
    const read = (secret?: string) =>
      readStoreMembership(
        t.ctx.db,
        t.ctx.keyring,
        { dynamicDataId: s.dynamicDataId, ...(secret !== undefined ? { dataSecret: secret } : {}) },
        a.platformAddress,
      );
    assert.deepEqual(await read(s.dataSecret), { inStore: false });
    assert.equal((await act(s.dynamicDataId, 'add', a.evmAddress)).statusCode, 200);
    assert.deepEqual(await read(s.dataSecret), { inStore: true });
    assert.deepEqual(await read('wrong'), { error: 'Invalid data secret' });
    assert.deepEqual(await read(), { error: 'Invalid data secret' });
    assert.equal((await act(s.dynamicDataId, 'remove', a.platformAddress)).statusCode, 200);
    assert.deepEqual(await read(s.dataSecret), { inStore: false });
  });

  test('a publicUseInClaims store needs no secret (and ignores a wrong one)', async () => {
    const s = await createStore(t, owner, { publicUseInClaims: true });
    const a = randomAddress().platformAddress;
    await act(s.dynamicDataId, 'add', a);
    assert.deepEqual(await readStoreMembership(t.ctx.db, t.ctx.keyring, { dynamicDataId: s.dynamicDataId }, a), {
      inStore: true,
    });
    assert.deepEqual(
      await readStoreMembership(t.ctx.db, t.ctx.keyring, { dynamicDataId: s.dynamicDataId, dataSecret: 'x' }, a),
      { inStore: true },
    );
  });

  test('unknown or deleted stores: Dynamic data doc not found', async () => {
    assert.deepEqual(
      await readStoreMembership(t.ctx.db, t.ctx.keyring, { dynamicDataId: 'nope' }, randomAddress().platformAddress),
      { error: 'Dynamic data doc not found' },
    );
    assert.deepEqual(
      await readStoreMembership(t.ctx.db, t.ctx.keyring, { dynamicDataId: '' }, randomAddress().platformAddress),
      { error: 'Dynamic data doc not found' },
    );
    const s = await createStore(t, owner);
    await t.request('DELETE', '/api/v0/dynamicStores', {
      token: owner.token,
      body: { dynamicDataId: s.dynamicDataId },
    });
    assert.deepEqual(await readStoreMembership(t.ctx.db, t.ctx.keyring, s, randomAddress().platformAddress), {
      error: 'Dynamic data doc not found',
    });
  });

  test('a rotated secret makes the old one Invalid data secret', async () => {
    const s = await createStore(t, owner);
    await t.request('PUT', '/api/v0/dynamicStores', {
      token: owner.token,
      body: { dynamicDataId: s.dynamicDataId, rotateDataSecret: true },
    });
    assert.deepEqual(await readStoreMembership(t.ctx.db, t.ctx.keyring, s, randomAddress().platformAddress), {
      error: 'Invalid data secret',
    });
  });

  test('reads inside a transaction see the store too', async () => {
    const s = await createStore(t, owner);
    const a = randomAddress().platformAddress;
    await act(s.dynamicDataId, 'add', a);
    const r = await t.ctx.db.transaction().execute((tx) => readStoreMembership(tx, t.ctx.keyring, s, a));
    assert.deepEqual(r, { inStore: true });
  });

  test('attaching: the owner may; others only when publicUseInClaims (403); unknown store 404', async () => {
    const priv = await createStore(t, owner);
    const pub = await createStore(t, owner, { publicUseInClaims: true });
    // the owner without the secret: the store's own secret is filled in
    assert.equal(
      await attachStore(t.ctx.db, t.ctx.keyring, { dynamicDataId: priv.dynamicDataId }, owner.platformAddress),
      priv.dataSecret,
    );
    assert.equal(
      await attachStore(t.ctx.db, t.ctx.keyring, { dynamicDataId: pub.dynamicDataId }, other.platformAddress),
      undefined,
    );
    const status = async (p: Promise<unknown>) =>
      p.then(
        () => 200,
        (e: unknown) => (e instanceof ApiError ? e.statusCode : 500),
      );
    assert.equal(
      await status(
        attachStore(
          t.ctx.db,
          t.ctx.keyring,
          { dynamicDataId: priv.dynamicDataId, dataSecret: priv.dataSecret },
          other.platformAddress,
        ),
      ),
      403,
    );
    assert.equal(
      await status(attachStore(t.ctx.db, t.ctx.keyring, { dynamicDataId: 'nope' }, owner.platformAddress)),
      404,
    );
  });
});
