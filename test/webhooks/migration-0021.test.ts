// Migration 0021_webhook_delivery_origin on a database written before it: deliveries still to be
// sent get their endpoint origin (which the per-origin limit counts), history keeps none, and the
// loop takes a migrated delivery like a new one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import { startApp, type TestApp } from '../helpers/app.ts';
import { seedDatabaseAt } from '../helpers/seed-database.ts';
import { deliverDue } from '../../src/webhooks/deliver.ts';

describe('migration 0021_webhook_delivery_origin', () => {
  let t: TestApp;
  const now = Date.now();
  const row = (id: string, url: string, status: 'pending' | 'delivered') => ({
    delivery_id: id,
    plugin_id: 'p',
    claim_id: 'c',
    instance_id: id,
    claim_attempt_id: 'a',
    url,
    body_enc: 'x',
    headers_enc: null,
    status,
    attempts: 0,
    retries: 0,
    next_try_at: status === 'pending' ? now - 1000 : null,
    created_at: now - 1000,
  });

  before(async () => {
    const database = await seedDatabaseAt('0018_secret_key_check', async (db) => {
      // the table as it was before 0021 (no origin column): written untyped
      await (db as unknown as Kysely<any>)
        .insertInto('webhook_deliveries')
        .values([
          row('wh_pending', 'https://Plugin.Example.com:443/hook?x=1', 'pending'),
          row('wh_port', 'https://plugin.example.com:8443/other', 'pending'),
          row('wh_bad', 'not a url', 'pending'),
          row('wh_done', 'https://plugin.example.com/hook', 'delivered'),
        ])
        .execute();
    });
    t = await startApp({ database, env: { RUN_WORKER: 'false' } });
  });
  after(async () => {
    await t.close();
  });

  test('pending deliveries get their origin; delivered ones keep none; the loop takes them', async () => {
    const rows = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .select(['delivery_id', 'origin'])
      .orderBy('delivery_id')
      .execute();
    assert.deepEqual(rows, [
      { delivery_id: 'wh_bad', origin: 'not a url' },
      { delivery_id: 'wh_done', origin: '' },
      { delivery_id: 'wh_pending', origin: 'https://plugin.example.com' },
      { delivery_id: 'wh_port', origin: 'https://plugin.example.com:8443' },
    ]);
    // their plugin does not exist: each try gives up at once, which is a try all the same
    assert.deepEqual(await deliverDue(t.ctx), { taken: 3, delivered: 0, failed: 3 });
  });
});
