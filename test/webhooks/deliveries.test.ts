// Status webhook deliveries against a real local HTTPS endpoint, with a manual clock driving the
// retry schedule. The worker is off (RUN_WORKER=false); each test runs the loop's pass
// (deliverDue) itself, so it decides when time moves and when a try happens.
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { startHttpsEndpoint, type HttpsEndpoint } from '../helpers/https-endpoint.ts';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import type { ManualClock } from '../../src/shared/clock.ts';
import { deliverDue } from '../../src/webhooks/deliver.ts';
import { MAX_TRIES } from '../../src/webhooks/outbox.ts';
import { egressTestEnv, enqueue, expectedSignature, insertPlugin, newDelivery, rotateSecret } from './helpers.ts';

const HOUR = 60 * 60_000;
const DAY = 24 * HOUR;

describe('status webhook deliveries', () => {
  let clock: ManualClock;
  let endpoint: HttpsEndpoint;
  let owner: SignedIn;

  before(async () => {
    endpoint = await startHttpsEndpoint();
  });
  const t = useApp({ env: { ...egressTestEnv(), RUN_WORKER: 'false' }, clock: true });
  before(async () => {
    clock = t.clock as ManualClock;
    owner = await signIn(t, { scopes: ['managePlugins'] });
    signedInAt = clock.now();
  });
  after(() => endpoint.close());

  let signedInAt = 0;
  /** The owner's access token, signed in again once the manual clock has moved past half its day. */
  async function ownerToken(): Promise<string> {
    if (clock.now() - signedInAt > 12 * HOUR) {
      owner = await signIn(t, { privateKey: owner.privateKey, scopes: ['managePlugins'] });
      signedInAt = clock.now();
    }
    return owner.accessToken;
  }

  async function deliveries(pluginId: string, token?: string, bookmark = '') {
    token ??= await ownerToken();
    const res = await t.get(
      `/api/v0/plugins/deliveries?pluginId=${pluginId}&bookmark=${encodeURIComponent(bookmark)}`,
      {
        token,
      },
    );
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  }

  test('a delivery is the exact payload, signed with the plugin secret over `<timestamp>.<body bytes>`', async () => {
    endpoint.respond(() => ({ status: 204 }));
    const { pluginId, secret } = await insertPlugin(t, owner.platformAddress);
    const d = newDelivery(pluginId, `${endpoint.url}?plugin=${pluginId}`);
    await enqueue(t, [d]);
    // enqueued, not tried yet: due now, nothing tried or delivered
    const queued = (await deliveries(pluginId)).docs[0];
    assert.deepEqual(
      {
        status: queued.status,
        attempts: queued.attempts,
        nextTryAt: queued.nextTryAt,
        lastTryAt: queued.lastTryAt,
        lastStatus: queued.lastStatus,
        lastError: queued.lastError,
        deliveredAt: queued.deliveredAt,
      },
      {
        status: 'pending',
        attempts: 0,
        nextTryAt: clock.now(),
        lastTryAt: null,
        lastStatus: null,
        lastError: null,
        deliveredAt: null,
      },
    );
    const before = endpoint.requests.length;
    const sentAt = clock.now();
    assert.deepEqual(await deliverDue(t.ctx), { taken: 1, delivered: 1, failed: 0 });
    assert.equal(endpoint.requests.length, before + 1);
    const got = endpoint.requests.at(-1)!;
    assert.equal(got.method, 'POST');
    assert.equal(got.path, `/hook?plugin=${pluginId}`);
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['x-platform-version'], '1');
    assert.equal(got.headers['x-platform-timestamp'], String(sentAt));
    assert.equal(got.headers['x-platform-signature'], expectedSignature(secret, String(sentAt), got.rawBody));
    // the payload as enqueued, with the plugin's secret in its pluginSecret field
    assert.deepEqual(got.json, { ...d.body, pluginSecret: secret });
    assert.equal(endpoint.requests.at(-1)!.json._attemptStatus, 'success');
    const page = await deliveries(pluginId);
    assert.equal(page.total, 1);
    assert.deepEqual(page.docs[0], {
      deliveryId: page.docs[0].deliveryId,
      pluginId,
      claimId: 'claim-1',
      claimAttemptId: d.claimAttemptId,
      instanceId: 'hook',
      status: 'delivered',
      attempts: 1,
      nextTryAt: null,
      lastTryAt: sentAt,
      lastError: null,
      lastStatus: 204,
      deliveredAt: sentAt,
      createdAt: sentAt,
    });
    // nothing is due any more
    clock.advance(30 * DAY);
    assert.equal((await deliverDue(t.ctx)).taken, 0);
  });

  test('headerField values travel as headers, encrypted at rest', async () => {
    endpoint.respond(() => ({ status: 200, body: {} }));
    const { pluginId, secret } = await insertPlugin(t, owner.platformAddress);
    const d = { ...newDelivery(pluginId, endpoint.url), headers: { 'x-partner-key': 'private-header-value' } };
    await enqueue(t, [d]);
    const row = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .select('headers_enc')
      .where('claim_attempt_id', '=', d.claimAttemptId)
      .executeTakeFirstOrThrow();
    assert.ok(row.headers_enc && !row.headers_enc.includes('private-header-value'));
    assert.equal((await deliverDue(t.ctx)).delivered, 1);
    const got = endpoint.requests.at(-1)!;
    assert.equal(got.headers['x-partner-key'], 'private-header-value');
    assert.equal(
      got.headers['x-platform-signature'],
      expectedSignature(secret, got.headers['x-platform-timestamp'] as string, got.rawBody),
    );
  });

  test('the payload is encrypted at rest and stored without the secret', async () => {
    const { pluginId } = await insertPlugin(t, owner.platformAddress);
    const d = newDelivery(pluginId, endpoint.url);
    await enqueue(t, [d]);
    const row = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('claim_attempt_id', '=', d.claimAttemptId)
      .executeTakeFirstOrThrow();
    assert.ok(!row.body_enc.includes('hidden') && !row.body_enc.includes('secret-at-call-time'));
    assert.deepEqual(JSON.parse(t.ctx.keyring.decrypt(row.body_enc)), { ...d.body, pluginSecret: '' });
    await deliverDue(t.ctx);
  });

  test('one delivery per attempt and instance, however often it is enqueued', async () => {
    const { pluginId } = await insertPlugin(t, owner.platformAddress);
    const d = newDelivery(pluginId, endpoint.url);
    await enqueue(t, [d]);
    await enqueue(t, [d, newDelivery(pluginId, endpoint.url, d.claimAttemptId, 'other')]);
    const page = await deliveries(pluginId);
    assert.equal(page.total, 2);
    assert.deepEqual(page.docs.map((x) => x.instanceId).sort(), ['hook', 'other']);
    await deliverDue(t.ctx);
  });

  test('a rotated secret signs the tries that follow (current secret, fresh timestamp each try)', async () => {
    endpoint.respond(() => ({ status: 500, body: { message: 'not yet' } }));
    const { pluginId, secret } = await insertPlugin(t, owner.platformAddress);
    await enqueue(t, [newDelivery(pluginId, endpoint.url)]);
    await deliverDue(t.ctx);
    const first = endpoint.requests.at(-1)!;
    assert.equal(
      first.headers['x-platform-signature'],
      expectedSignature(secret, first.headers['x-platform-timestamp'] as string, first.rawBody),
    );
    const rotated = await rotateSecret(t, pluginId);
    endpoint.respond(() => ({ status: 200, body: {} }));
    clock.advance(HOUR);
    assert.equal((await deliverDue(t.ctx)).delivered, 1);
    const second = endpoint.requests.at(-1)!;
    assert.equal(second.headers['x-platform-timestamp'], String(clock.now()));
    assert.notEqual(second.headers['x-platform-timestamp'], first.headers['x-platform-timestamp']);
    assert.equal(
      second.headers['x-platform-signature'],
      expectedSignature(rotated, String(clock.now()), second.rawBody),
    );
    assert.equal(second.json.pluginSecret, rotated);
  });

  test(`retries at 1 h × 2^n, each delay capped at 7 days, and gives up after ${MAX_TRIES} tries; redeliver starts again`, async () => {
    endpoint.respond(() => ({ status: 500, body: { message: 'boom' } }));
    const { pluginId } = await insertPlugin(t, owner.platformAddress);
    const d = newDelivery(pluginId, endpoint.url);
    await enqueue(t, [d]);
    const expectedDelays = [1, 2, 4, 8, 16, 32, 64, 128, 168].map((h) => h * HOUR);
    const sent = () => endpoint.requests.filter((r) => r.json?.claimAttemptId === d.claimAttemptId).length;
    for (let tryNo = 1; tryNo <= MAX_TRIES; tryNo++) {
      assert.deepEqual(await deliverDue(t.ctx), { taken: 1, delivered: 0, failed: 1 });
      assert.equal(sent(), tryNo);
      const [doc] = (await deliveries(pluginId)).docs;
      assert.equal(doc.attempts, tryNo);
      assert.equal(doc.lastError, 'the endpoint answered 500: boom');
      assert.equal(doc.lastStatus, 500);
      if (tryNo === MAX_TRIES) {
        assert.equal(doc.status, 'failed');
        assert.equal(doc.nextTryAt, null);
        break;
      }
      const delay = expectedDelays[tryNo - 1]!;
      assert.equal(doc.status, 'pending');
      assert.equal(doc.nextTryAt, clock.now() + delay, `delay after try ${tryNo}`);
      clock.advance(delay - 1);
      assert.equal((await deliverDue(t.ctx)).taken, 0, `not due 1 ms before the delay after try ${tryNo}`);
      clock.advance(1);
    }
    // given up: never sent again
    clock.advance(60 * DAY);
    assert.equal((await deliverDue(t.ctx)).taken, 0);
    assert.equal(sent(), MAX_TRIES);

    // the owner redelivers: an immediate try, a fresh schedule
    endpoint.respond(() => ({ status: 200, body: {} }));
    const { deliveryId } = (await deliveries(pluginId)).docs[0];
    const res = await t.request('POST', '/api/v0/plugins/deliveries/redeliver', {
      token: await ownerToken(),
      body: { deliveryId },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().delivery.status, 'pending');
    assert.equal(res.json().delivery.nextTryAt, clock.now());
    assert.deepEqual(await deliverDue(t.ctx), { taken: 1, delivered: 1, failed: 0 });
    const [doc] = (await deliveries(pluginId)).docs;
    assert.equal(doc.status, 'delivered');
    assert.equal(doc.attempts, MAX_TRIES + 1);
    assert.equal(doc.lastError, null);
    assert.equal(sent(), MAX_TRIES + 1);
  });

  test('a refused address, a redirect or a timeout is a failed try with its reason', async () => {
    const { pluginId } = await insertPlugin(t, owner.platformAddress);
    endpoint.respond(() => ({ status: 307, headers: { location: 'https://169.254.169.254/' } }));
    await enqueue(t, [newDelivery(pluginId, 'https://10.0.0.1/hook'), newDelivery(pluginId, endpoint.url)]);
    assert.deepEqual(await deliverDue(t.ctx), { taken: 2, delivered: 0, failed: 2 });
    const errors = (await deliveries(pluginId)).docs.map((x) => x.lastError).sort();
    assert.deepEqual(errors, [
      '10.0.0.1 is a private address (RFC 1918); only public addresses may be called',
      'the endpoint answered 307 (a redirect to https://169.254.169.254/); redirects are not followed',
    ]);
  });

  test('a delivery of a deleted plugin is given up at once', async () => {
    const { pluginId } = await insertPlugin(t, owner.platformAddress);
    await enqueue(t, [newDelivery(pluginId, endpoint.url)]);
    await t.ctx.db
      .updateTable('plugin_docs')
      .set({ deleted_at: clock.now() })
      .where('plugin_id', '=', pluginId)
      .execute();
    const before = endpoint.requests.length;
    assert.deepEqual(await deliverDue(t.ctx), { taken: 1, delivered: 0, failed: 1 });
    assert.equal(endpoint.requests.length, before);
    const row = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('plugin_id', '=', pluginId)
      .executeTakeFirstOrThrow();
    assert.equal(row.status, 'failed');
    assert.equal(row.last_error, 'the plugin was deleted');
  });

  test('a delivery being sent cannot be redelivered concurrently (409)', async () => {
    const { pluginId } = await insertPlugin(t, owner.platformAddress);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let arrived!: () => void;
    const arrival = new Promise<void>((r) => (arrived = r));
    endpoint.respond(async () => {
      arrived();
      await held;
      return { status: 200, body: {} };
    });
    await enqueue(t, [newDelivery(pluginId, endpoint.url)]);
    const pass = deliverDue(t.ctx);
    // a pass that never reaches the endpoint fails here, instead of leaving the test waiting
    await Promise.race([
      arrival,
      pass.then((r) => assert.fail(`the pass ended without calling the endpoint: ${JSON.stringify(r)}`)),
    ]);
    const { deliveryId } = (await deliveries(pluginId)).docs[0];
    const res = await t.request('POST', '/api/v0/plugins/deliveries/redeliver', {
      token: await ownerToken(),
      body: { deliveryId },
    });
    assert.equal(res.statusCode, 409, res.body);
    assert.match(res.json().errorMessage, /is being sent right now/);
    release();
    assert.equal((await pass).delivered, 1);
  });

  test('owner tools: session with managePlugins, creator or manager only; pages with bookmarks', async () => {
    const { pluginId } = await insertPlugin(t, owner.platformAddress);
    endpoint.respond(() => ({ status: 200, body: {} }));
    await enqueue(
      t,
      Array.from({ length: 30 }, () => newDelivery(pluginId, endpoint.url)),
    );
    const path = `/api/v0/plugins/deliveries?pluginId=${pluginId}`;
    await ownerToken();

    const anonymous = await t.request('GET', path);
    assert.equal(anonymous.statusCode, 401);
    const noScope = await signIn(t, { privateKey: owner.privateKey, scopes: ['manageClaims'] });
    const wrongScope = await t.request('GET', path, { token: noScope.accessToken });
    assert.equal(wrongScope.statusCode, 403);
    assert.match(wrongScope.json().errorMessage, /managePlugins/);
    const stranger = await signIn(t, { scopes: ['managePlugins'] });
    const notOwner = await t.request('GET', path, { token: stranger.accessToken });
    assert.equal(notOwner.statusCode, 403);
    assert.match(notOwner.json().errorMessage, new RegExp(`Only the creator or manager of plugin ${pluginId}`));
    const missing = await t.request('GET', '/api/v0/plugins/deliveries?pluginId=no-such-plugin', {
      token: owner.accessToken,
    });
    assert.equal(missing.statusCode, 404);
    const noPlugin = await t.request('GET', '/api/v0/plugins/deliveries', { token: owner.accessToken });
    assert.equal(noPlugin.statusCode, 400);

    const first = await deliveries(pluginId);
    assert.equal(first.total, 30);
    assert.equal(first.docs.length, 25);
    assert.equal(first.hasMore, true);
    const second = await deliveries(pluginId, owner.accessToken, first.bookmark);
    assert.equal(second.docs.length, 5);
    assert.equal(second.hasMore, false);
    assert.equal(second.bookmark, '');
    assert.equal(new Set([...first.docs, ...second.docs].map((x) => x.deliveryId)).size, 30);
    const forged = await t.request('GET', `${path}&bookmark=abc.def`, { token: owner.accessToken });
    assert.equal(forged.statusCode, 400);

    const deliveryId = first.docs[0].deliveryId;
    const redeliver = (token: string, body: unknown) =>
      t.request('POST', '/api/v0/plugins/deliveries/redeliver', { token, body });
    assert.equal((await redeliver(stranger.accessToken, { deliveryId })).statusCode, 403);
    assert.equal((await redeliver(noScope.accessToken, { deliveryId })).statusCode, 403);
    assert.equal((await redeliver(owner.accessToken, { deliveryId: 'wh_nope' })).statusCode, 404);
    assert.equal((await redeliver(owner.accessToken, {})).statusCode, 400);
    assert.equal((await redeliver(owner.accessToken, { deliveryId })).statusCode, 200);
    // drain what this test enqueued
    while ((await deliverDue(t.ctx)).taken > 0);
  });
});
