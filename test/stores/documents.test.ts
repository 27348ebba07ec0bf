import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import type { ManualClock } from '../../src/shared/clock.ts';
import { allMembers, createStore, randomAddress, signInUser, type User } from './helpers.ts';

describe('dynamic store documents', () => {
  let owner: User;
  let other: User;
  const t = useApp({ clock: true }); // the search test orders stores by creation time
  before(async () => {
    owner = await signInUser(t);
    other = await signInUser(t);
  });

  test('create answers { doc } with every documented field, the secret, and canonical owner addresses', async () => {
    (t.clock as ManualClock).advance(5000);
    const res = await t.request('POST', '/api/v0/dynamicStores', {
      token: owner.token,
      body: { handlerId: 'addresses', label: 'VIPs', publicUseInClaims: false },
    });
    assert.equal(res.statusCode, 200, res.body);
    const { doc } = res.json();
    assert.equal(doc.handlerId, 'addresses');
    assert.match(doc.dynamicDataId, /^[0-9a-f]{32}$/);
    assert.equal(doc.label, 'VIPs');
    assert.match(doc.dataSecret, /^[0-9a-f]{64}$/);
    assert.deepEqual(doc.data, []);
    assert.equal(doc.size, 0);
    assert.equal(doc.dataTruncated, false);
    assert.equal(doc.createdBy, owner.platformAddress);
    assert.equal(doc.managedBy, owner.platformAddress);
    assert.equal(doc.publicUseInClaims, false);
    assert.equal(typeof doc.createdAt, 'string');
    assert.equal(doc.createdAt, String(t.clock.now()));
    assert.equal(doc.lastUpdated, doc.createdAt);
  });

  test('creation needs a session with manageDynamicStores, the API key, and the addresses handler', async () => {
    const body = { handlerId: 'addresses', label: 'x' };
    assert.equal((await t.request('POST', '/api/v0/dynamicStores', { body })).statusCode, 401);
    assert.equal(
      (await t.request('POST', '/api/v0/dynamicStores', { body, token: owner.token, apiKey: null })).statusCode,
      401,
    );
    const noScope = await signInUser(t, ['completeClaims']);
    const r403 = await t.request('POST', '/api/v0/dynamicStores', { body, token: noScope.token });
    assert.equal(r403.statusCode, 403);
    assert.match(r403.json().errorMessage, /manageDynamicStores/);
    const bad = await t.request('POST', '/api/v0/dynamicStores', {
      body: { handlerId: 'emails', label: 'x' },
      token: owner.token,
    });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().errorMessage, /handlerId/);
    const extra = await t.request('POST', '/api/v0/dynamicStores', { body: { ...body, data: [] }, token: owner.token });
    assert.equal(extra.statusCode, 400);
    assert.match(extra.json().errorMessage, /unknown field "data"/);
  });

  test('the secret is encrypted at rest: neither the plaintext nor anything reversible without the key is stored', async () => {
    const store = await createStore(t, owner);
    const row = await t.ctx.db
      .selectFrom('dynamic_stores')
      .selectAll()
      .where('dynamic_data_id', '=', store.dynamicDataId)
      .executeTakeFirstOrThrow();
    const raw = JSON.stringify(row);
    assert.ok(!raw.includes(store.dataSecret), 'plaintext secret stored');
    assert.equal(t.ctx.keyring.decrypt(row.data_secret_enc), store.dataSecret);
  });

  test('dataSecret is returned only to the creator or manager', async () => {
    const store = await createStore(t, owner);
    const id = store.dynamicDataId;
    const mine = await t.request('GET', `/api/v0/dynamicStore/${id}`, { token: owner.token });
    assert.equal(mine.statusCode, 200);
    assert.equal(mine.json().doc.dataSecret, store.dataSecret);

    const viaSecret = await t.request('GET', `/api/v0/dynamicStore/${id}?dataSecret=${store.dataSecret}`);
    assert.equal(viaSecret.statusCode, 200);
    assert.equal('dataSecret' in viaSecret.json().doc, false);

    const otherWithSecret = await t.request('GET', `/api/v0/dynamicStore/${id}?dataSecret=${store.dataSecret}`, {
      token: other.token,
    });
    assert.equal(otherWithSecret.statusCode, 200);
    assert.equal('dataSecret' in otherWithSecret.json().doc, false);

    // an owner session without the store scope is treated as anyone else
    const ownerNoScope = await t.request('GET', `/api/v0/dynamicStore/${id}?dataSecret=${store.dataSecret}`, {
      token: (await signInUser(t, ['completeClaims'], owner)).token,
    });
    assert.equal('dataSecret' in ownerNoScope.json().doc, false);

    const fetched = await t.request('POST', '/api/v0/dynamicStores/fetch', {
      body: { dynamicDataIds: [id], dataSecret: store.dataSecret },
    });
    assert.equal(fetched.statusCode, 200);
    assert.equal('dataSecret' in fetched.json().docs[0], false);
  });

  test('reading a private store: no credentials 401, wrong secret 403, another user 403; public stores need nothing', async () => {
    const priv = await createStore(t, owner);
    const r401 = await t.request('GET', `/api/v0/dynamicStore/${priv.dynamicDataId}`);
    assert.equal(r401.statusCode, 401);
    const wrong = await t.request('GET', `/api/v0/dynamicStore/${priv.dynamicDataId}?dataSecret=${'0'.repeat(64)}`);
    assert.equal(wrong.statusCode, 403);
    assert.equal(wrong.json().errorMessage, 'Invalid data secret');
    assert.equal(
      (await t.request('GET', `/api/v0/dynamicStore/${priv.dynamicDataId}`, { token: other.token })).statusCode,
      403,
    );
    assert.equal(
      (await t.request('GET', `/api/v0/dynamicStore/${priv.dynamicDataId}`, { apiKey: null, token: owner.token }))
        .statusCode,
      401,
    );

    const pub = await createStore(t, owner, { publicUseInClaims: true });
    const res = await t.request('GET', `/api/v0/dynamicStore/${pub.dynamicDataId}`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().doc.publicUseInClaims, true);
    assert.equal('dataSecret' in res.json().doc, false);

    assert.equal(
      (await t.request('GET', `/api/v0/dynamicStore/${'f'.repeat(32)}`, { token: owner.token })).statusCode,
      404,
    );
  });

  test('update: label, publicUseInClaims and secret rotation (old secret stops working); owner only', async () => {
    const store = await createStore(t, owner);
    const id = store.dynamicDataId;
    const denied = await t.request('PUT', '/api/v0/dynamicStores', {
      token: other.token,
      body: { dynamicDataId: id, label: 'mine now' },
    });
    assert.equal(denied.statusCode, 403);
    assert.equal(
      (await t.request('PUT', '/api/v0/dynamicStores', { body: { dynamicDataId: id, label: 'x' } })).statusCode,
      401,
    );
    assert.equal(
      (
        await t.request('PUT', '/api/v0/dynamicStores', {
          token: owner.token,
          body: { dynamicDataId: 'nope', label: 'x' },
        })
      ).statusCode,
      404,
    );

    const res = await t.request('PUT', '/api/v0/dynamicStores', {
      token: owner.token,
      body: { dynamicDataId: id, label: 'renamed', publicUseInClaims: true },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().doc.label, 'renamed');
    assert.equal(res.json().doc.publicUseInClaims, true);
    assert.equal(res.json().doc.dataSecret, store.dataSecret, 'secret unchanged without rotateDataSecret');

    const rotated = await t.request('PUT', '/api/v0/dynamicStores', {
      token: owner.token,
      body: { dynamicDataId: id, rotateDataSecret: true, publicUseInClaims: false },
    });
    assert.equal(rotated.statusCode, 200);
    const newSecret = rotated.json().doc.dataSecret;
    assert.match(newSecret, /^[0-9a-f]{64}$/);
    assert.notEqual(newSecret, store.dataSecret);
    const addr = randomAddress().platformAddress;
    const withOld = await t.request('POST', '/api/v0/storeActions/single', {
      body: { dynamicDataId: id, dataSecret: store.dataSecret, actionName: 'add', payload: { address: addr } },
    });
    assert.equal(withOld.statusCode, 403);
    const withNew = await t.request('POST', '/api/v0/storeActions/single', {
      body: { dynamicDataId: id, dataSecret: newSecret, actionName: 'add', payload: { address: addr } },
    });
    assert.equal(withNew.statusCode, 200, withNew.body);
    assert.equal((await t.request('GET', `/api/v0/dynamicStore/${id}?dataSecret=${store.dataSecret}`)).statusCode, 403);
  });

  test('delete removes the store, its members and its history; owner only', async () => {
    const store = await createStore(t, owner);
    const id = store.dynamicDataId;
    const add = await t.request('POST', '/api/v0/storeActions/single', {
      token: owner.token,
      body: { dynamicDataId: id, actionName: 'add', payload: { address: randomAddress().evmAddress } },
    });
    assert.equal(add.statusCode, 200);
    assert.equal(
      (await t.request('DELETE', '/api/v0/dynamicStores', { token: other.token, body: { dynamicDataId: id } }))
        .statusCode,
      403,
    );
    const res = await t.request('DELETE', '/api/v0/dynamicStores', { token: owner.token, body: { dynamicDataId: id } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(typeof res.json().message, 'string');
    assert.equal((await t.request('GET', `/api/v0/dynamicStore/${id}`, { token: owner.token })).statusCode, 404);
    assert.equal(
      (await t.request('DELETE', '/api/v0/dynamicStores', { token: owner.token, body: { dynamicDataId: id } }))
        .statusCode,
      404,
    );
    const leftovers = await t.ctx.db
      .selectFrom('dynamic_store_members')
      .select('address')
      .where('dynamic_data_id', '=', id)
      .execute();
    assert.equal(leftovers.length, 0);
    const history = await t.ctx.db
      .selectFrom('dynamic_store_activity')
      .select('seq')
      .where('dynamic_data_id', '=', id)
      .execute();
    assert.equal(history.length, 0);
    const act = await t.request('POST', '/api/v0/storeActions/single', {
      token: owner.token,
      body: { dynamicDataId: id, actionName: 'add', payload: { address: randomAddress().evmAddress } },
    });
    assert.equal(act.statusCode, 404);
  });

  test('fetch returns docs in request order, null for unknown or unreadable ones', async () => {
    const a = await createStore(t, owner, { label: 'a' });
    const b = await createStore(t, other, { label: 'b' });
    const c = await createStore(t, other, { label: 'c', publicUseInClaims: true });
    const res = await t.request('POST', '/api/v0/dynamicStores/fetch', {
      token: owner.token,
      body: { dynamicDataIds: [b.dynamicDataId, 'missing', a.dynamicDataId, c.dynamicDataId] },
    });
    assert.equal(res.statusCode, 200, res.body);
    const docs = res.json().docs;
    assert.equal(docs.length, 4);
    assert.equal(docs[0], null);
    assert.equal(docs[1], null);
    assert.equal(docs[2].label, 'a');
    assert.equal(docs[2].dataSecret, a.dataSecret);
    assert.equal(docs[3].label, 'c');
    assert.equal('dataSecret' in docs[3], false);
    assert.deepEqual(res.json().pagination, { bookmark: '', hasMore: false });
  });

  test("search lists the signed-in user's stores, newest first, bookmark-paginated, filterable by label", async () => {
    const me = await signInUser(t);
    await createStore(t, other, { label: 'not mine' });
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      (t.clock as ManualClock).advance(1000);
      ids.push((await createStore(t, me, { label: i % 3 === 0 ? `Gold ${i}` : `plain ${i}` })).dynamicDataId);
    }
    const seen: string[] = [];
    let bookmark = '';
    const sizes: number[] = [];
    for (;;) {
      const res = await t.request('GET', `/api/v0/dynamicStores/search?bookmark=${encodeURIComponent(bookmark)}`, {
        token: me.token,
      });
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json();
      sizes.push(page.docs.length);
      assert.deepEqual(page.pagination, { bookmark: page.bookmark, hasMore: page.hasMore });
      seen.push(
        ...page.docs.map(
          (d: { dynamicDataId: string; createdBy: string; dataSecret: string }) => (
            assert.equal(d.createdBy, me.platformAddress), assert.match(d.dataSecret, /^[0-9a-f]{64}$/), d.dynamicDataId
          ),
        ),
      );
      if (!page.hasMore) break;
      bookmark = page.bookmark;
    }
    assert.deepEqual(sizes, [25, 5]);
    assert.deepEqual(seen, [...ids].reverse());
    const gold = (await t.request('GET', '/api/v0/dynamicStores/search?searchValue=gold', { token: me.token })).json();
    assert.equal(gold.docs.length, 10);
    assert.ok(gold.docs.every((d: { label: string }) => d.label.startsWith('Gold')));
    const literal = (
      await t.request('GET', '/api/v0/dynamicStores/search?searchValue=%25', { token: me.token })
    ).json();
    assert.equal(literal.docs.length, 0, '% is matched literally');
    assert.equal((await t.request('GET', '/api/v0/dynamicStores/search')).statusCode, 401);
  });

  test('data lists every member up to 1000; beyond that it is a prefix flagged dataTruncated, and /values pages the rest', async () => {
    const store = await createStore(t, owner);
    const id = store.dynamicDataId;
    const addrs = Array.from({ length: 1001 }, () => randomAddress().platformAddress);
    const batch = async (list: string[]) =>
      t.request('POST', '/api/v0/storeActions/batch', {
        token: owner.token,
        body: { dynamicDataId: id, actions: list.map((address) => ({ actionName: 'add', payload: { address } })) },
      });
    assert.equal((await batch(addrs.slice(0, 1000))).statusCode, 200);
    let doc = (await t.request('GET', `/api/v0/dynamicStore/${id}`, { token: owner.token })).json().doc;
    assert.equal(doc.size, 1000);
    assert.equal(doc.dataTruncated, false);
    assert.deepEqual(doc.data, addrs.slice(0, 1000).sort());
    assert.equal((await batch(addrs.slice(1000))).statusCode, 200);
    doc = (await t.request('GET', `/api/v0/dynamicStore/${id}`, { token: owner.token })).json().doc;
    assert.equal(doc.size, 1001);
    assert.equal(doc.dataTruncated, true);
    assert.equal(doc.data.length, 1000);
    assert.deepEqual(doc.data, [...addrs].sort().slice(0, 1000));
    assert.deepEqual(await allMembers(t, id, { token: owner.token }), [...addrs].sort());
  });
});
