// Which reads a replica actually serves: one service process with one streaming replica
// (DATABASE_REPLICA_URL, the default 5 s bound), BENCH_N requests of each kind, idle and while a
// writer commits 2 kB rows in a loop on the primary. For each kind, the share of its read
// connections taken from the replica (the rest fell back to the primary) and its p50 latency.
// Plain reads (a claim document, a collection view) take any replica within the bound; eligibility
// answers go through the consistent reader, which also refuses a replica behind its own last read
// elsewhere (docs/scale-out.md#read-replicas). Makes its replica as bench/replica-lag.ts does
// (root and the PostgreSQL binaries needed), so it is PostgreSQL only.
//   node bench/replica-reads.ts      BENCH_N=… requests per kind and phase (default 200)
import { rmSync } from 'node:fs';
import pg from 'pg';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { loadConfig } from '../src/config.ts';
import { createContext } from '../src/context.ts';
import { buildApp } from '../src/server.ts';
import { createApiKey } from '../src/api-keys/storage.ts';
import { createTestDatabase, TEST_DATABASE_URL, type TestApp } from '../test/helpers/app.ts';
import { startStandby } from '../test/helpers/standby.ts';
import { claimWithPlugins, manager, numUses, randomAddress } from '../test/claims/helpers.ts';
import { percentile } from './lib/harness.ts';
import { record } from './lib/record.ts';

const N = Number(process.env.BENCH_N ?? 200);
if (process.getuid?.() !== 0 || process.env.BENCH_DB === 'sqlite') {
  console.log('replica-reads: skipped (needs root and PostgreSQL to make a replica)');
  process.exit(0);
}
const standby = await startStandby();
const database = createTestDatabase('postgres');
const config = loadConfig({
  LOG_LEVEL: 'silent',
  PORT: '0',
  ...database.env,
  DATABASE_REPLICA_URL: standby.url,
  RUN_WORKER: 'false',
});
const ctx = await createContext(config, { log: pino({ level: 'silent' }) as unknown as FastifyBaseLogger });
const app = await buildApp(ctx);
const { key } = await createApiKey(ctx.db, 'bench', ctx.clock.now());
const t = {
  app,
  ctx,
  config,
  clock: ctx.clock,
  apiKey: key,
  url: '',
  database,
  request(method: string, path: string, o: { body?: unknown; token?: string } = {}) {
    const headers: Record<string, string> = { 'x-api-key': key };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    return app.inject({
      method: method as 'GET',
      url: path,
      headers,
      ...(o.body !== undefined ? { payload: o.body as object } : {}),
    });
  },
  close: async () => {},
} as unknown as TestApp;
const writer = new pg.Client({ connectionString: TEST_DATABASE_URL });
await writer.connect();
const table = `replica_reads_${process.pid}`;
try {
  await writer.query(`create table ${table} (id serial primary key, pad text)`);
  const { accessToken } = await manager(t);
  const claims: string[] = [];
  for (let i = 0; i < 20; i++)
    claims.push(await claimWithPlugins(t, accessToken, [numUses(100)], { showInSearchResults: true }));
  // until the replica holds the claims and the router sees it within the bound
  const since = Date.now();
  for (;;) {
    await ctx.replicas!.probe();
    const [r] = ctx.replicas!.status();
    if (r.serving && r.stalenessMs !== null && Date.now() - r.stalenessMs >= since) break;
    await new Promise((r) => setTimeout(r, 20));
  }

  const kinds: Array<[string, (i: number) => Promise<number>]> = [
    ['claim document', async (i) => (await t.request('GET', `/api/v0/claim/${claims[i % claims.length]}`)).statusCode],
    [
      'account view',
      async () => (await t.request('GET', `/api/v0/account/${randomAddress()}/activity/claims`)).statusCode,
    ],
    [
      'eligibility (consistent)',
      async () =>
        (await t.request('POST', '/api/v0/eligibility', { body: { address: randomAddress(), pageSize: 25 } }))
          .statusCode,
    ],
  ];
  const phase = async (label: string, background: boolean) => {
    let writing = background;
    const bg = (async () => {
      while (writing) await writer.query(`insert into ${table} (pad) values (repeat('x', 2000))`);
    })();
    for (const [kind, run] of kinds) {
      const before = { ...ctx.replicas!.counts };
      const times: number[] = [];
      for (let i = 0; i < N; i++) {
        const t0 = performance.now();
        const status = await run(i);
        times.push(performance.now() - t0);
        if (status !== 200) throw new Error(`${kind}: ${status}`);
      }
      const replica = ctx.replicas!.counts.replicaReads - before.replicaReads;
      const primary = ctx.replicas!.counts.fallbacks - before.fallbacks;
      const share = (100 * replica) / Math.max(1, replica + primary);
      times.sort((a, b) => a - b);
      console.log(
        `${label.padEnd(28)} ${kind.padEnd(26)} replica ${String(replica).padStart(5)}  primary ${String(primary).padStart(5)}  (${share.toFixed(1)} % on the replica)  p50 ${percentile(times, 50).toFixed(1)} ms`,
      );
      record(`replica share, ${kind}, ${label}`, share, { better: 'higher', unit: '%' });
    }
    writing = false;
    await bg;
  };
  console.log(`# replica reads: one process, one streaming replica, ${N} requests per kind and phase`);
  await phase('idle primary', false);
  await phase('primary with a busy writer', true);
} finally {
  await writer.query(`drop table if exists ${table}`).catch(() => {});
  await writer.end();
  await app.close();
  await ctx.close();
  await database.drop();
  standby.stop('immediate');
  rmSync(standby.dir, { recursive: true, force: true });
}
