// Read replicas (DATABASE_REPLICA_URL) against a real streaming replica: the test makes one with
// pg_basebackup from the test PostgreSQL server, starts it on a free port, and stops it at the end.
// It needs the PostgreSQL server binaries (PG_BIN, default /usr/lib/postgresql/15/bin) and root
// (to run them as the postgres user, and to add a replication line to the server's pg_hba.conf when
// it has none: the file is changed once, then reloaded, never restarted).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { createContext, type AppContext } from '../../src/context.ts';
import { buildApp, type App } from '../../src/server.ts';
import { createApiKey } from '../../src/api-keys/storage.ts';
import { createTestDatabase, TEST_DB, type TestApp, type TestDatabase } from '../helpers/app.ts';
import { admin, PG_BIN, startStandby, type Standby } from '../helpers/standby.ts';
import { attempt, claimWithPlugins, manager, numUses, randomAddress } from '../claims/helpers.ts';

const MAX_LAG_MS = 3000;
const METRICS_TOKEN = 'replica-test-metrics-token';

const skip =
  TEST_DB !== 'postgres'
    ? 'PostgreSQL only: replicas are of a PostgreSQL primary'
    : process.getuid?.() !== 0
      ? 'needs root to run pg_basebackup and pg_ctl as the postgres user'
      : !existsSync(join(PG_BIN, 'pg_basebackup'))
        ? `no PostgreSQL binaries in ${PG_BIN} (set PG_BIN)`
        : false;

