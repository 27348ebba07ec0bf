// The README's test command on a machine missing what it needs: one clear line, never a stack
// trace; a missing test database on a running server is created. (scripts/test.mjs as a process.)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
      const r = testCommand(['--db', 'postgres', 'test/shared/uint-ranges.test.ts'], {
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

/**
 * A database of its own for a nested run: the runner drops every test schema of the database it is
 * given, so a nested run on the suite's own database would drop the schemas of files running beside
 * this one. The runner creates it; `drop` removes it.
 */
function ownDatabase() {
  const url = new URL(TEST_DATABASE_URL);
  const name = `${url.pathname.slice(1)}_runner_${randomBytes(4).toString('hex')}`;
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const admin = new URL(TEST_DATABASE_URL);
      admin.pathname = '/postgres';
      const client = new pg.Client({ connectionString: admin.toString() });
      await client.connect();
      try {
        await client.query(`drop database if exists "${name}"`);
      } finally {
        await client.end();
      }
    },
  };
}

describe('npm test: which files run on which database', () => {
  // Two probe files: one marked database-independent as a whole, one with a database-independent
  // group beside a group that runs everywhere. Each test prints the database it ran on.
  const dir = mkdtempSync(join(tmpdir(), 'platform-test-command-'));
  const once = join(ROOT, 'test', 'helpers', 'once.ts');
  const probe = (name: string) => `test('${name}', () => { console.log('ran ${name} on ' + process.env.TEST_DB); });`;
  const whole = join(dir, 'whole.test.ts');
  const mixed = join(dir, 'mixed.test.ts');
  writeFileSync(whole, `// test-run: once (a probe)\nimport { test } from 'node:test';\n${probe('whole')}\n`);
  writeFileSync(
    mixed,
    [
      `import { describe, test } from 'node:test';`,
      `import { DATABASE_INDEPENDENT } from ${JSON.stringify(once)};`,
      `describe('everywhere', () => { ${probe('storage')} });`,
      `describe('once', DATABASE_INDEPENDENT, () => { ${probe('independent')} });`,
    ].join('\n'),
  );
  const ran = (stdout: string) => [...stdout.matchAll(/^ran (\w+) on (\w+)$/gm)].map((m) => `${m[1]} ${m[2]}`).sort();

  test('both databases: a marked file and a marked group run once, on SQLite; the rest on both', async () => {
    const db = ownDatabase();
    try {
      const r = testCommand([whole, mixed], { TEST_DATABASE_URL: db.url, TEST_VERBOSE: '1' });
      assert.equal(r.code, 0, r.stderr + r.stdout);
      assert.deepEqual(ran(r.stdout), ['independent sqlite', 'storage postgres', 'storage sqlite', 'whole sqlite']);
      // one line per file run, with its database, wall time and CPU time
      assert.match(
        r.stdout,
        new RegExp(`^✔ sqlite +${whole.replace(/[.]/g, '\\.')} \\(1 tests, [\\d.]+ s, [\\d.]+ s CPU\\)$`, 'm'),
      );
      assert.doesNotMatch(r.stdout, /^✔ postgres +\S*whole\.test\.ts/m);
      assert.match(r.stdout, /^✔ postgres +\S*mixed\.test\.ts/m);
      assert.match(r.stdout, /3 of 3 file runs passed/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await db.drop();
    }
  });

  test('one database named: every file and group runs on it', async () => {
    const dir2 = mkdtempSync(join(tmpdir(), 'platform-test-command-'));
    const db = ownDatabase();
    try {
      const w = join(dir2, 'whole.test.ts');
      writeFileSync(w, `// test-run: once (a probe)\nimport { test } from 'node:test';\n${probe('whole')}\n`);
      const r = testCommand(['--db', 'postgres', w], { TEST_DATABASE_URL: db.url, TEST_VERBOSE: '1' });
      assert.equal(r.code, 0, r.stderr + r.stdout);
      assert.deepEqual(ran(r.stdout), ['whole postgres']);
    } finally {
      rmSync(dir2, { recursive: true, force: true });
      await db.drop();
    }
  });

  test('a failing file fails the run and its output is shown', () => {
    const dir3 = mkdtempSync(join(tmpdir(), 'platform-test-command-'));
    try {
      const f = join(dir3, 'fails.test.ts');
      writeFileSync(
        f,
        `import { test } from 'node:test';\ntest('fails', () => { throw new Error('planted failure'); });\n`,
      );
      const r = testCommand(['--db', 'sqlite', f], {});
      assert.equal(r.code, 1, r.stdout);
      assert.match(r.stdout, /planted failure/);
      assert.match(r.stdout, /^✖ sqlite +\S*fails\.test\.ts/m);
      assert.match(r.stdout, /0 of 1 file runs passed/);
    } finally {
      rmSync(dir3, { recursive: true, force: true });
    }
  });
});
