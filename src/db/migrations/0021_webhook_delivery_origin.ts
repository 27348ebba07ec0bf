// Each webhook delivery's endpoint origin (scheme, host, port), so the delivery loop can limit the
// deliveries in flight per origin and lease a slow origin's backlog apart from everyone else's
// (src/webhooks/deliver.ts). Rows already queued get theirs computed from their URL here.
import type { Kysely } from 'kysely';
import { originOf } from '../../webhooks/origin.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('webhook_deliveries')
    .addColumn('origin', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  // only deliveries that may still be sent need it; delivered and failed ones are history
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select(['delivery_id', 'url'])
    .where('status', '=', 'pending')
    .execute();
  for (const r of rows as Array<{ delivery_id: string; url: string }>) {
    await db
      .updateTable('webhook_deliveries')
      .set({ origin: originOf(r.url) })
      .where('delivery_id', '=', r.delivery_id)
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').dropColumn('origin').execute();
}
