// From claim to webhook, over the public routes: a custom plugin with receiveStatusWebhook, a
// completed claim, exactly one delivery in the outbox (visible to the owner), sent by the worker
// pass signed with the plugin's current secret (rotated after the attempt), then retried on
// failure; a redelivered delivery is pending again. The queue and the deliveries are drained by
// the tests (RUN_WORKER=false).
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { startHttpsEndpoint, type HttpsEndpoint } from '../helpers/https-endpoint.ts';
import { createPlugin, owner, pluginSecret, updatePlugin } from '../helpers/plugins.ts';
import type { SignedIn } from '../helpers/signin.ts';
import { attempt, claimWithPlugins, numUses, randomAddress, status } from '../claims/helpers.ts';
import { drainQueue } from '../../src/claims/queue.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { deliverDue } from '../../src/webhooks/deliver.ts';
import { expectedSignature } from './helpers.ts';

describe('status webhooks end to end', () => {
  let ep: HttpsEndpoint;
  let alice: SignedIn;
  const clock = new ManualClock();
  before(async () => {
    ep = await startHttpsEndpoint();
  });
  const t = useApp({ plugins: true, env: { RUN_WORKER: 'false' }, clock });
  before(async () => {
    alice = await owner(t);
  });
  after(() => ep.close());

  async function deliveries(pluginId: string) {
    const res = await t.get(`/api/v0/plugins/deliveries?pluginId=${pluginId}&bookmark=`, { token: alice.accessToken });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  }

  test('complete → one delivery → signed with the current secret → retried until a 2xx', async () => {
    ep.respond(() => ({ status: 200, body: {} }));
    const pluginId = await createPlugin(t, alice.accessToken, ep.url, {
      receiveStatusWebhook: true,
      privateParamsSchema: [{ key: 'apiToken', label: 'token', type: 'string', required: true }],
    });
    const claimId = await claimWithPlugins(t, alice.accessToken, [
      numUses(5),
      { pluginId, instanceId: 'cp', version: '1', publicParams: {}, privateParams: { apiToken: 'tok-1' } },
    ]);
    const address = randomAddress();
    const res = await attempt(t, 'complete', claimId, address);
    assert.equal(res.statusCode, 200, res.body);
    const claimAttemptId = res.json().claimAttemptId as string;
    await drainQueue(t.ctx);
    assert.equal((await status(t, claimAttemptId)).success, true);

    // exactly one delivery, pending, nothing sent yet
    const callsBefore = ep.requests.length;
    const listed = await deliveries(pluginId);
    assert.equal(listed.total, 1);
    assert.equal(listed.docs[0].claimAttemptId, claimAttemptId);
    assert.equal(listed.docs[0].instanceId, 'cp');
    assert.equal(listed.docs[0].status, 'pending');
    assert.equal(listed.docs[0].attempts, 0);
    assert.equal(listed.docs[0].nextTryAt, clock.now());

    // the owner rotates the secret before the webhook goes out: the new one signs it
    const rotate = await updatePlugin(t, alice.accessToken, { pluginId, rotatePluginSecret: true });
    assert.equal(rotate.statusCode, 200, rotate.body);
    const secret = await pluginSecret(t, alice.accessToken, pluginId);

    ep.respond(() => ({ status: 502, body: { message: 'gateway down' } }));
    assert.deepEqual(await deliverDue(t.ctx), { taken: 1, delivered: 0, failed: 1 });
    let [doc] = (await deliveries(pluginId)).docs;
    assert.equal(doc.status, 'pending');
    assert.equal(doc.lastError, 'the endpoint answered 502: gateway down');
    assert.equal(doc.nextTryAt, clock.now() + 60 * 60_000);

    ep.respond(() => ({ status: 200, body: {} }));
    clock.advance(60 * 60_000);
    assert.deepEqual(await deliverDue(t.ctx), { taken: 1, delivered: 1, failed: 0 });
    [doc] = (await deliveries(pluginId)).docs;
    assert.equal(doc.status, 'delivered');
    assert.equal(doc.attempts, 2);

    const hooks = ep.requests.slice(callsBefore);
    assert.equal(hooks.length, 2, 'one failed try, one delivered try');
    const last = hooks[1]!;
    assert.equal(last.json._attemptStatus, 'success');
    assert.equal(last.json.claimAttemptId, claimAttemptId);
    assert.equal(last.json.claimId, claimId);
    assert.equal(last.json.instanceId, 'cp');
    assert.equal(last.json.apiToken, 'tok-1');
    assert.equal(last.json.pluginSecret, secret);
    assert.equal(last.headers['x-platform-timestamp'], String(clock.now()));
    assert.equal(last.headers['x-platform-signature'], expectedSignature(secret, String(clock.now()), last.rawBody));
    // and never again
    clock.advance(30 * 24 * 60 * 60_000);
    assert.equal((await deliverDue(t.ctx)).taken, 0);
  });

  // a probe saw `"status":"pending"` next to the old `deliveredAt`: it is set exactly while the
  // status is `delivered` (cleared by the redeliver, set again by the next 2xx)
  test('a redelivered delivery is pending with deliveredAt null until a new try is delivered', async () => {
    alice = await owner(t); // the clock ran a month in the test above: a fresh session
    ep.respond(() => ({ status: 200, body: {} }));
    const pluginId = await createPlugin(t, alice.accessToken, ep.url, { receiveStatusWebhook: true });
    const claimId = await claimWithPlugins(t, alice.accessToken, [
      numUses(5),
      { pluginId, instanceId: 'cp', version: '1', publicParams: {}, privateParams: {} },
    ]);
    const res = await attempt(t, 'complete', claimId, randomAddress());
    assert.equal(res.statusCode, 200, res.body);
    const claimAttemptId = res.json().claimAttemptId as string;
    await drainQueue(t.ctx);
    const createdAt = clock.now();
    assert.deepEqual(await deliverDue(t.ctx), { taken: 1, delivered: 1, failed: 0 });
    const delivered = (await deliveries(pluginId)).docs[0];
    assert.equal(delivered.status, 'delivered');
    assert.equal(delivered.deliveredAt, createdAt);

    clock.advance(60_000);
    const redelivered = await t.request('POST', '/api/v0/plugins/deliveries/redeliver', {
      token: alice.accessToken,
      body: { deliveryId: delivered.deliveryId },
    });
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
    assert.deepEqual((await deliveries(pluginId)).docs[0], expected);

    // the new schedule's try fails: still no deliveredAt
    ep.respond(() => ({ status: 503, body: { message: 'down' } }));
    assert.deepEqual(await deliverDue(t.ctx), { taken: 1, delivered: 0, failed: 1 });
    const failedTry = (await deliveries(pluginId)).docs[0];
    assert.deepEqual(
      [failedTry.status, failedTry.deliveredAt, failedTry.lastError],
      ['pending', null, 'the endpoint answered 503: down'],
    );

    // its retry is delivered: deliveredAt is that try's time
    ep.respond(() => ({ status: 200, body: {} }));
    clock.advance(60 * 60_000);
    assert.deepEqual(await deliverDue(t.ctx), { taken: 1, delivered: 1, failed: 0 });
    const again = (await deliveries(pluginId)).docs[0];
    assert.deepEqual([again.status, again.deliveredAt, again.attempts], ['delivered', clock.now(), 3]);
  });
});
