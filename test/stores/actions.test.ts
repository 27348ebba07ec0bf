import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.ts';
import {
  allMembers,
  createStore,
  isMember,
  randomAddress,
  signInUser,
  type CreatedStore,
  type User,
} from './helpers.ts';

const single = (t: TestApp, body: Record<string, unknown>, token?: string, apiKey?: string | null) =>
  t.request('POST', '/api/v0/storeActions/single', {
    body,
    ...(token ? { token } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
  });
const batch = (t: TestApp, body: Record<string, unknown>, token?: string) =>
  t.request('POST', '/api/v0/storeActions/batch', { body, ...(token ? { token } : {}) });
const add = (address: string) => ({ actionName: 'add', payload: { address } });
const remove = (address: string) => ({ actionName: 'remove', payload: { address } });

describe('store actions', () => {
  let owner: User;
  let other: User;
  const t = useApp();
  before(async () => {
    owner = await signInUser(t);
    other = await signInUser(t);
  });

  const members = (s: CreatedStore) => allMembers(t, s.dynamicDataId, { token: owner.token });
  const activityCount = async (s: CreatedStore) =>
    (
      await t.ctx.db
        .selectFrom('dynamic_store_activity')
        .select('seq')
        .where('dynamic_data_id', '=', s.dynamicDataId)
        .execute()
    ).length;

  describe('authentication', () => {
    test('creator session with manageDynamicStores: no secret needed; answers {} with 200', async () => {
      const s = await createStore(t, owner);
      const a = randomAddress().platformAddress;
      const res = await single(
        t,
        { dynamicDataId: s.dynamicDataId, actionName: 'add', payload: { address: a } },
        owner.token,
      );
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), {});
      assert.deepEqual(await members(s), [a]);
      const b = await batch(t, { dynamicDataId: s.dynamicDataId, actions: [remove(a)] }, owner.token);
      assert.equal(b.statusCode, 200, b.body);
      assert.deepEqual(b.json(), {});
      assert.deepEqual(await members(s), []);
    });

    test('API key plus the correct dataSecret, no session', async () => {
      const s = await createStore(t, owner);
      const a = randomAddress().platformAddress;
      const res = await single(t, {
        dynamicDataId: s.dynamicDataId,
        dataSecret: s.dataSecret,
        actionName: 'add',
        payload: { address: a },
      });
      assert.equal(res.statusCode, 200, res.body);
      const b = await batch(t, {
        dynamicDataId: s.dynamicDataId,
        dataSecret: s.dataSecret,
        actions: [add(randomAddress().platformAddress)],
      });
      assert.equal(b.statusCode, 200, b.body);
      assert.equal((await members(s)).length, 2);
      // another user's session plus the secret works too
      const c = await single(
        t,
        { dynamicDataId: s.dynamicDataId, dataSecret: s.dataSecret, actionName: 'remove', payload: { address: a } },
        other.token,
      );
      assert.equal(c.statusCode, 200, c.body);
      assert.equal((await members(s)).length, 1);
    });

    test('a wrong secret is a 403 and changes nothing (single and batch)', async () => {
      const s = await createStore(t, owner);
      const a = randomAddress().platformAddress;
      const wrong = 'a'.repeat(64);
      const r1 = await single(t, {
        dynamicDataId: s.dynamicDataId,
        dataSecret: wrong,
        actionName: 'add',
        payload: { address: a },
      });
      assert.equal(r1.statusCode, 403);
      assert.equal(r1.json().errorMessage, 'Invalid data secret');
      const r2 = await batch(t, {
        dynamicDataId: s.dynamicDataId,
        dataSecret: s.dataSecret.slice(0, -1),
        actions: [add(a)],
      });
      assert.equal(r2.statusCode, 403);
      const r3 = await single(
        t,
        { dynamicDataId: s.dynamicDataId, dataSecret: '', actionName: 'add', payload: { address: a } },
        other.token,
      );
      assert.equal(r3.statusCode, 403);
      assert.deepEqual(await members(s), []);
      assert.equal(await activityCount(s), 0);
    });

    test('no session and no secret: 401; another user without the secret: 403; no API key: 401', async () => {
      const s = await createStore(t, owner);
      const body = {
        dynamicDataId: s.dynamicDataId,
        actionName: 'add',
        payload: { address: randomAddress().platformAddress },
      };
      const r401 = await single(t, body);
      assert.equal(r401.statusCode, 401);
      assert.equal(r401.json().unauthorized, true);
      assert.equal((await single(t, body, other.token)).statusCode, 403);
      assert.equal((await single(t, { ...body, dataSecret: s.dataSecret }, undefined, null)).statusCode, 401);
      assert.equal((await single(t, body, owner.token, null)).statusCode, 401);
      assert.deepEqual(await members(s), []);
    });

    test("the creator's own session without manageDynamicStores needs the secret", async () => {
      const s = await createStore(t, owner);
      const body = {
        dynamicDataId: s.dynamicDataId,
        actionName: 'add',
        payload: { address: randomAddress().platformAddress },
      };
      const weak = await signInUser(t, ['completeClaims'], owner);
      assert.equal(weak.platformAddress, owner.platformAddress);
      const res = await single(t, body, weak.token);
      assert.equal(res.statusCode, 403);
      assert.match(res.json().errorMessage, /manageDynamicStores/);
      assert.deepEqual(await members(s), []);
      assert.equal((await single(t, { ...body, dataSecret: s.dataSecret }, weak.token)).statusCode, 200);
      assert.deepEqual(await members(s), [body.payload.address]);
    });

    test('publicUseInClaims never lets anyone edit', async () => {
      const s = await createStore(t, owner, { publicUseInClaims: true });
      const body = {
        dynamicDataId: s.dynamicDataId,
        actionName: 'add',
        payload: { address: randomAddress().platformAddress },
      };
      assert.equal((await single(t, body)).statusCode, 401);
      assert.equal((await single(t, body, other.token)).statusCode, 403);
      assert.equal(
        (
          await batch(
            t,
            { dynamicDataId: s.dynamicDataId, actions: [add(randomAddress().platformAddress)] },
            other.token,
          )
        ).statusCode,
        403,
      );
      assert.equal((await single(t, { ...body, dataSecret: 'nope' })).statusCode, 403);
      assert.deepEqual(await members(s), []);
      // while reads need nothing
      assert.equal(await isMember(t, s.dynamicDataId, body.payload.address, {}), false);
    });

    test('unknown store: 404', async () => {
      const res = await single(t, {
        dynamicDataId: 'f'.repeat(32),
        dataSecret: 'x',
        actionName: 'add',
        payload: { address: randomAddress().platformAddress },
      });
      assert.equal(res.statusCode, 404);
      assert.match(res.json().errorMessage, /Dynamic data doc not found/);
    });
  });

  describe('addresses', () => {
    test('both forms are accepted, stored canonical and deduplicated; removing either form removes the account', async () => {
      const s = await createStore(t, owner);
      const x = randomAddress();
      const y = randomAddress();
      assert.equal(
        (
          await single(
            t,
            { dynamicDataId: s.dynamicDataId, actionName: 'add', payload: { address: x.evmAddress } },
            owner.token,
          )
        ).statusCode,
        200,
      );
      assert.equal(
        (
          await single(
            t,
            { dynamicDataId: s.dynamicDataId, actionName: 'add', payload: { address: x.platformAddress } },
            owner.token,
          )
        ).statusCode,
        200,
      );
      assert.equal(
        (
          await single(
            t,
            { dynamicDataId: s.dynamicDataId, actionName: 'add', payload: { address: x.evmAddress.toLowerCase() } },
            owner.token,
          )
        ).statusCode,
        200,
      );
      const r = await batch(
        t,
        {
          dynamicDataId: s.dynamicDataId,
          actions: [add(y.platformAddress), add(y.evmAddress), add(y.evmAddress.toLowerCase())],
        },
        owner.token,
      );
      assert.equal(r.statusCode, 200);
      assert.deepEqual(await members(s), [x.platformAddress, y.platformAddress].sort());
      const doc = (await t.request('GET', `/api/v0/dynamicStore/${s.dynamicDataId}`, { token: owner.token })).json()
        .doc;
      assert.equal(doc.size, 2);
      // lookups in either form
      assert.equal(await isMember(t, s.dynamicDataId, x.evmAddress, { token: owner.token }), true);
      const lookup = await t.request('GET', `/api/v0/dynamicStore/${s.dynamicDataId}/value?key=${y.evmAddress}`, {
        token: owner.token,
      });
      assert.deepEqual(lookup.json(), { key: y.platformAddress, inStore: true });
      assert.equal(
        (
          await single(
            t,
            { dynamicDataId: s.dynamicDataId, actionName: 'remove', payload: { address: x.evmAddress } },
            owner.token,
          )
        ).statusCode,
        200,
      );
      assert.deepEqual(await members(s), [y.platformAddress]);
      // the activity records canonical addresses
      const act = (
        await t.request('GET', `/api/v0/dynamicStores/activity?dynamicDataId=${s.dynamicDataId}`, {
          token: owner.token,
        })
      ).json();
      assert.deepEqual(act.history.docs[0].actions, [
        { actionName: 'remove', payload: { address: x.platformAddress } },
      ]);
    });

    test('removing an absent address is a no-op that still answers 200', async () => {
      const s = await createStore(t, owner);
      const a = randomAddress().platformAddress;
      await single(t, { dynamicDataId: s.dynamicDataId, actionName: 'add', payload: { address: a } }, owner.token);
      const res = await single(
        t,
        { dynamicDataId: s.dynamicDataId, actionName: 'remove', payload: { address: randomAddress().platformAddress } },
        owner.token,
      );
      assert.equal(res.statusCode, 200);
      assert.deepEqual(await members(s), [a]);
      const doc = (await t.request('GET', `/api/v0/dynamicStore/${s.dynamicDataId}`, { token: owner.token })).json()
        .doc;
      assert.equal(doc.size, 1);
    });

    test('anything that is not an address is a 400 naming the field and the value', async () => {
      const s = await createStore(t, owner);
      for (const bad of [
        'hello',
        '0x1234',
        'bb1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq',
        'cosmos1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqs7gvmv',
        '0x' + 'G'.repeat(40),
      ]) {
        const res = await single(
          t,
          { dynamicDataId: s.dynamicDataId, actionName: 'add', payload: { address: bad } },
          owner.token,
        );
        assert.equal(res.statusCode, 400, bad);
        assert.match(res.json().errorMessage, /payload\.address/);
        assert.ok(res.json().errorMessage.includes(JSON.stringify(bad)), res.json().errorMessage);
      }
      // bad EIP-55 checksum (mixed case that is not the checksum)
      const good = randomAddress().evmAddress;
      const flipped =
        '0x' + [...good.slice(2)].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
      if (flipped.slice(2) !== flipped.slice(2).toLowerCase() && flipped.slice(2) !== flipped.slice(2).toUpperCase()) {
        assert.equal(
          (
            await single(
              t,
              { dynamicDataId: s.dynamicDataId, actionName: 'add', payload: { address: flipped } },
              owner.token,
            )
          ).statusCode,
          400,
        );
      }
      const badName = await single(
        t,
        { dynamicDataId: s.dynamicDataId, actionName: 'upsert', payload: { address: good } },
        owner.token,
      );
      assert.equal(badName.statusCode, 400);
      assert.match(badName.json().errorMessage, /actionName: "upsert"/);
      const lookup = await t.request('GET', `/api/v0/dynamicStore/${s.dynamicDataId}/value?key=nope`, {
        token: owner.token,
      });
      assert.equal(lookup.statusCode, 400);
      assert.match(lookup.json().errorMessage, /key/);
      assert.deepEqual(await members(s), []);
    });
  });

  describe('batches', () => {
    test('a bad action in the middle rejects the whole batch with a 400 naming its index and value; nothing changes', async () => {
      const s = await createStore(t, owner);
      const keep = randomAddress().platformAddress;
      await single(t, { dynamicDataId: s.dynamicDataId, actionName: 'add', payload: { address: keep } }, owner.token);
      const before = await activityCount(s);
      const actions = [
        add(randomAddress().platformAddress),
        remove(keep),
        add('not-an-address'),
        add(randomAddress().evmAddress),
      ];
      const res = await batch(t, { dynamicDataId: s.dynamicDataId, actions }, owner.token);
      assert.equal(res.statusCode, 400);
      assert.match(res.json().errorMessage, /actions\[2\]\.payload\.address/);
      assert.match(res.json().errorMessage, /"not-an-address"/);
      const badName = await batch(
        t,
        {
          dynamicDataId: s.dynamicDataId,
          actions: [add(randomAddress().platformAddress), { actionName: 'delete', payload: { address: keep } }],
        },
        owner.token,
      );
      assert.equal(badName.statusCode, 400);
      assert.match(badName.json().errorMessage, /actions\[1\]\.actionName: "delete"/);
      const badShape = await batch(
        t,
        {
          dynamicDataId: s.dynamicDataId,
          actions: [add(randomAddress().platformAddress), { actionName: 'add', payload: { address: 5 } }],
        },
        owner.token,
      );
      assert.equal(badShape.statusCode, 400);
      assert.match(badShape.json().errorMessage, /actions\.1\.payload\.address/);
      assert.deepEqual(await members(s), [keep]);
      assert.equal(await activityCount(s), before);
    });

    test('a batch that fails while applying rolls back entirely', async () => {
      // Make the activity insert fail after the member edits ran (a row already holds the next
      // sequence number), so the transaction must undo the member changes too.
      const s = await createStore(t, owner);
      const keep = randomAddress().platformAddress;
      await single(t, { dynamicDataId: s.dynamicDataId, actionName: 'add', payload: { address: keep } }, owner.token);
      await t.ctx.db
        .insertInto('dynamic_store_activity')
        .values({ dynamic_data_id: s.dynamicDataId, seq: 2, updated_at: 0, actions: '[]' })
        .execute();
      const fresh = randomAddress().platformAddress;
      const res = await batch(t, { dynamicDataId: s.dynamicDataId, actions: [add(fresh), remove(keep)] }, owner.token);
      assert.equal(res.statusCode, 500);
      assert.deepEqual(await members(s), [keep]);
      const row = await t.ctx.db
        .selectFrom('dynamic_stores')
        .select(['size', 'activity_seq'])
        .where('dynamic_data_id', '=', s.dynamicDataId)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { size: 1, activity_seq: 1 });
    });

    test('actions apply in order: the last action on an address decides', async () => {
      const s = await createStore(t, owner);
      const [a, b, c] = [randomAddress(), randomAddress(), randomAddress()];
      const res = await batch(
        t,
        {
          dynamicDataId: s.dynamicDataId,
          actions: [
            add(a.platformAddress),
            remove(a.evmAddress),
            add(b.evmAddress),
            remove(b.platformAddress),
            add(b.platformAddress),
            remove(c.platformAddress),
            add(c.evmAddress),
          ],
        },
        owner.token,
      );
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(await members(s), [b.platformAddress, c.platformAddress].sort());
      const doc = (await t.request('GET', `/api/v0/dynamicStore/${s.dynamicDataId}`, { token: owner.token })).json()
        .doc;
      assert.equal(doc.size, 2);
    });

    test('an empty batch is a no-op; more than 10,000 actions is a 400', async () => {
      const s = await createStore(t, owner);
      assert.equal((await batch(t, { dynamicDataId: s.dynamicDataId, actions: [] }, owner.token)).statusCode, 200);
      assert.equal(await activityCount(s), 0);
      const big = Array.from({ length: 10_001 }, () => add('bb1x'));
      const res = await batch(t, { dynamicDataId: s.dynamicDataId, actions: big }, owner.token);
      assert.equal(res.statusCode, 400);
      assert.match(res.json().errorMessage, /10000/);
    });
  });

  describe('simulation', () => {
    test('_isSimulation validates (addresses and auth) and changes nothing', async () => {
      const s = await createStore(t, owner);
      const a = randomAddress().platformAddress;
      const ok = await single(
        t,
        { _isSimulation: true, dynamicDataId: s.dynamicDataId, actionName: 'add', payload: { address: a } },
        owner.token,
      );
      assert.equal(ok.statusCode, 200);
      assert.deepEqual(ok.json(), {});
      const okBatch = await batch(t, {
        _isSimulation: true,
        dynamicDataId: s.dynamicDataId,
        dataSecret: s.dataSecret,
        actions: [add(a), add(randomAddress().evmAddress)],
      });
      assert.equal(okBatch.statusCode, 200);
      assert.deepEqual(await members(s), []);
      assert.equal(await activityCount(s), 0);
      const row = await t.ctx.db
        .selectFrom('dynamic_stores')
        .select(['size', 'last_updated', 'created_at'])
        .where('dynamic_data_id', '=', s.dynamicDataId)
        .executeTakeFirstOrThrow();
      assert.equal(row.size, 0);
      assert.equal(row.last_updated, row.created_at);
      // still validated
      assert.equal(
        (
          await batch(
            t,
            { _isSimulation: true, dynamicDataId: s.dynamicDataId, actions: [add(a), add('zzz')] },
            owner.token,
          )
        ).statusCode,
        400,
      );
      assert.equal(
        (
          await single(t, {
            _isSimulation: true,
            dynamicDataId: s.dynamicDataId,
            dataSecret: 'wrong',
            actionName: 'add',
            payload: { address: a },
          })
        ).statusCode,
        403,
      );
      assert.equal(
        (
          await single(t, {
            _isSimulation: true,
            dynamicDataId: s.dynamicDataId,
            actionName: 'add',
            payload: { address: a },
          })
        ).statusCode,
        401,
      );
      // a simulated removal of a present address leaves it there
      await single(t, { dynamicDataId: s.dynamicDataId, actionName: 'add', payload: { address: a } }, owner.token);
      await single(
        t,
        { _isSimulation: true, dynamicDataId: s.dynamicDataId, actionName: 'remove', payload: { address: a } },
        owner.token,
      );
      assert.deepEqual(await members(s), [a]);
    });
  });

  describe('reads', () => {
    test('membership lookup answers { key, inStore } right after each action', async () => {
      const s = await createStore(t, owner);
      const a = randomAddress();
      assert.equal(await isMember(t, s.dynamicDataId, a.platformAddress, { dataSecret: s.dataSecret }), false);
      await single(t, {
        dynamicDataId: s.dynamicDataId,
        dataSecret: s.dataSecret,
        actionName: 'add',
        payload: { address: a.evmAddress },
      });
      assert.equal(await isMember(t, s.dynamicDataId, a.platformAddress, { dataSecret: s.dataSecret }), true);
      // the SDK's older path form
      const alias = await t.request(
        'GET',
        `/api/v0/dynamicStore/${s.dynamicDataId}/${a.evmAddress}?dataSecret=${s.dataSecret}`,
      );
      assert.deepEqual(alias.json(), { key: a.platformAddress, inStore: true });
      await single(t, {
        dynamicDataId: s.dynamicDataId,
        dataSecret: s.dataSecret,
        actionName: 'remove',
        payload: { address: a.platformAddress },
      });
      assert.equal(await isMember(t, s.dynamicDataId, a.evmAddress, { dataSecret: s.dataSecret }), false);
      // reads of a private store need credentials
      assert.equal(
        (await t.request('GET', `/api/v0/dynamicStore/${s.dynamicDataId}/value?key=${a.evmAddress}`)).statusCode,
        401,
      );
      assert.equal(
        (await t.request('GET', `/api/v0/dynamicStore/${s.dynamicDataId}/value?key=${a.evmAddress}&dataSecret=x`))
          .statusCode,
        403,
      );
      assert.equal(
        (await t.request('GET', `/api/v0/dynamicStore/${s.dynamicDataId}/values?bookmark=`, { token: other.token }))
          .statusCode,
        403,
      );
    });

    test('members list pages in address order with exact hasMore and signed bookmarks', async () => {
      const s = await createStore(t, owner);
      const addrs = Array.from({ length: 60 }, () => randomAddress().platformAddress);
      await batch(t, { dynamicDataId: s.dynamicDataId, actions: addrs.map(add) }, owner.token);
      const first = (
        await t.request('GET', `/api/v0/dynamicStore/${s.dynamicDataId}/values?bookmark=`, { token: owner.token })
      ).json();
      assert.equal(first.lookupValues.length, 25);
      assert.equal(first.hasMore, true);
      assert.deepEqual(first.pagination, { bookmark: first.bookmark, hasMore: true });
      assert.deepEqual(await members(s), [...addrs].sort());
      // a bookmark from another store's list is refused
      const s2 = await createStore(t, owner);
      const foreign = await t.request(
        'GET',
        `/api/v0/dynamicStore/${s2.dynamicDataId}/values?bookmark=${encodeURIComponent(first.bookmark)}`,
        { token: owner.token },
      );
      assert.equal(foreign.statusCode, 400);
    });

    test('activity history: one entry per applied request, newest first, paginated; big batches split into 500-action docs', async () => {
      const s = await createStore(t, owner);
      const singles: string[] = [];
      for (let i = 0; i < 27; i++) {
        const a = randomAddress().platformAddress;
        singles.push(a);
        await single(
          t,
          { dynamicDataId: s.dynamicDataId, actionName: i % 2 ? 'remove' : 'add', payload: { address: a } },
          owner.token,
        );
      }
      const big = Array.from({ length: 1200 }, () => add(randomAddress().platformAddress));
      await batch(t, { dynamicDataId: s.dynamicDataId, dataSecret: s.dataSecret, actions: big });
      // rejected and simulated requests leave no trace
      await batch(t, { dynamicDataId: s.dynamicDataId, actions: [add('bad')] }, owner.token);
      await batch(
        t,
        { _isSimulation: true, dynamicDataId: s.dynamicDataId, actions: [add(randomAddress().platformAddress)] },
        owner.token,
      );

      const docs: {
        _docId: string;
        dynamicDataId: string;
        updatedAt: string;
        actions: { actionName: string; payload: { address: string } }[];
      }[] = [];
      let bookmark = '';
      for (;;) {
        const res = await t.request(
          'GET',
          `/api/v0/dynamicStores/activity?dynamicDataId=${s.dynamicDataId}&bookmark=${encodeURIComponent(bookmark)}&dataSecret=${s.dataSecret}`,
        );
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json();
        assert.deepEqual(body.pending, []);
        docs.push(...body.history.docs);
        assert.equal(body.history.pagination.hasMore, body.hasMore);
        if (!body.hasMore) break;
        bookmark = body.history.pagination.bookmark;
      }
      assert.equal(docs.length, 27 + 3);
      // newest first: the batch's three parts, last part first
      assert.deepEqual(
        docs.slice(0, 3).map((d) => d.actions.length),
        [200, 500, 500],
      );
      assert.deepEqual(
        docs
          .slice(0, 3)
          .reverse()
          .flatMap((d) => d.actions),
        big,
      );
      const singlesSeen = docs
        .slice(3)
        .reverse()
        .map((d) => (assert.equal(d.actions.length, 1), d.actions[0]));
      assert.deepEqual(
        singlesSeen,
        singles.map((a, i) => ({ actionName: i % 2 ? 'remove' : 'add', payload: { address: a } })),
      );
      assert.ok(docs.every((d) => d.dynamicDataId === s.dynamicDataId && /^\d+$/.test(d.updatedAt)));
      assert.equal(new Set(docs.map((d) => d._docId)).size, docs.length);
      // private store history needs credentials
      assert.equal(
        (await t.request('GET', `/api/v0/dynamicStores/activity?dynamicDataId=${s.dynamicDataId}`)).statusCode,
        401,
      );
      assert.equal(
        (await t.request('GET', `/api/v0/dynamicStores/activity?dynamicDataId=nope`, { token: owner.token }))
          .statusCode,
        404,
      );
    });
  });
});
