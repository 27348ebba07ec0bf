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
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { createContext, type AppContext } from '../../src/context.ts';
import { buildApp, type App } from '../../src/server.ts';
import { createApiKey } from '../../src/api-keys/storage.ts';
import { createTestDatabase, TEST_DB, type TestApp, type TestDatabase } from '../helpers/app.ts';
import { admin, PG_BIN, startStandby, type Standby } from '../helpers/standby.ts';
import { attempt, claimWithPlugins, manager, numUses, randomAddress } from '../claims/helpers.ts';
import { addressOf, collectionDoc, messageEvent, startFakeChain, type FakeChain } from '../helpers/fake-chain.ts';
import { waitIndexed } from '../chain/helpers.ts';

const MAX_LAG_MS = 3000;
/** The bound of the second process: long enough that its replica serves through every paused step. */
const PATIENT_LAG_MS = 600_000;
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

  /** A second process on the same database with a long bound: its replica reads survive a slow machine. */
  let patient: { ctx: AppContext; app: App; t: TestApp };
  let chain: FakeChain;

  async function open(env: Record<string, string>, log: FastifyBaseLogger, db: TestDatabase) {
    const config = loadConfig({
      LOG_LEVEL: 'info',
      PORT: '0',
      ...db.env,
      DATABASE_REPLICA_URL: standby.url,
      METRICS_TOKEN,
      CHAIN_REST_URL: chain.url,
      CHAIN_POLL_INTERVAL_MS: '100',
      CHAIN_TIMEOUT_MS: '2000',
      ...env,
    });
    const c = await createContext(config, { log });
    const a = await buildApp(c);
    const { key } = await createApiKey(c.db, 'test', c.clock.now());
    const tt: TestApp = {
      app: a,
      ctx: c,
      config,
      clock: c.clock,
      apiKey: key,
      url: '',
      database: db,
      request(method, path, o = {}) {
        const headers: Record<string, string> = { ...o.headers };
        if (o.apiKey !== null) headers['x-api-key'] = o.apiKey ?? key;
        if (o.token) headers.authorization = `Bearer ${o.token}`;
        return a.inject({
          method: method as 'GET',
          url: path,
          headers,
          ...(o.body !== undefined ? { payload: o.body as object } : {}),
        });
      },
      close: async () => {},
    };
    return { ctx: c, app: a, t: tt };
  }

  before(async () => {
    standby = await startStandby();
    chain = await startFakeChain();
    database = createTestDatabase('postgres');
    const sink = new Writable({
      write(chunk, _enc, cb) {
        for (const line of String(chunk).split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
        cb();
      },
    });
    const log = pino({ level: 'info' }, sink) as unknown as FastifyBaseLogger;
    ({ ctx, app, t } = await open({ REPLICA_MAX_LAG_MS: String(MAX_LAG_MS) }, log, database));
    // no loops: the first process runs the indexer and the claim worker
    patient = await open(
      { REPLICA_MAX_LAG_MS: String(PATIENT_LAG_MS), RUN_WORKER: 'false', LOG_LEVEL: 'silent' },
      pino({ level: 'silent' }) as unknown as FastifyBaseLogger,
      database,
    );
  });

  after(async () => {
    await patient?.app.close();
    await patient?.ctx.close();
    await app?.close();
    await ctx?.close();
    await chain?.close();
    await database?.drop();
    standby?.stop('immediate');
    if (standby) rmSync(standby.dir, { recursive: true, force: true });
  });

  /** Until the replica holds every commit made before `since` (router's view, from its probes). */
  const caughtUp = (since: number, c: AppContext = ctx) =>
    waitFor('the replica to catch up', async () => {
      await c.replicas!.probe();
      const [r] = c.replicas!.status();
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

  test('a claim read on the replica does not stand in for the primary: a complete of the version just written is accepted', async () => {
    const p = patient.t;
    const { accessToken } = await manager(t);
    const claimId = await claimWithPlugins(t, accessToken, [numUses(10)], { metadata: { name: 'v0' } });
    await caughtUp(Date.now(), patient.ctx);
    await replica('select pg_wal_replay_pause()');
    try {
      const res = await p.request('PUT', '/api/v0/claims', {
        token: accessToken,
        body: { claims: [{ claimId, metadata: { name: 'v1' }, _expectedVersion: 0 }] },
      });
      assert.equal(res.statusCode, 200, res.body);
      // the replica still holds version 0, and serves it
      const read = await p.request('GET', `/api/v0/claim/${claimId}`);
      assert.equal(read.statusCode, 200, read.body);
      assert.equal(read.json().claim.version, '0');
      assert.equal(read.json().claim.metadata.name, 'v0');
      // the complete's pre-check trusts a claim cached in the last 500 ms: it must find version 1
      // (read on the primary), not the replica's copy just read (which answered 409 when it was
      // cached with the primary's; that failure shows only when this runs within those 500 ms)
      const done = await attempt(p, 'complete', claimId, randomAddress(), { _expectedVersion: 1 });
      assert.equal(done.statusCode, 200, done.body);
    } finally {
      await replica('select pg_wal_replay_resume()');
    }
  });

  test('account and collection views, ownership checks, simulate and eligibility read the replica; complete and usernames read the primary', async () => {
    const p = patient.t;
    const counts = patient.ctx.replicas!.counts;
    const MANAGER = addressOf(100);
    const A = addressOf(1);
    const B = addressOf(2);
    const range = (s: number, e = s) => ({ start: String(s), end: String(e) });
    chain.setCollection('1', collectionDoc('1', MANAGER));
    chain.addBlock([
      chain.tx([messageEvent({ msgType: 'universal_update_collection', collectionId: '1', sender: MANAGER })]),
    ]);
    await waitIndexed(
      t,
      chain.addBlock([chain.transfer({ collectionId: '1', from: 'Mint', to: A, tokenId: 1, amount: 10 })]),
    );
    const requirement = {
      assets: [
        {
          chain: 'BitBadges',
          collectionId: '1',
          assetIds: [range(1)],
          ownershipTimes: [],
          mustOwnAmounts: range(1, 100),
        },
      ],
    };
    const own = {
      pluginId: 'must-own-badges',
      instanceId: 'own',
      publicParams: { ownershipRequirements: requirement },
      privateParams: {},
    };
    const { accessToken } = await manager(t);
    const gated = await claimWithPlugins(t, accessToken, [numUses(10), own], { showInSearchResults: true });
    const completed = await claimWithPlugins(t, accessToken, [numUses(10), own]);
    await caughtUp(Date.now(), patient.ctx);

    const ok = async (method: string, path: string, body?: unknown) => {
      const res = await p.request(method, path, body === undefined ? {} : { body });
      assert.equal(res.statusCode, 200, `${method} ${path}: ${res.body}`);
      return res.json();
    };
    const eligibility = (body: Record<string, unknown>) => ok('POST', '/api/v0/eligibility', body);
    // what B looks like, through every newly routed read
    const snapshot = async () => ({
      owners: (await ok('GET', '/api/v0/collection/1/owners')).owners,
      activity: (await ok('GET', '/api/v0/collection/1/activity')).activity,
      balance: await ok('GET', `/api/v0/collection/1/balance/${B}`),
      tokens: (await ok('GET', `/api/v0/account/${B}/badges`)).tokens,
      transfers: (await ok('GET', `/api/v0/account/${B}/activity/badges`)).activity,
      account: (
        await ok('POST', '/api/v0/users', {
          accountsToFetch: [{ address: B, viewsToFetch: [{ viewType: 'tokensCollected', viewId: 't', bookmark: '' }] }],
        })
      ).accounts[0].views.t.ids,
      verified: (
        await ok('POST', '/api/v0/verifyOwnershipRequirements', { address: B, assetOwnershipRequirements: requirement })
      ).success,
      simulate: (await attempt(p, 'simulate', gated, B)).statusCode,
      eligibility: (await eligibility({ address: B, claimIds: [gated] })).docs[0].state,
    });
    const before = await snapshot();
    assert.equal(before.verified, false);
    assert.equal(before.simulate, 400);
    assert.equal(before.eligibility, 'notEligible');

    await replica('select pg_wal_replay_pause()');
    try {
      // B receives the token on chain; the indexer commits it on the primary, which the replica has not replayed
      await waitIndexed(
        t,
        chain.addBlock([chain.transfer({ collectionId: '1', from: A, to: B, tokenId: 1, amount: 5 })]),
      );
      const listed = await claimWithPlugins(t, accessToken, [numUses(10)], { showInSearchResults: true });
      const reads = counts.replicaReads;
      const fallbacks = counts.fallbacks;
      assert.deepEqual(
        await snapshot(),
        before,
        'every view answers from the replica (which has not seen the transfer)',
      );
      const ids = (await eligibility({ address: A, pageSize: 1000 })).docs.map((d: { claimId: string }) => d.claimId);
      assert.ok(ids.includes(gated) && !ids.includes(listed), 'the eligibility index reads the replica');
      assert.ok(counts.replicaReads > reads, 'replica connections were taken');
      assert.equal(counts.fallbacks, fallbacks, 'no read fell back to the primary');
      // a username just set is read back at once: usernames are read on the primary
      const me = await manager(t, ['manageAccount']);
      const name = `r${Date.now().toString(36)}`;
      const set = await p.request('POST', '/api/v0/user/updateAccount', {
        token: me.accessToken,
        body: { username: name },
      });
      assert.equal(set.statusCode, 200, set.body);
      assert.equal((await ok('GET', `/api/v0/user?address=${me.platformAddress}`)).account.username, name);
      // complete's pre-check reads the primary's read model: B owns the token there
      const done = await attempt(p, 'complete', completed, B, { _expectedVersion: -1 });
      assert.equal(done.statusCode, 200, done.body);
    } finally {
      await replica('select pg_wal_replay_resume()');
    }
    await caughtUp(Date.now(), patient.ctx);
    const now = await snapshot();
    for (const k of Object.keys(before) as Array<keyof typeof before>)
      assert.notDeepEqual(now[k], before[k], `${k} shows the transfer once replayed`);
    assert.equal(now.verified, true);
    assert.equal(now.simulate, 200);
    assert.equal(now.eligibility, 'eligible');
  });

  test('the consistent reader, its replica lost, takes no other replica behind its last read: eligibility reads the primary, plain reads the other replica', async () => {
    // replica 1 through a TCP proxy this test can cut; replica 2 is the same server, directly
    const target = new URL(standby.url);
    const sockets = new Set<Socket>();
    const proxy = createServer((client) => {
      const server = connect(Number(target.port), target.hostname);
      for (const s of [client, server]) {
        sockets.add(s);
        s.on('error', () => s.destroy());
        s.on('close', () => sockets.delete(s));
      }
      client.pipe(server).pipe(client);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const via = new URL(standby.url);
    via.port = String((proxy.address() as AddressInfo).port);
    const cut = () => {
      proxy.close();
      for (const s of sockets) s.destroy();
    };
    const two = await open(
      {
        DATABASE_REPLICA_URL: `${via},${standby.url}`,
        REPLICA_MAX_LAG_MS: String(PATIENT_LAG_MS),
        RUN_WORKER: 'false',
        LOG_LEVEL: 'silent',
      },
      pino({ level: 'silent' }) as unknown as FastifyBaseLogger,
      database,
    );
    try {
      const counts = two.ctx.replicas!.counts;
      const { accessToken } = await manager(t);
      await caughtUp(Date.now(), two.ctx);
      const address = randomAddress();
      const listed = async () => {
        const res = await two.t.request('POST', '/api/v0/eligibility', { body: { address, pageSize: 1000 } });
        assert.equal(res.statusCode, 200, res.body);
        return res.json().docs.map((d: { claimId: string }) => d.claimId) as string[];
      };
      await listed(); // the index is built on replica 1 (the first), which the reader then keeps to
      await replica('select pg_wal_replay_pause()');
      try {
        const made = await claimWithPlugins(t, accessToken, [numUses(10)], { showInSearchResults: true });
        // both replicas now hold nothing committed after the claim: their T stays before it, and
        // so before the end of this read on replica 1
        assert.ok(!(await listed()).includes(made), 'replica 1 served the index (it lacks the new claim)');
        cut();
        const fallbacks = counts.fallbacks;
        assert.ok(
          (await listed()).includes(made),
          'replica 1 lost, the reader read the primary, not replica 2 (not shown to hold its last read)',
        );
        assert.ok(counts.fallbacks > fallbacks);
        // a plain read takes replica 2, which serves within the bound
        const reads = counts.replicaReads;
        assert.equal((await two.t.request('GET', `/api/v0/claim/${made}`)).statusCode, 404);
        assert.ok(counts.replicaReads > reads, 'the plain read was served by replica 2');
      } finally {
        await replica('select pg_wal_replay_resume()');
      }
    } finally {
      cut();
      await two.app.close();
      await two.ctx.close();
    }
  });

  test('the replica down: reads fall back to the primary, with a metric and a log line', async () => {
    const { accessToken } = await manager(t);
    const claimId = await claimWithPlugins(t, accessToken, [numUses(5)], { metadata: { name: 'kept' } });
    await caughtUp(Date.now());
    const reads = ctx.replicas!.counts.replicaReads;
    const viaReplica = await t.request('GET', `/api/v0/claim/${claimId}`);
    assert.equal(viaReplica.statusCode, 200, viaReplica.body);
    assert.ok(ctx.replicas!.counts.replicaReads > reads);
    // a loaded machine may have seen the replica slow to connect before (down, then back): only
    // the lines from here count
    const logged = logLines.length;
    standby.stop('immediate');
    const fallbacks = ctx.replicas!.counts.fallbacks;
    const viaPrimary = await t.request('GET', `/api/v0/claim/${claimId}`);
    assert.equal(viaPrimary.statusCode, 200, viaPrimary.body);
    assert.deepEqual(viaPrimary.json(), viaReplica.json(), 'the same document from either server');
    assert.equal(await claimName(claimId), 'kept');
    const search = await t.request('GET', '/api/v0/claims/search?searchValue=kept');
    assert.equal(search.statusCode, 200, search.body);
    // the account and collection views, simulate and eligibility answer from the primary too
    const address = randomAddress();
    for (const [method, path, body] of [
      ['GET', `/api/v0/account/${address}/badges`, undefined],
      ['POST', '/api/v0/users', { accountsToFetch: [{ address }] }],
      ['GET', '/api/v0/collection/1/owners', undefined],
      ['POST', '/api/v0/eligibility', { address, claimIds: [claimId] }],
      ['POST', `/api/v0/claims/simulate/${claimId}/${address}`, { _expectedVersion: -1 }],
    ] as const) {
      const res = await t.request(method, path, body === undefined ? {} : { body });
      assert.equal(res.statusCode, 200, `${method} ${path}: ${res.body}`);
    }
    assert.ok(ctx.replicas!.counts.fallbacks > fallbacks, 'the reads were served by the primary');
    await ctx.replicas!.probe();
    assert.deepEqual(
      logLines
        .slice(logged)
        .filter((l) => l.msg === 'read replica down: its reads fall back to the primary')
        .map((l) => l.replica),
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
