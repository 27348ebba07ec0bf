// Owner tools for status webhooks. Both routes need the API key and a session with
// managePlugins whose address is the plugin's creator or manager:
//   GET  /api/v0/plugins/deliveries?pluginId&bookmark     deliveries, newest first
//   POST /api/v0/plugins/deliveries/redeliver { deliveryId }  an immediate try, fresh schedule
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Routes } from '../shared/capability.ts';
import type { AppContext } from '../context.ts';
import { isPluginOwner } from '../plugin-documents/storage.ts';
import { conflict, forbidden, notFound } from '../shared/errors.ts';
import { mapPage, newestFirst, paginate } from '../shared/pagination.ts';
import { Bookmark, errorResponses } from '../shared/schemas.ts';
import { requireSession, type Session } from '../shared/session.ts';
import { DELIVERY_VIEW_COLUMNS, deliveryView, redeliver } from './outbox.ts';

const tags = ['plugins'];
const SCOPE = 'managePlugins';

const Millis = Type.Integer({ description: 'UNIX ms' });
const Delivery = Type.Object(
  {
    deliveryId: Type.String(),
    pluginId: Type.String(),
    claimId: Type.String(),
    claimAttemptId: Type.String(),
    instanceId: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')], {
      description:
        "'pending' (waiting for its next try, or being sent), 'delivered' (a 2xx), 'failed' (given up after the last try)",
    }),
    attempts: Type.Integer({ description: 'Tries made so far, redeliveries included' }),
    nextTryAt: Type.Union([Millis, Type.Null()]),
    lastTryAt: Type.Union([Millis, Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    lastStatus: Type.Union([Type.Integer(), Type.Null()], {
      description: 'HTTP status of the last try; null when no response came',
    }),
    deliveredAt: Type.Union([Millis, Type.Null()]),
    createdAt: Millis,
  },
  { additionalProperties: false },
);
const DeliveriesQuery = Type.Object(
  { pluginId: Type.String({ minLength: 1, maxLength: 200 }), bookmark: Type.Optional(Bookmark) },
  { additionalProperties: false },
);
const DeliveriesResponse = Type.Object(
  { docs: Type.Array(Delivery), bookmark: Type.String(), hasMore: Type.Boolean(), total: Type.Integer() },
  { additionalProperties: false },
);
const RedeliverBody = Type.Object(
  { deliveryId: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);
const RedeliverResponse = Type.Object({ delivery: Delivery }, { additionalProperties: false });

async function requireOwner(ctx: AppContext, session: Session, pluginId: string): Promise<void> {
  if (await isPluginOwner(ctx.db, pluginId, session.platformAddress)) return;
  const exists = await ctx.db
    .selectFrom('plugin_docs')
    .select('plugin_id')
    .where('plugin_id', '=', pluginId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!exists) throw notFound(`Plugin ${pluginId} not found`);
  throw forbidden(`Only the creator or manager of plugin ${pluginId} may see or redeliver its webhook deliveries`);
}

async function readDelivery(ctx: AppContext, deliveryId: string) {
  const row = await ctx.db
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_VIEW_COLUMNS)
    .where('delivery_id', '=', deliveryId)
    .executeTakeFirst();
  return row ? deliveryView(row) : null;
}

export const webhooks: Routes = {
  register(fastify, ctx) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/api/v0/plugins/deliveries',
      {
        schema: {
          tags,
          summary:
            "A plugin's status webhook deliveries, newest first (creator or manager, session with managePlugins)",
          querystring: DeliveriesQuery,
          response: { 200: DeliveriesResponse, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => {
        const session = await requireSession(request, SCOPE);
        const { pluginId, bookmark } = request.query;
        await requireOwner(ctx, session, pluginId);
        const [page, count] = await Promise.all([
          paginate({
            query: ctx.db
              .selectFrom('webhook_deliveries')
              .select(DELIVERY_VIEW_COLUMNS)
              .where('plugin_id', '=', pluginId),
            keys: newestFirst('delivery_id'),
            bookmark,
            keyring: ctx.keyring,
            scope: `webhook-deliveries|${pluginId}`,
          }),
          ctx.db
            .selectFrom('webhook_deliveries')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('plugin_id', '=', pluginId)
            .executeTakeFirstOrThrow(),
        ]);
        return {
          ...mapPage(page, deliveryView),
          total: Number(count.n),
        };
      },
    );

    app.post(
      '/api/v0/plugins/deliveries/redeliver',
      {
        schema: {
          tags,
          summary:
            'Send a status webhook delivery again now, with a fresh retry schedule (creator or manager, session with managePlugins)',
          body: RedeliverBody,
          response: { 200: RedeliverResponse, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (request) => {
        const session = await requireSession(request, SCOPE);
        const { deliveryId } = request.body;
        const found = await readDelivery(ctx, deliveryId);
        if (!found) throw notFound(`Delivery ${deliveryId} not found`);
        await requireOwner(ctx, session, found.pluginId);
        const result = await redeliver(ctx.db, deliveryId, ctx.clock.now());
        if (result === 'in-flight')
          throw conflict(`Delivery ${deliveryId} is being sent right now; redeliver it once this try has ended`);
        const delivery = await readDelivery(ctx, deliveryId);
        if (!delivery) throw notFound(`Delivery ${deliveryId} not found`);
        return { delivery };
      },
    );
  },
};
