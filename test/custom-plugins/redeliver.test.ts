// Redelivering a delivered status webhook, over the public routes: the delivery is pending again
// and no longer shows a `deliveredAt` (a probe saw `"status":"pending"` next to the old time).
// `deliveredAt` is set exactly while the status is `delivered`: cleared by the redeliver, set
// again by the next 2xx, and left null when the new schedule's tries fail. The queue and the
// deliveries are drained by the test (RUN_WORKER=false, manual clock).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.ts';
import { startHttpsEndpoint, type HttpsEndpoint } from '../helpers/https-endpoint.ts';
import { createPlugin, owner, startPluginApp } from '../helpers/plugins.ts';
import type { SignedIn } from '../helpers/signin.ts';
import { attempt, claimWithPlugins, numUses, randomAddress } from '../claims/helpers.ts';
import { drainQueue } from '../../src/claims/queue.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { deliverDue } from '../../src/webhooks/deliver.ts';

describe('status webhooks: redeliver', () => {
  let t: TestApp;
  let ep: HttpsEndpoint;
  let alice: SignedIn;
  const clock = new ManualClock();
  before(async () => {
    ep = await startHttpsEndpoint();
    t = await startPluginApp({ env: { RUN_WORKER: 'false' }, clock });
    alice = await owner(t);
  });
  after(async () => {
    await t.close();
    await ep.close();
  });

  async function listed(pluginId: string) {
    const res = await t.request('GET', `/api/v0/plugins/deliveries?pluginId=${pluginId}&bookmark=`, { token: alice.accessToken });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().docs[0];
  }

  test('a redelivered delivery is pending with deliveredAt null until a new try is delivered', async () => {
    ep.respond(() => ({ status: 200, body: {} }));
    const pluginId = await createPlugin(t, alice.accessToken, ep.url, { receiveStatusWebhook: true });
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(5), { pluginId, instanceId: 'cp', version: '1', publicParams: {}, privateParams: {} }]);
    const res = await attempt(t, 'complete', claimId, randomAddress());
    assert.equal(res.statusCode, 200, res.body);
    const claimAttemptId = res.json().claimAttemptId as string;
    await drainQueue(t.ctx);
    const createdAt = clock.now();
    assert.deepEqual(await deliverDue(t.ctx), { taken: 1, delivered: 1, failed: 0 });
    const delivered = await listed(pluginId);
    assert.equal(delivered.status, 'delivered');
    assert.equal(delivered.deliveredAt, createdAt);

    clock.advance(60_000);
    const redelivered = await t.request('POST', '/api/v0/plugins/deliveries/redeliver', { token: alice.accessToken, body: { deliveryId: delivered.deliveryId } });
    assert.equal(redelivered.statusCode, 200, redelivered.body);
    const expected = {
      deliveryId: delivered.deliveryId,
      pluginId,
      claimId,
      claimAttemptId,
      instanceId: 'cp',
      status: 'pending',
      attempts: 1,
      nextTryAt: clock.now(),
      lastTryAt: createdAt,
      lastError: null,
      lastStatus: 200,
      deliveredAt: null,
      createdAt,
    };
    assert.deepEqual(redelivered.json(), { delivery: expected });
    assert.deepEqual(await listed(pluginId), expected);

    // the new schedule's try fails: still no deliveredAt
    ep.respond(() => ({ status: 503, body: { message: 'down' } }));
    assert.deepEqual(await deliverDue(t.ctx), { taken: 1, delivered: 0, failed: 1 });
    const failedTry = await listed(pluginId);
    assert.deepEqual([failedTry.status, failedTry.deliveredAt, failedTry.lastError], ['pending', null, 'the endpoint answered 503: down']);

    // its retry is delivered: deliveredAt is that try's time
    ep.respond(() => ({ status: 200, body: {} }));
    clock.advance(60 * 60_000);
    assert.deepEqual(await deliverDue(t.ctx), { taken: 1, delivered: 1, failed: 0 });
    const again = await listed(pluginId);
    assert.deepEqual([again.status, again.deliveredAt, again.attempts], ['delivered', clock.now(), 3]);
  });
});
