import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, TEST_DB, type TestApp } from '../helpers/app.ts';
import { allMembers, createStore, randomAddress, signInUser, type User } from './helpers.ts';

const add = (address: string) => ({ actionName: 'add', payload: { address } });
const remove = (address: string) => ({ actionName: 'remove', payload: { address } });

describe('concurrent edits', () => {
  let t: TestApp;
  let second: TestApp | null = null;
  let owner: User;
  before(async () => {
    t = await startApp();
    owner = await signInUser(t);
    // PostgreSQL: a second app (its own pool) on the same database, as a second process would be.
    // (SQLite in one process cannot do this: a blocked writer would stall the event loop.)
    if (TEST_DB === 'postgres') second = await startApp({ database: t.database });
  });
  after(async () => {
    if (second) {
      await second.app.close();
      await second.ctx.close();
    }
    await t.close();
  });

  test('many clients adding and removing at once end in the correct set, size and history', async () => {
    const store = await createStore(t, owner);
    const id = store.dynamicDataId;
    const removedByAll = Array.from({ length: 40 }, () => randomAddress());
    const addedByAll = Array.from({ length: 40 }, () => randomAddress());
    const pre = await t.request('POST', '/api/v0/storeActions/batch', {
      token: owner.token,
      body: { dynamicDataId: id, actions: removedByAll.map((a) => add(a.platformAddress)) },
    });
    assert.equal(pre.statusCode, 200);

    const CLIENTS = 16;
    const expected = new Set(addedByAll.map((a) => a.platformAddress));
    let requests = 0;
    const clients = Array.from({ length: CLIENTS }, (_, i) => {
      const own = Array.from({ length: 30 }, () => randomAddress());
      const toggled = randomAddress();
      own.forEach((a, j) => j % 2 === 0 && expected.add(a.platformAddress));
      if (i % 3 !== 0) expected.add(toggled.platformAddress); // toggled ends added for 2 of 3 clients
      const app = second && i % 2 ? second : t;
      // half the clients use the owner session, half the API key plus the secret
      const auth = i % 2 ? { token: owner.token } : {};
      const secret = i % 2 ? {} : { dataSecret: store.dataSecret };
      const steps: Record<string, unknown>[] = [
        { actions: own.map((a, j) => add(j % 3 ? a.platformAddress : a.evmAddress)) },
        { actions: own.filter((_, j) => j % 2).map((a) => remove(a.evmAddress)) },
        { actions: addedByAll.map((a) => add(i % 2 ? a.evmAddress : a.platformAddress)) },
        { actions: removedByAll.map((a) => remove(a.platformAddress)) },
        { actionName: 'add', payload: { address: toggled.evmAddress } },
        { actionName: 'remove', payload: { address: toggled.platformAddress } },
        ...(i % 3 !== 0 ? [{ actionName: 'add', payload: { address: toggled.platformAddress } }] : []),
        // re-adding and removing already-settled addresses changes nothing
        {
          actions: [
            ...own.filter((_, j) => j % 2 === 0).map((a) => add(a.platformAddress)),
            remove(randomAddress().platformAddress),
          ],
        },
      ];
      requests += steps.length;
      return (async () => {
        for (const step of steps) {
          const path = 'actions' in step ? '/api/v0/storeActions/batch' : '/api/v0/storeActions/single';
          const res = await app.request('POST', path, { ...auth, body: { dynamicDataId: id, ...secret, ...step } });
          assert.equal(res.statusCode, 200, res.body);
        }
      })();
    });
    await Promise.all(clients);

    const members = await allMembers(t, id, { token: owner.token });
    assert.equal(new Set(members).size, members.length, 'no duplicates');
    assert.deepEqual(members, [...expected].sort());
    const doc = (await t.request('GET', `/api/v0/dynamicStore/${id}`, { token: owner.token })).json().doc;
    assert.equal(doc.size, expected.size);
    const rows = await t.ctx.db
      .selectFrom('dynamic_store_activity')
      .select('seq')
      .where('dynamic_data_id', '=', id)
      .orderBy('seq')
      .execute();
    // one activity doc per request (no batch here exceeds 500 actions), numbered without gaps
    assert.deepEqual(
      rows.map((r) => r.seq),
      Array.from({ length: requests + 1 }, (_, k) => k + 1),
    );
  });

  test('concurrent identical adds of new addresses store each once', async () => {
    const store = await createStore(t, owner);
    const same = Array.from({ length: 50 }, () => randomAddress().platformAddress);
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (second && i % 2 ? second : t).request('POST', '/api/v0/storeActions/batch', {
          token: owner.token,
          body: { dynamicDataId: store.dynamicDataId, actions: same.map(add) },
        }),
      ),
    ).then((all) => all.forEach((r) => assert.equal(r.statusCode, 200, r.body)));
    assert.deepEqual(await allMembers(t, store.dynamicDataId, { token: owner.token }), [...same].sort());
    const doc = (await t.request('GET', `/api/v0/dynamicStore/${store.dynamicDataId}`, { token: owner.token })).json()
      .doc;
    assert.equal(doc.size, 50);
  });
});
