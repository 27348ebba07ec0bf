// Liveness and readiness for orchestrators; no API key. (Prometheus metrics: metrics.ts, installed by server.ts.)
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Routes } from '../shared/capability.ts';
import { indexerLag } from '../chain/status.ts';

const Health = Type.Object({ status: Type.String() });
const Ready = Type.Object({
  status: Type.String(),
  details: Type.Optional(
    Type.Object({
      chainIndexer: Type.Optional(
        Type.Object({
          indexedHeight: Type.Integer(),
          chainHeight: Type.Integer({ description: 'Chain head last seen by the indexer' }),
          lag: Type.Integer({ description: 'chainHeight − indexedHeight, in blocks' }),
          updatedAt: Type.Integer({
            description:
              "UNIX ms of the indexer's last report (a poll of the chain head or a commit); old when no indexer runs",
          }),
        }),
      ),
    }),
  ),
});

export const operations: Routes = {
  register(app, ctx) {
    app.get(
      '/healthz',
      {
        schema: { tags: ['operations'], summary: 'Liveness: the process answers HTTP', response: { 200: Health } },
      },
      async () => ({
        status: 'ok',
      }),
    );
    app.get(
      '/readyz',
      {
        schema: {
          tags: ['operations'],
          summary: "Readiness: the database answers (503 otherwise); the chain indexer's lag when it runs",
          response: { 200: Ready, 503: Type.Ref('ErrorResponse') },
        },
      },
      async (_req, reply) => {
        try {
          await sql`select 1`.execute(ctx.db);
          // lag is reported, not judged: a lagging indexer does not make the API unready
          const chainIndexer = ctx.config.chainRestUrl ? await indexerLag(ctx.db) : null;
          return { status: 'ready', ...(chainIndexer ? { details: { chainIndexer } } : {}) };
        } catch (err) {
          ctx.log.warn({ err }, 'readiness check failed');
          return reply.code(503).send({ errorMessage: 'Database is not reachable' });
        }
      },
    );
  },
};
