// The README's test command on a machine missing what it needs: one clear line, never a stack
// trace; a missing test database on a running server is created. (scripts/test.mjs as a process.)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { TEST_DATABASE_URL } from '../helpers/app.ts';
import { ROOT } from '../helpers/cli.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

function testCommand(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'test.mjs'), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: PATIENCE_MS,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('npm test on a machine missing things', () => {
  test('PostgreSQL not reachable: one line naming TEST_DATABASE_URL, exit 1', () => {
    const r = testCommand(['--db', 'postgres', 'test/ops/none.test.ts'], {
      TEST_DATABASE_URL: 'postgres://postgres:pw@127.0.0.1:1/test',
    });
    assert.equal(r.code, 1);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], /TEST_DATABASE_URL=postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/test/);
    assert.match(lines[0], /ECONNREFUSED/);
    assert.match(lines[0], /--db sqlite/);
  });

  test('the server is up but the database is missing: it is created and the run goes on', async () => {
    const url = new URL(TEST_DATABASE_URL);
    const name = `${url.pathname.slice(1)}_fresh_${randomBytes(4).toString('hex')}`;
    url.pathname = `/${name}`;
    const admin = new URL(TEST_DATABASE_URL);
    admin.pathname = '/postgres';
    try {
      const r = testCommand(['--db', 'postgres', 'test/foundation/uint-ranges.test.ts'], {
        TEST_DATABASE_URL: url.toString(),
      });
      assert.equal(r.code, 0, r.stderr + r.stdout);
      assert.match(r.stdout, new RegExp(`Created the test database "${name}"`));
      const client = new pg.Client({ connectionString: admin.toString() });
      await client.connect();
      try {
        assert.equal((await client.query('select 1 from pg_database where datname = $1', [name])).rowCount, 1);
      } finally {
        await client.end();
      }
    } finally {
      const client = new pg.Client({ connectionString: admin.toString() });
      await client.connect();
      await client.query(`drop database if exists "${name}"`);
      await client.end();
    }
  });

  test('Chromium missing: one line saying how to get it, before any test runs', () => {
    const r = testCommand(['--db', 'sqlite', 'test/signin/browser.test.ts'], {
      CHROMIUM_PATH: '/nonexistent/chromium',
    });
    assert.equal(r.code, 1);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], /Chromium/);
    assert.match(lines[0], /CHROMIUM_PATH=\/nonexistent\/chromium does not exist/);
    assert.doesNotMatch(r.stdout, /=== test suite/);
  });
});
