// A database that drops its connections (a PostgreSQL restart, a failover, a network cut) must not
// take a service process down: the pool reports the lost idle connections, /readyz answers 503
// while the database is away, and the process serves again once new connections succeed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { createTestDatabase, TEST_DATABASE_URL, TEST_DB, type TestDatabase } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { startService, type ServiceProcess } from '../helpers/process.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

describe('database outage (PostgreSQL)', {
  skip: TEST_DB !== 'postgres' && 'PostgreSQL only: SQLite has no connections to lose',
}, () => {
  let db: TestDatabase;
  let svc: ServiceProcess;
  // the service's connections carry this name, so only they are cut (other test files share the server)
  const appName = `outage_${randomBytes(4).toString('hex')}`;
  before(async () => {
    db = createTestDatabase();
    const url = new URL(db.env.DATABASE_URL!);
    url.searchParams.set('application_name', appName);
    svc = await startService({ ...db.env, DATABASE_URL: url.toString() });
  });
  after(async () => {
    await svc.stop();
    await db.drop();
  });

  async function cutConnections(): Promise<number> {
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      const { rows } = await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
        [appName],
      );
      return rows.length;
    } finally {
      await admin.end();
    }
  }

  test('terminated connections: the process stays up and serves again', async () => {
    // several requests at once leave several idle connections in the pool
    const warm = await Promise.all(Array.from({ length: 6 }, () => fetch(`${svc.url}/readyz`)));
    assert.ok(warm.every((r) => r.status === 200));
    assert.ok((await cutConnections()) > 0, 'the service had connections to cut');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(svc.child.exitCode, null, `the service exited: ${svc.stderr()}`);
    const deadline = Date.now() + PATIENCE_MS;
    let status = 0;
    while (Date.now() < deadline && status !== 200) {
      status = (await fetch(`${svc.url}/readyz`)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 200);
    const apps = await fetch(`${svc.url}/api/v0/developerApp/none`);
    assert.equal(apps.status, 401, 'a database-backed route answers (no key: 401, not a 500)');
    // cuts while it is busy: a request whose query loses its connection is a 503 to retry, not a 500
    const key = await runCli(['api-key', 'create', '--label', 'outage'], db.env);
    assert.equal(key.code, 0, key.stderr);
    const headers = { 'x-api-key': JSON.parse(key.stdout).key as string };
    const codes: number[] = [];
    for (let round = 0; round < 5; round++) {
      const busy = Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          fetch(`${svc.url}${i % 2 ? '/readyz' : '/api/v0/claim/none'}`, { headers }).then(
            async (r) => [r.status, await r.text()] as const,
          ),
        ),
      );
      await cutConnections();
      for (const [status, body] of await busy) {
        codes.push(status);
        if (status === 503) assert.match(body, /database/i);
      }
    }
    assert.ok(
      codes.every((c) => c === 200 || c === 404 || c === 503),
      `only 200, 404 or 503 while connections drop: ${codes.join(',')}\n${svc
        .stdout()
        .split('\n')
        .filter((l) => l.includes('unhandled'))
        .join('\n')}`,
    );
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(svc.child.exitCode, null, `the service exited: ${svc.stderr()}`);
    assert.match(svc.stdout(), /database connection lost/, 'the loss is logged');
  });

  test('the database unreachable: 503 with Retry-After, then served again when it is back', async () => {
    // the service reaches PostgreSQL through a TCP proxy that the test can cut and restore
    const target = new URL(TEST_DATABASE_URL);
    const sockets = new Set<Socket>();
    let proxy: Server | null = null;
    const open = (port = 0) =>
      new Promise<number>((resolve) => {
        proxy = createServer((client) => {
          const upstream = connect(Number(target.port || 5432), target.hostname);
          for (const s of [client, upstream]) {
            sockets.add(s);
            s.on('error', () => {});
            s.on('close', () => sockets.delete(s));
          }
          client.pipe(upstream).pipe(client);
        });
        proxy.listen(port, '127.0.0.1', () => resolve((proxy!.address() as { port: number }).port));
      });
    const cut = () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        proxy!.close(() => resolve());
      });
    const port = await open();
    const url = new URL(db.env.DATABASE_URL!);
    url.host = `127.0.0.1:${port}`;
    const env = { ...db.env, DATABASE_URL: url.toString() };
    const key = await runCli(['api-key', 'create', '--label', 'proxy'], env);
    assert.equal(key.code, 0, key.stderr);
    const headers = { 'x-api-key': JSON.parse(key.stdout).key as string };
    // the API-key cache would answer without the database: read a claim instead
    const proxied = await startService({ ...env, API_KEY_CACHE_MS: '0' });
    try {
      assert.equal((await fetch(`${proxied.url}/api/v0/claim/none`, { headers })).status, 404);
      await cut();
      const down = await fetch(`${proxied.url}/api/v0/claim/none`, { headers });
      assert.equal(down.status, 503, await down.clone().text());
      assert.equal(down.headers.get('retry-after'), '1');
      assert.deepEqual(await down.json(), { errorMessage: 'The database is unavailable right now; retry shortly' });
      assert.equal((await fetch(`${proxied.url}/readyz`)).status, 503);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(proxied.child.exitCode, null, `the service exited: ${proxied.stderr()}`);
      await open(port);
      assert.equal((await fetch(`${proxied.url}/api/v0/claim/none`, { headers })).status, 404, 'served again');
      assert.equal((await fetch(`${proxied.url}/readyz`)).status, 200);
    } finally {
      await proxied.stop();
      await cut();
    }
  });
});
