// SQLite storage: the synchronous fast path of hot statements never runs inside a transaction
// Kysely holds open, and WAL checkpoints run on their own thread with a backstop if it dies.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery } from 'kysely';
import { openSqlite } from '../../src/db/index.ts';
import { startApp } from '../helpers/app.ts';
import { authorizeCode } from '../helpers/signin.ts';

const skip = process.env.TEST_DB === 'postgres' ? 'SQLite storage only' : false;
const raw = (sql: string, params: unknown[] = []) => CompiledQuery.raw(sql, params);

describe('SQLite fast path', { skip }, () => {
  test('refuses to run while Kysely holds the connection, so it never joins another open transaction', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'platform-fast-'));
    const storage = openSqlite(dir, 'x.sqlite', { backgroundCheckpoints: false });
    try {
      await storage.db.executeQuery(raw('create table t (v text)'));
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const open = storage.db.transaction().execute(async (tx) => {
        await tx.executeQuery(raw("insert into t values ('inside')"));
        await held;
        throw new Error('roll back');
      });
      await new Promise((r) => setTimeout(r, 20)); // the transaction is open now
      assert.equal(storage.sqlite!.run(raw("insert into t values ('fast')")), null);
      assert.equal(
        storage.sqlite!.transaction(() => 1),
        null,
      );
      release();
      await assert.rejects(open, /roll back/);
      assert.ok(storage.sqlite!.run(raw("insert into t values ('fast')")));
      assert.deepEqual(
        storage.sqlite!.transaction((run) => run<{ v: string }>(raw('select v from t')).rows),
        { value: [{ v: 'fast' }] },
      );
      assert.throws(
        () =>
          storage.sqlite!.transaction((run) => {
            run(raw("insert into t values ('undone')"));
            throw new Error('fails');
          }),
        /fails/,
      );
      assert.deepEqual(
        storage.sqlite!.run<{ n: number }>(raw('select count(*) as n from t'))!.rows,
        [{ n: 1 }],
        'a failed fast transaction is rolled back',
      );
    } finally {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a code exchanged while another transaction is open survives that transaction rolling back', async () => {
    const t = await startApp();
    try {
      const { code, client } = await authorizeCode(t);
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const open = t.ctx.db.transaction().execute(async (tx) => {
        await tx.executeQuery(raw('select 1'));
        await held;
        throw new Error('roll back');
      });
      await new Promise((r) => setTimeout(r, 20));
      const exchange = t.request('POST', '/api/v0/signin/token', {
        body: {
          grant_type: 'authorization_code',
          code,
          client_id: client.clientId,
          client_secret: client.clientSecret,
          redirect_uri: client.redirectUri,
        },
      });
      await new Promise((r) => setTimeout(r, 20));
      release();
      await assert.rejects(open, /roll back/);
      const res = await exchange;
      assert.equal(res.statusCode, 200, res.body);
      const status = await t.request('POST', '/api/v0/auth/status', { token: res.json().access_token, body: {} });
      assert.equal(status.json().signedIn, true, 'the exchange was not rolled back with the other transaction');
    } finally {
      await t.close();
    }
  });
});

describe('WAL checkpoints on a worker thread', { skip }, () => {
  test('the thread copies the WAL back; if it dies the main connection checkpoints again; nothing is lost', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'platform-ckpt-'));
    const wal = join(dir, 'x.sqlite-wal');
    let storage = openSqlite(dir, 'x.sqlite');
    try {
      const { checkpointer, sqlite } = storage;
      assert.ok(checkpointer && sqlite);
      sqlite.run(raw('create table t (v text)'));
      const write = (n: number) => {
        for (let i = 0; i < n; i++)
          sqlite.transaction((run) => run(raw('insert into t values (?)', ['x'.repeat(2000)])));
      };
      write(300);
      for (let i = 0; i < 100 && !(checkpointer.last && checkpointer.last.checkpointed > 0); i++)
        await new Promise((r) => setTimeout(r, 20));
      assert.ok(checkpointer.last && checkpointer.last.checkpointed > 0, 'the thread checkpointed the WAL');

      await checkpointer.worker.terminate(); // killed, not stopped
      for (let i = 0; i < 50 && checkpointer.running; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(checkpointer.running, false);
      // SQLite's own autocheckpoint (1000 pages) is back: the WAL stays bounded without the thread
      write(3000);
      assert.ok(statSync(wal).size < 1100 * 4120, `WAL is ${statSync(wal).size} bytes`);
      await storage.close();
      storage = openSqlite(dir, 'x.sqlite', { backgroundCheckpoints: false });
      assert.deepEqual(storage.sqlite!.run<{ n: number }>(raw('select count(*) as n from t'))!.rows, [{ n: 3300 }]);
    } finally {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
