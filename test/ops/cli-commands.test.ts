import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase, startApp, type TestApp, type TestDatabase } from '../helpers/app.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

// The commands' own behaviour, run in this process (runCliInProcess); entry-points.test.ts starts the real
// entry points and `serve` below is a real process.
describe('operator CLI', () => {
  let db: TestDatabase;
  let t: TestApp;
  before(async () => {
    db = createTestDatabase();
    const m = await runCliInProcess(['migrate'], db.env);
    assert.equal(m.code, 0, m.stderr);
    assert.ok(Array.isArray(JSON.parse(m.stdout).applied));
    t = await startApp({ database: db, extend: (app) => app.get('/api/v0/ping', async () => ({ pong: true })) });
  });
  after(() => t.close());

  test('migrate is idempotent', async () => {
    const m = await runCliInProcess(['migrate'], db.env);
    assert.equal(m.code, 0, m.stderr);
    assert.deepEqual(JSON.parse(m.stdout), { applied: [] });
  });

  test('api-key create prints one JSON object; the key works; revoke stops it', async () => {
    const created = await runCliInProcess(['api-key', 'create', '--label', 'ci key'], db.env);
    assert.equal(created.code, 0, created.stderr);
    const key = JSON.parse(created.stdout);
    assert.equal(key.label, 'ci key');
    assert.match(key.key, /^[0-9a-f]{64}$/);
    assert.match(key.id, /^key_[0-9a-f]{16}$/);
    assert.equal((await t.request('GET', '/api/v0/ping', { apiKey: key.key })).statusCode, 200);

    const listed = await runCliInProcess(['api-key', 'list'], db.env);
    assert.equal(listed.code, 0, listed.stderr);
    const list = JSON.parse(listed.stdout);
    const mine = list.find((k: { id: string }) => k.id === key.id);
    assert.equal(mine.label, 'ci key');
    assert.equal(mine.revokedAt, null);
    assert.ok(!listed.stdout.includes(key.key), 'list must never print key values');

    // stored only as a hash
    const row = await t.ctx.db.selectFrom('api_keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
    assert.notEqual(row.key_hash, key.key);
    assert.ok(!JSON.stringify(row).includes(key.key));

    const revoked = await runCliInProcess(['api-key', 'revoke', key.id], db.env);
    assert.equal(revoked.code, 0, revoked.stderr);
    await new Promise((r) => setTimeout(r, 1100)); // the gate trusts a verified key for at most 1 s
    assert.equal((await t.request('GET', '/api/v0/ping', { apiKey: key.key })).statusCode, 401);
  });

  test('revoking an unknown id fails with exit code 1', async () => {
    const r = await runCliInProcess(['api-key', 'revoke', 'key_nope'], db.env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /No API key with id key_nope/);
  });

  test('usage errors exit 2', async () => {
    const noLabel = await runCliInProcess(['api-key', 'create'], db.env);
    assert.equal(noLabel.code, 2);
    assert.match(noLabel.stderr, /--label/);
    const unknown = await runCliInProcess(['frobnicate'], db.env);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /Unknown command: frobnicate/);
  });

  test('a bad configuration value stops the command naming the variable', async () => {
    const r = await runCliInProcess(['api-key', 'list'], { ...db.env, PORT: 'eighty' });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /PORT must be an integer/);
  });
});

describe('serve', () => {
  let db: TestDatabase;
  before(() => {
    db = createTestDatabase();
  });
  after(() => db.drop());

  test('serve starts, answers, and exits cleanly on SIGTERM', async () => {
    const { spawn } = await import('node:child_process');
    const { BIN } = await import('../helpers/cli.ts');
    const port = String(20000 + Math.floor(Math.random() * 20000));
    const child = spawn(process.execPath, [BIN, 'serve'], {
      env: { ...process.env, ...db.env, PORT: port, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const deadline = Date.now() + PATIENCE_MS; // however slowly a loaded machine starts
    let ok = false;
    while (Date.now() < deadline) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`);
        if (res.status === 200) {
          ok = true;
          break;
        }
      } catch {
        /* not up yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(ok, 'service did not become ready');
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.match(out, /shutting down/);
  });
});
