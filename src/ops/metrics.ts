// Prometheus metrics (prom-client), off unless METRICS_TOKEN or METRICS_PORT is set:
// - per request: one histogram observation labelled with the route pattern (never the raw URL, so
//   ids and secrets in paths cannot explode the label set or leak), the method and the status;
// - at scrape time, read from the database: claim queue depth and the age of the oldest queued
//   attempt, the webhook backlog, the indexer's lag (when a chain is configured), and the
//   PostgreSQL pool's use;
// - process metrics (CPU, memory, event loop lag) from prom-client's defaults.
// Protection: with METRICS_PORT, /metrics is served only on that listener (bind it to a private
// interface with METRICS_HOST); with METRICS_TOKEN it requires `Authorization: Bearer <token>`.
// Both may be set. The registry is per application context (tests run several in one process).
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { AppContext } from '../context.ts';
import { indexerLag } from '../chain/status.ts';
import { safeEqual, sha256Hex } from '../shared/crypto.ts';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function metricsEnabled(ctx: AppContext): boolean {
  return ctx.config.metricsToken !== null || ctx.config.metricsPort !== null;
}

const ageSeconds = (now: number, ms: unknown) =>
  ms === null || ms === undefined ? 0 : Math.max(0, (now - Number(ms)) / 1000);

/** Webhook deliveries not yet delivered (or given up): count and age of the oldest. */
async function webhookBacklog(ctx: AppContext): Promise<{ pending: number; oldestAge: number }> {
  const row = await ctx.db
    .selectFrom('webhook_deliveries')
    .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('status', '=', 'pending')
    .executeTakeFirst();
  const oldest = row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest);
  return {
    pending: Number(row?.n ?? 0),
    oldestAge: oldest === null ? 0 : Math.max(0, (ctx.clock.now() - oldest) / 1000),
  };
}

/** Runs a scrape-time reading; a failing one is skipped (logged), never a failed scrape. */
async function safely<T>(ctx: AppContext, what: string, fn: () => Promise<T>): Promise<T | null> {
  try {
    return await fn();
  } catch (err) {
    ctx.log.warn({ err, metric: what }, 'metrics: reading failed');
    return null;
  }
}

/**
 * The request histogram, kept by hand and exported through prom-client's registry: prom-client's
 * own Histogram validates and hashes its labels on every observation (measured: most of the
 * per-request cost); here a series is found by one map lookup and its bucket by a short scan.
 */
interface Series {
  labels: Record<string, string>;
  buckets: Float64Array;
  sum: number;
  count: number;
}

class RequestHistogram {
  readonly name = 'platform_http_request_duration_seconds';
  readonly help = 'HTTP request latency by route pattern, method and status (its _count is the request rate)';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series: Series[] = [];
  /** Per route pattern, then method, then status: no key is built per request (method names are interned). */
  private readonly byRoute = new Map<string, Map<string, Map<number, Series>>>();

  /** The lookup of one route pattern: a route's hook keeps it, so a request starts one level down. */
  routeSeries(route: string): Map<string, Map<number, Series>> {
    let byMethod = this.byRoute.get(route);
    if (!byMethod) this.byRoute.set(route, (byMethod = new Map()));
    return byMethod;
  }

  observe(
    byMethod: Map<string, Map<number, Series>>,
    method: string,
    route: string,
    status: number,
    seconds: number,
  ): void {
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let s = byStatus.get(status);
    if (!s) {
      s = {
        labels: { method, route, status_code: String(status) },
        buckets: new Float64Array(BUCKETS.length),
        sum: 0,
        count: 0,
      };
      byStatus.set(status, s);
      this.series.push(s);
    }
    for (let i = 0; i < BUCKETS.length; i++) {
      if (seconds <= BUCKETS[i]) {
        s.buckets[i]++;
        break;
      }
    }
    s.sum += seconds;
    s.count++;
  }

  /** prom-client's metric interface: the samples, buckets cumulative as the exposition format wants. */
  async get() {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const s of this.series) {
      let cumulative = 0;
      BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i];
        values.push({ labels: { ...s.labels, le }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.series.length = 0;
    for (const byMethod of this.byRoute.values()) byMethod.clear(); // routes' hooks keep their maps
  }
}

export function createMetrics(ctx: AppContext) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new RequestHistogram();
  registry.registerMetric(requests as unknown as Parameters<Registry['registerMetric']>[0]);

