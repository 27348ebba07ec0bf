// The reference client's dynamic store calls, unchanged, against a running service: create,
// update, fetch, search, read, actions (single and batch), membership, members, activity, delete,
// each with one refusal.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import { randomAddress } from '../claims/helpers.ts';
import { refusal, sdkClient, type SdkClient } from './sdk.ts';

describe('reference client: dynamic stores', () => {
  let alice: SignedIn;
  let sdk: SdkClient;
  let aliceSdk: SdkClient;
  const t = useApp({ listen: true });
  before(async () => {
    alice = await signIn(t, { scopes: ['manageDynamicStores'] });
    sdk = sdkClient(t);
    aliceSdk = sdkClient(t, alice.accessToken);
  });

  test('a store through the client, from creation to deletion', async () => {
    const api = aliceSdk.api;
    const { doc } = await api.createDynamicDataStore({ handlerId: 'addresses', label: 'sdk list' });
    const id = doc.dynamicDataId;
    const secret = doc.dataSecret!;
    assert.match(id, /^[0-9a-f]{32}$/);
    const updated = await api.updateDynamicDataStore({ dynamicDataId: id, label: 'sdk list 2' } as never);
    assert.equal(updated.doc.label, 'sdk list 2');
    const [a, b, c] = [randomAddress(), randomAddress(), randomAddress()];
    await sdk.api.performStoreAction({
      dynamicDataId: id,
      dataSecret: secret,
      actionName: 'add',
      payload: { address: a },
    } as never);
    await api.performBatchStoreAction({
      dynamicDataId: id,
      actions: [
        { actionName: 'add', payload: { address: b } },
        { actionName: 'add', payload: { address: c } },
        { actionName: 'remove', payload: { address: c } },
      ],
    } as never);
    assert.equal((await sdk.api.getDynamicDataStoreValue(id, { key: a, dataSecret: secret })).inStore, true);
    assert.equal((await sdk.api.getDynamicDataStoreValue(id, { key: c, dataSecret: secret })).inStore, false);
    const values = await sdk.api.getDynamicDataStoreValuesPaginated(id, { dataSecret: secret });
    assert.deepEqual((values.lookupValues as Array<{ key: string }>).map((v) => v.key).sort(), [a, b].sort());
    const one = await sdk.api.getDynamicDataStore(id, { dataSecret: secret } as never);
    assert.deepEqual([one.doc.label, one.doc.dataSecret], ['sdk list 2', undefined]);
    const many = await sdk.api.getDynamicDataStores({ dynamicDataIds: [id, 'f'.repeat(32)], dataSecret: secret });
    assert.deepEqual(
      many.docs.map((d) => d?.dynamicDataId ?? null),
      [id, null],
    );
    const mine = await api.searchDynamicDataStores({});
    assert.deepEqual(
      mine.docs.map((d) => d?.dynamicDataId),
      [id],
    );
    const activity = await sdk.api.getDynamicDataActivity({ dynamicDataId: id, dataSecret: secret });
    assert.deepEqual(activity.pending, []);
    assert.equal((activity.history as { docs: unknown[] }).docs.length, 2, 'one document per applied request');
    await api.deleteDynamicDataStore({ dynamicDataId: id });

    // refusals, one per call
    const wrong = { errorMessage: 'Invalid data secret' };
    const noSession = {
      errorMessage:
        'Unauthorized request. This route requires a signed-in session (Authorization: Bearer <access token>).',
      unauthorized: true,
    };
    const noSecret = {
      errorMessage:
        "Reading this store requires a session of the store's creator or manager (scope manageDynamicStores) or the store's dataSecret",
      unauthorized: true,
    };
    const other = randomAddress();
    assert.deepEqual(await refusal(api.createDynamicDataStore({ handlerId: 'numbers', label: 'x' })), {
      errorMessage: 'Invalid handlerId: "numbers". The only supported handler is "addresses".',
    });
    const { doc: live } = await api.createDynamicDataStore({ handlerId: 'addresses', label: 'second' });
    const lid = live.dynamicDataId;
    assert.deepEqual(
      await refusal(sdk.api.updateDynamicDataStore({ dynamicDataId: lid, label: 'y' } as never)),
      noSession,
    );
    assert.deepEqual(
      await refusal(
        sdk.api.performStoreAction({
          dynamicDataId: lid,
          dataSecret: '0'.repeat(64),
          actionName: 'add',
          payload: { address: other },
        } as never),
      ),
      wrong,
    );
    assert.deepEqual(
      await refusal(
        api.performBatchStoreAction({
          dynamicDataId: lid,
          actions: [{ actionName: 'delete', payload: { address: other } }],
        } as never),
      ),
      { errorMessage: 'Invalid actions[0].actionName: "delete" is not an action (use "add" or "remove")' },
    );
    assert.deepEqual(
      await refusal(sdk.api.getDynamicDataStoreValue(lid, { key: other, dataSecret: '0'.repeat(64) })),
      wrong,
    );
    assert.deepEqual(await refusal(sdk.api.getDynamicDataStoreValuesPaginated(lid, {})), noSecret);
    assert.deepEqual(await refusal(sdk.api.getDynamicDataStore(lid, { dataSecret: '0'.repeat(64) } as never)), wrong);
    assert.deepEqual(await refusal(sdk.api.getDynamicDataStores({ dynamicDataIds: [] })), {
      errorMessage: 'body.dynamicDataIds must NOT have fewer than 1 items',
    });
    assert.deepEqual(await refusal(sdk.api.searchDynamicDataStores({})), noSession);
    assert.deepEqual(await refusal(sdk.api.getDynamicDataActivity({ dynamicDataId: lid })), noSecret);
    assert.deepEqual(await refusal(api.deleteDynamicDataStore({ dynamicDataId: id })), {
      errorMessage: `Dynamic data doc not found: ${id}`,
    });
  });
});
