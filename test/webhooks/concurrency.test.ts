// Delivery concurrency per endpoint origin: a pass takes at most PER_ORIGIN deliveries of one
// origin and never more than it asked for (on PostgreSQL the old lease took every due row), and
// the running loop sends a healthy origin's delivery while another origin's deliveries hang.
// Conditions are waited on; nothing here is timed.
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { startHttpsEndpoint, type HttpsEndpoint } from '../helpers/https-endpoint.ts';
import { freePort } from '../helpers/process.ts';
import type { ManualClock } from '../../src/shared/clock.ts';
import { deliverDue, PER_ORIGIN, startDeliveries } from '../../src/webhooks/deliver.ts';
import { egressTestEnv, enqueue, insertPlugin, newDelivery } from './helpers.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

const until = async (what: string, cond: () => boolean | Promise<boolean>) => {
  // generous: only a loop that never gets there fails, however loaded the machine
  const giveUpAt = Date.now() + PATIENCE_MS;
  while (!(await cond())) {
    if (Date.now() > giveUpAt) assert.fail(`still waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('webhook delivery concurrency', () => {
  let endpoint: HttpsEndpoint;

  before(async () => {
    endpoint = await startHttpsEndpoint();
    // a manual clock: deliveries enqueued one after another are due one after another
  });
  const t = useApp({ env: { ...egressTestEnv(), RUN_WORKER: 'false' }, clock: true });
  after(() => endpoint.close());

  const drain = async () => {
    endpoint.respond(() => ({ status: 200, body: {} }));
    while ((await deliverDue(t.ctx)).taken > 0);
  };

  test(`a pass takes at most ${PER_ORIGIN} deliveries of one origin, in order, and the rest later`, async () => {
    const { pluginId } = await insertPlugin(t, 'owner-1');
    endpoint.respond(() => ({ status: 200, body: {} }));
    const queued = Array.from({ length: 40 }, (_, i) => newDelivery(pluginId, `${endpoint.url}?n=${i}`));
    for (const d of queued) {
      await enqueue(t, [d]);
      (t.clock as ManualClock).advance(1);
    }
    const before = endpoint.requests.length;
    assert.deepEqual(await deliverDue(t.ctx), { taken: PER_ORIGIN, delivered: PER_ORIGIN, failed: 0 });
    assert.deepEqual(
      endpoint.requests
        .slice(before)
        .map((r) => r.path)
        .sort(),
      Array.from({ length: PER_ORIGIN }, (_, i) => `/hook?n=${i}`).sort(),
    );
    await drain();
    assert.equal(endpoint.requests.length, before + 40);
  });

  test('a pass over many origins takes 32 deliveries, never every due one (the PostgreSQL lease took all 40)', async () => {
    const { pluginId } = await insertPlugin(t, 'owner-2');
    // ten origins (ports nobody listens on: each try fails at once), four deliveries each
    const ports = await Promise.all(Array.from({ length: 10 }, () => freePort()));
    await enqueue(
      t,
      ports.flatMap((port) => Array.from({ length: 4 }, () => newDelivery(pluginId, `https://127.0.0.1:${port}/hook`))),
    );
    assert.deepEqual(await deliverDue(t.ctx), { taken: 32, delivered: 0, failed: 32 });
    assert.deepEqual(await deliverDue(t.ctx), { taken: 8, delivered: 0, failed: 8 });
    const tried = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .select(['attempts', 'last_error'])
      .where('plugin_id', '=', pluginId)
      .execute();
    assert.equal(tried.length, 40);
    for (const r of tried) {
      assert.equal(Number(r.attempts), 1);
      assert.match(r.last_error ?? '', /^the call failed \(ECONNREFUSED: connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/);
    }
  });

  test("the loop sends a healthy origin's delivery while another origin has many hanging deliveries queued", async () => {
    const { pluginId } = await insertPlugin(t, 'owner-3');
    // the hanging origin: `localhost` on the shared endpoint, which holds every request until released
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    endpoint.respond(async () => {
      await held;
      return { status: 200, body: {} };
    });
    const hangingUrl = `https://localhost:${endpoint.port}/hook`;
    const healthy = await startHttpsEndpoint();
    const loop = startDeliveries(t.ctx, { pollMs: 20 });
    try {
      const before = endpoint.requests.length;
      await enqueue(
        t,
        Array.from({ length: 60 }, () => newDelivery(pluginId, hangingUrl)),
      );
      await until(`${PER_ORIGIN} hanging deliveries in flight`, () => endpoint.requests.length - before === PER_ORIGIN);

      const d = newDelivery(pluginId, `${healthy.url}?healthy`);
      await enqueue(t, [d]);
      await until('the healthy delivery to arrive', () => healthy.requests.length === 1);
      assert.equal(healthy.requests[0]!.json.claimAttemptId, d.claimAttemptId);
      // it went out while the first hanging ones were still held: none of them has ended, and no
      // more than the per-origin limit were ever sent to the hanging origin
      assert.equal(endpoint.requests.length - before, PER_ORIGIN);
      const ended = await t.ctx.db
        .selectFrom('webhook_deliveries')
        .select('delivery_id')
        .where('url', '=', hangingUrl)
        .where('attempts', '>', 0)
        .execute();
      assert.deepEqual(ended, []);
      await until('the healthy delivery to be recorded', async () => {
        const row = await t.ctx.db
          .selectFrom('webhook_deliveries')
          .select('status')
          .where('claim_attempt_id', '=', d.claimAttemptId)
          .executeTakeFirstOrThrow();
        return row.status === 'delivered';
      });

      // released, the hanging origin's backlog drains through the same loop, PER_ORIGIN at a time
      release();
      await until('the backlog to be delivered', async () => {
        const left = await t.ctx.db
          .selectFrom('webhook_deliveries')
          .select('delivery_id')
          .where('url', '=', hangingUrl)
          .where('status', '!=', 'delivered')
          .execute();
        return left.length === 0;
      });
      assert.equal(endpoint.requests.length - before, 60);
    } finally {
      release();
      await loop.stop();
      await healthy.close();
      await drain();
    }
  });
});