  const queueDepth = new Gauge({
    name: 'platform_claim_queue_depth',
    help: 'Claim attempts queued and not yet resolved',
    registers: [registry],
  });
  const queueAge = new Gauge({
    name: 'platform_claim_queue_oldest_age_seconds',
    help: 'Age of the oldest queued claim attempt (0 when none)',
    registers: [registry],
  });
  // labelled with the table read, so that without such a table no series is exported at all
  const webhookPending = new Gauge({
    name: 'platform_webhook_backlog',
    help: 'Webhook deliveries not yet delivered (only when webhooks exist)',
    labelNames: ['table'],
    registers: [registry],
  });
  const webhookAge = new Gauge({
    name: 'platform_webhook_oldest_pending_age_seconds',
    help: 'Age of the oldest undelivered webhook (only when webhooks exist)',
    labelNames: ['table'],
    registers: [registry],
  });
  const indexerAge = new Gauge({
    name: 'platform_indexer_last_update_age_seconds',
    help: 'Seconds since the indexer last recorded progress (only when an indexer exists)',
    labelNames: ['table'],
    registers: [registry],
  });
  const indexerBlocks = new Gauge({
    name: 'platform_indexer_lag_blocks',
    help: 'Blocks between the chain head and the last indexed block (only when recorded)',
    labelNames: ['table'],
    registers: [registry],
  });
  const pool = new Gauge({
    name: 'platform_db_pool_connections',
    help: 'Database connections by state (PostgreSQL pool: total, idle, waiting clients; SQLite: one connection)',
    labelNames: ['state'],
    registers: [registry],
  });
  const poolMax = new Gauge({
    name: 'platform_db_pool_max',
    help: 'Largest number of database connections this process opens',
    registers: [registry],
  });

  // read replicas (DATABASE_REPLICA_URL): only exported when configured
  const replicaMetrics = ctx.replicas
    ? {
        up: new Gauge({
          name: 'platform_db_replica_up',
          help: 'Whether a read replica answers its probes (1) or not (0), by position in DATABASE_REPLICA_URL',
          labelNames: ['replica'],
          registers: [registry],
        }),
        staleness: new Gauge({
          name: 'platform_db_replica_staleness_seconds',
          help: 'How far behind the primary a read replica may be, from its last probe (reads skip it past REPLICA_MAX_LAG_MS)',
          labelNames: ['replica'],
          registers: [registry],
        }),
        reads: new Counter({
          name: 'platform_db_replica_reads_total',
          help: 'Read-only connections taken from a read replica',
          registers: [registry],
        }),
        fallbacks: new Counter({
          name: 'platform_db_replica_fallbacks_total',
          help: 'Read-only connections taken from the primary because no replica could serve (down or too far behind)',
          registers: [registry],
        }),
        counted: { replicaReads: 0, fallbacks: 0 },
      }
    : null;

  /** Reads the database-backed gauges; called once per scrape. */
  async function refresh(): Promise<void> {
    const queue = await safely(
      ctx,
      'claim queue',
      async () =>
        (
          await sql<{
            n: number | string;
            oldest: number | null;
          }>`select count(*) as n, min(attempted_at) as oldest from claim_attempts where status = 'queued'`.execute(
            ctx.db,
          )
        ).rows[0],
    );
    if (queue) {
      queueDepth.set(Number(queue.n));
      queueAge.set(ageSeconds(ctx.clock.now(), queue.oldest));
    }
    webhookPending.reset();
    webhookAge.reset();
    indexerAge.reset();
    indexerBlocks.reset();
    const webhooks = await safely(ctx, 'webhook backlog', () => webhookBacklog(ctx));
    if (webhooks) {
      webhookPending.set({ table: 'webhook_deliveries' }, webhooks.pending);
      webhookAge.set({ table: 'webhook_deliveries' }, webhooks.oldestAge);
    }
    // the indexer's cursor row exists once it ran (or a snapshot was imported)
    const indexer = ctx.config.chainRestUrl ? await safely(ctx, 'indexer lag', () => indexerLag(ctx.db)) : null;
    if (indexer) {
      indexerAge.set({ table: 'chain_index_state' }, ageSeconds(ctx.clock.now(), indexer.updatedAt));
      indexerBlocks.set({ table: 'chain_index_state' }, indexer.lag);
    }
    if (ctx.replicas && replicaMetrics) {
      const m = replicaMetrics;
      for (const r of ctx.replicas.status()) {
        m.up.set({ replica: String(r.index) }, r.up ? 1 : 0);
        if (r.stalenessMs !== null) m.staleness.set({ replica: String(r.index) }, r.stalenessMs / 1000);
      }
      const { replicaReads, fallbacks } = ctx.replicas.counts;
      m.reads.inc(replicaReads - m.counted.replicaReads);
      m.fallbacks.inc(fallbacks - m.counted.fallbacks);
      m.counted = { replicaReads, fallbacks };
    }
    if (ctx.pool) {
      pool.set({ state: 'total' }, ctx.pool.totalCount);
      pool.set({ state: 'idle' }, ctx.pool.idleCount);
      pool.set({ state: 'waiting' }, ctx.pool.waitingCount);
      poolMax.set(ctx.pool.options.max ?? 10);
    } else {
      pool.set({ state: 'total' }, 1);
      poolMax.set(1);
    }
  }

  return {
    registry,
    requests,
    async render(): Promise<string> {
      await refresh();
      return registry.metrics();
    },
  };
}