async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('read replicas (a real streaming replica)', { skip, timeout: 600_000 }, () => {
  let standby: Standby;
  let database: TestDatabase;
  let ctx: AppContext;
  let app: App;
  let t: TestApp;
  const logLines: Array<Record<string, unknown>> = [];

  before(async () => {
    standby = await startStandby();
    database = createTestDatabase('postgres');
    const config = loadConfig({
      LOG_LEVEL: 'info',
      PORT: '0',
      ...database.env,
      DATABASE_REPLICA_URL: standby.url,
      REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
      METRICS_TOKEN,
    });
    const sink = new Writable({
      write(chunk, _enc, cb) {
        for (const line of String(chunk).split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
        cb();
      },
    });
    const log = pino({ level: 'info' }, sink) as unknown as FastifyBaseLogger;
    ctx = await createContext(config, { log });
    app = await buildApp(ctx);
    const { key } = await createApiKey(ctx.db, 'test', ctx.clock.now());
    t = {
      app,
      ctx,
      config,
      clock: ctx.clock,
      apiKey: key,
      url: '',
      database,
      request(method, path, o = {}) {
        const headers: Record<string, string> = { ...o.headers };
        if (o.apiKey !== null) headers['x-api-key'] = o.apiKey ?? key;
        if (o.token) headers.authorization = `Bearer ${o.token}`;
        return app.inject({
          method: method as 'GET',
          url: path,
          headers,
          ...(o.body !== undefined ? { payload: o.body as object } : {}),
        });
      },
      close: async () => {},
    };
  });

  after(async () => {
    await app?.close();
    await ctx?.close();
    await database?.drop();
    standby?.stop('immediate');
    if (standby) rmSync(standby.dir, { recursive: true, force: true });
  });

  /** Until the replica holds every commit made before `since` (router's view, from its probes). */
  const caughtUp = (since: number) =>
    waitFor('the replica to catch up', async () => {
      await ctx.replicas!.probe();
      const [r] = ctx.replicas!.status();
      return r.serving && r.stalenessMs !== null && Date.now() - r.stalenessMs >= since;
    });
  const replica = (sql: string) => admin(standby.url, (c) => c.query(sql));
  const claimName = async (claimId: string) => {
    const res = await t.request('GET', `/api/v0/claim/${claimId}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().claim.metadata.name as string;
  };

  test('claim reads go to the replica; a lagging replica serves within the bound, then reads move to the primary; a status poll right after complete reads the primary', async () => {
    const { accessToken } = await manager(t);
    const claimId = await claimWithPlugins(t, accessToken, [numUses(100)], { metadata: { name: 'first' } });
    await caughtUp(Date.now());

    const before = { ...ctx.replicas!.counts };
    assert.equal(await claimName(claimId), 'first');
    assert.ok(ctx.replicas!.counts.replicaReads > before.replicaReads, 'the claim read took a replica connection');
    assert.equal(ctx.replicas!.counts.fallbacks, before.fallbacks);

    // The replica stops replaying (as under a long replay conflict or a slow disk): its data ages.
    await replica('select pg_wal_replay_pause()');
    try {
      const pausedAt = Date.now();
      const res = await t.request('PUT', '/api/v0/claims', {
        token: accessToken,
        body: { claims: [{ claimId, metadata: { name: 'second' }, _expectedVersion: 0 }] },
      });
      assert.equal(res.statusCode, 200, res.body);
      // read-your-writes: an attempt's status right after complete is read on the primary
      const done = await attempt(t, 'complete', claimId, randomAddress(), { _expectedVersion: -1 }, accessToken);
      assert.equal(done.statusCode, 200, done.body);
      const id = done.json().claimAttemptId as string;
      const polled = await t.request('GET', `/api/v0/claims/status/${id}`, { token: accessToken });
      assert.equal(polled.statusCode, 200, polled.body);
      // within the bound the replica still serves, with what it had replayed: the old name
      await ctx.replicas!.probe();
      if (Date.now() - pausedAt < MAX_LAG_MS / 2) {
        assert.equal(await claimName(claimId), 'first', 'a replica within the bound serves reads');
      }
      // past the bound (measured from the last commit it holds) it serves no more: the primary answers
      await waitFor('the replica to fall out of the bound', () => !ctx.replicas!.status()[0].serving, MAX_LAG_MS * 4);
      const fallbacks = ctx.replicas!.counts.fallbacks;
      assert.equal(await claimName(claimId), 'second');
      assert.ok(ctx.replicas!.counts.fallbacks > fallbacks, 'the read fell back to the primary');
    } finally {
      await replica('select pg_wal_replay_resume()');
    }
    await caughtUp(Date.now());
    assert.equal(await claimName(claimId), 'second', 'caught up again, the replica serves the new name');
  });

  test('the replica down: reads fall back to the primary, with a metric and a log line', async () => {
    const { accessToken } = await manager(t);
    const claimId = await claimWithPlugins(t, accessToken, [numUses(5)], { metadata: { name: 'kept' } });
    await caughtUp(Date.now());
    const reads = ctx.replicas!.counts.replicaReads;
    const viaReplica = await t.request('GET', `/api/v0/claim/${claimId}`);
    assert.equal(viaReplica.statusCode, 200, viaReplica.body);
    assert.ok(ctx.replicas!.counts.replicaReads > reads);
    standby.stop('immediate');
    const fallbacks = ctx.replicas!.counts.fallbacks;
    const viaPrimary = await t.request('GET', `/api/v0/claim/${claimId}`);
    assert.equal(viaPrimary.statusCode, 200, viaPrimary.body);
    assert.deepEqual(viaPrimary.json(), viaReplica.json(), 'the same document from either server');
    assert.equal(await claimName(claimId), 'kept');
    const search = await t.request('GET', '/api/v0/claims/search?searchValue=kept');
    assert.equal(search.statusCode, 200, search.body);
    assert.ok(ctx.replicas!.counts.fallbacks > fallbacks, 'the reads were served by the primary');
    await ctx.replicas!.probe();
    assert.deepEqual(
      logLines.filter((l) => l.msg === 'read replica down: its reads fall back to the primary').map((l) => l.replica),
      [1],
    );
    const metrics = await app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    assert.equal(metrics.statusCode, 200);
    assert.match(metrics.body, /^platform_db_replica_up\{replica="1"\} 0$/m);
    const counted = /^platform_db_replica_fallbacks_total (\d+)$/m.exec(metrics.body);
    assert.ok(counted && Number(counted[1]) >= 1, metrics.body.slice(0, 500));
  });
});
