// Liveness and readiness for orchestrators; no API key. (Prometheus metrics: metrics.ts, installed by server.ts.)
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Capability } from '../capabilities.ts';

const Health = Type.Object({ status: Type.String() });

export const operations: Capability = {
  name: 'operations',
  register(app, ctx) {
    app.get('/healthz', { schema: { tags: ['operations'], security: [], response: { 200: Health } } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { tags: ['operations'], security: [], response: { 200: Health, 503: Type.Ref('ErrorResponse') } } }, async (_req, reply) => {
      try {
        await sql`select 1`.execute(ctx.db);
        return { status: 'ready' };
      } catch (err) {
        ctx.log.warn({ err }, 'readiness check failed');
        return reply.code(503).send({ errorMessage: 'Database is not reachable' });
      }
    });
  },
};