/** Whether the request carries the configured bearer token (constant time over hashes); true when none is configured. */
function authorized(token: string | null, header: string | undefined): boolean {
  if (token === null) return true;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m !== null && safeEqual(sha256Hex(m[1]), sha256Hex(token));
}

const UNAUTHORIZED = JSON.stringify({
  errorMessage: 'Unauthorized request. /metrics needs Authorization: Bearer <METRICS_TOKEN>.',
});

/** What a response being timed carries until it finishes (raw response properties, not closures). */
const TIMED = Symbol('metrics.timed');
const STARTED = Symbol('metrics.started');
interface RouteSeries {
  route: string;
  byMethod: Map<string, Map<number, Series>>;
}
type TimedResponse = ServerResponse & { [TIMED]?: RouteSeries; [STARTED]?: number };

/**
 * Starts timing a request: its response, when it finishes, is counted under the route pattern.
 * No onResponse hook: with none, and logging off, Fastify neither sets up its own response
 * listeners nor runs an onResponse hook runner per request (a no-op onResponse hook alone measured
 * 1.13x the request's CPU). One listener, shared by every response (no closure per request).
 * A response that never finishes (the connection dropped) is not counted.
 */
function timer(requests: RequestHistogram) {
  function finished(this: TimedResponse) {
    const series = this[TIMED]!;
    requests.observe(
      series.byMethod,
      this.req.method ?? 'GET',
      series.route,
      this.statusCode,
      (performance.now() - this[STARTED]!) / 1000,
    );
  }
  return (res: TimedResponse, series: RouteSeries) => {
    res[TIMED] = series;
    res[STARTED] = performance.now();
    res.once('finish', finished);
  };
}

/**
 * Times a request that its route's hook will not see: an unknown path (`unmatched`), or one
 * answered by server.ts's app-wide onRequest hook before the route's hooks run (draining).
 */
export type RequestTimer = (request: FastifyRequest, reply: FastifyReply) => void;

/**
 * Installs the per-route timing and /metrics (on the API port, or on METRICS_PORT); returns the
 * timer of the requests routes' hooks do not see (undefined when metrics are off).
 */
export async function registerMetrics(app: FastifyInstance, ctx: AppContext): Promise<RequestTimer | undefined> {
  if (!metricsEnabled(ctx)) return undefined;
  const metrics = createMetrics(ctx);
  const time = timer(metrics.requests);
  // Each route registered from here on starts timing in an onRequest hook of its own that knows
  // its pattern (reading request.routeOptions per request builds an object each time): one more
  // step of the onRequest runner every request already goes through (server.ts's app-wide hook).
  app.addHook('onRoute', (route) => {
    const series: RouteSeries = { route: route.url, byMethod: metrics.requests.routeSeries(route.url) };
    const hook = (_request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      time(reply.raw, series);
      done();
    };
    const own = route.onRequest;
    route.onRequest = own === undefined ? [hook] : Array.isArray(own) ? [hook, ...own] : [hook, own];
  });
  const unmatched: RouteSeries = { route: 'unmatched', byMethod: metrics.requests.routeSeries('unmatched') };
  const timeOutsideRoutes: RequestTimer = (request, reply) => {
    const route = request.routeOptions.url; // rare paths: the object it builds does not matter
    time(reply.raw, route === undefined ? unmatched : { route, byMethod: metrics.requests.routeSeries(route) });
  };
  const { metricsToken: token, metricsPort: port, metricsHost: host } = ctx.config;
  if (port === null) {
    app.get(
      '/metrics',
      { schema: { tags: ['operations'], summary: 'Prometheus metrics (Authorization: Bearer <METRICS_TOKEN>)' } },
      async (request, reply) => {
        if (!authorized(token, request.headers.authorization))
          return reply.code(401).header('content-type', 'application/json; charset=utf-8').send(UNAUTHORIZED);
        return reply.header('content-type', metrics.registry.contentType).send(await metrics.render());
      },
    );
    return timeOutsideRoutes;
  }
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res
        .writeHead(404, { 'content-type': 'application/json; charset=utf-8' })
        .end(JSON.stringify({ errorMessage: 'Only GET /metrics is served here' }));
      return;
    }
    if (!authorized(token, req.headers.authorization)) {
      res.writeHead(401, { 'content-type': 'application/json; charset=utf-8' }).end(UNAUTHORIZED);
      return;
    }
    metrics.render().then(
      (body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body),
      (err) => {
        ctx.log.error({ err }, 'metrics: render failed');
        res
          .writeHead(500, { 'content-type': 'application/json; charset=utf-8' })
          .end(JSON.stringify({ errorMessage: 'Internal server error' }));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  ctx.log.info({ host, port }, 'metrics listening');
  ctx.onClose.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // scrapers keep connections alive
      }),
  );
  return timeOutsideRoutes;
}
