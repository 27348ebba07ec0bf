// What a new operator meets first: one configuration for CLI and server (.env), help everywhere,
// one-line errors, the start banner, and clear failures for a wrong Node or an unreachable database.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, TEST_DB, type TestDatabase } from '../helpers/app.ts';
import { ROOT, runCli } from '../helpers/cli.ts';
import { startService } from '../helpers/process.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';
import { DATABASE_INDEPENDENT } from '../helpers/once.ts';

const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;

describe('one configuration for CLI and server: .env', () => {
  let db: TestDatabase;
  let dir: string;
  before(() => {
    db = createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'platform-dotenv-'));
    // the database only in .env; the process environment names none
    writeFileSync(
      join(dir, '.env'),
      Object.entries(db.env)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n') + '\n',
    );
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await db.drop();
  });

  test('a key created from the .env directory works on a server started from there; both name the same database', async () => {
    const created = await runCli(['api-key', 'create', '--label', 'from dotenv'], {}, PATIENCE_MS, { cwd: dir });
    assert.equal(created.code, 0, created.stderr);
    const key = JSON.parse(created.stdout).key as string; // stdout is still exactly one JSON document
    const expected =
      TEST_DB === 'sqlite' ? `SQLite ${join(db.env.DATA_DIR, 'platform.sqlite')}` : `PostgreSQL ${db.env.DATABASE_URL}`;
    assert.match(created.stderr, new RegExp(`^Database: ${expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));

    const service = await startService({ LOG_LEVEL: 'info' }, { cwd: dir });
    try {
      const res = await fetch(`${service.url}/api/v0/developerApps/fetch`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: '{"clientId":"x"}',
      });
      assert.equal(res.status, 404, 'the key is accepted (404: no such app), not 401');
      // the banner and the structured start log name the database and the data directory
      assert.match(service.stderr(), new RegExp(`listening on ${service.url}`));
      assert.match(service.stderr(), new RegExp(`${service.url}/docs`));
      assert.ok(service.stderr().includes(`Database:   ${expected}`), service.stderr());
      assert.match(service.stderr(), /api-key create/);
      assert.doesNotMatch(service.stderr(), /TEST-ONLY/, 'no egress warning without the test-only settings');
      const start = service
        .stdout()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .find((l) => l.msg === 'platform started');
      assert.ok(start, service.stdout());
      assert.equal(start.database, expected);
      assert.equal(start.dataDir, db.env.DATA_DIR);
    } finally {
      assert.equal(await service.stop(), 0);
    }
  });

  test('the real environment wins over .env', async () => {
    const other = mkdtempSync(join(tmpdir(), 'platform-env-'));
    try {
      const r = await runCli(['api-key', 'list'], { DATA_DIR: other, DATABASE_URL: '' }, PATIENCE_MS, { cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(`Database: SQLite ${other.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/platform.sqlite`),
      );
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});

describe('help, version and one-line errors', DATABASE_INDEPENDENT, () => {
  test('--version prints the package version', async () => {
    const r = await runCli(['--version']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `${VERSION}\n`);
  });

  test('--help and -h work on every command and subcommand, and never run it', async () => {
    const top = await runCli(['--help']);
    assert.equal(top.code, 0);
    // each usage line starts with the command's words
    const names = top.stdout
      .split('\n')
      .filter((l) => l.startsWith('  '))
      .map((l) =>
        l
          .trim()
          .split(/\s{2,}/)[0]
          .split(' '),
      ) // the synopsis, before the description
      .map((words) => words.slice(0, words.findIndex((w) => !/^[a-z][a-z-]*$/.test(w)) >>> 0).join(' '))
      .filter(Boolean);
    for (const expected of [
      'serve',
      'migrate',
      'api-key create',
      'app create',
      'app list',
      'app update',
      'app rotate-secret',
      'app delete',
      'token create',
      'token list',
      'token revoke',
      'worker',
    ]) {
      assert.ok(names.includes(expected), `${expected} in ${names.join(', ')}`);
    }
    // no database touched: a DATABASE_URL nobody listens on would fail any command that ran
    const env = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };
    const runs = names.flatMap((n) => [
      [...n.split(' '), '--help'],
      [...n.split(' '), '-h'],
    ]);
    for (let i = 0; i < runs.length; i += 4) {
      const results = await Promise.all(runs.slice(i, i + 4).map((args) => runCli(args, env)));
      results.forEach((r, j) => {
        const args = runs[i + j];
        assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stdout, new RegExp(`^Usage: platform ${args.slice(0, -1).join(' ')}`), args.join(' '));
        assert.equal(r.stderr, '', args.join(' '));
      });
    }
  });

  test('serve --help prints the usage and exits instead of starting a server', async () => {
    const r = await runCli(['serve', '--help'], { PORT: '1' });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: platform serve/);
  });

  test('platform api-key, platform app and platform token alone list their subcommands', async () => {
    for (const [group, subs] of [
      ['api-key', ['create', 'list', 'revoke']],
      ['app', ['create', 'list', 'update', 'rotate-secret', 'delete']],
      ['token', ['create', 'list', 'revoke']],
    ] as const) {
      const r = await runCli([group]);
      assert.equal(r.code, 2, r.stderr);
      for (const s of subs) assert.match(r.stdout, new RegExp(`^  ${group} ${s}\\b`, 'm'), `${group} ${s}`);
      assert.doesNotMatch(r.stdout, /^ {2}(serve|migrate)\b/m);
    }
  });

  test('validation errors are one line on stderr, not the whole usage', async () => {
    for (const args of [
      ['api-key', 'create'],
      ['api-key', 'create', '--nope'],
      ['app', 'delete'],
      ['token', 'create', '--address', '0x0000000000000000000000000000000000000001'],
      ['frobnicate'],
      ['app', 'frobnicate'],
    ]) {
      const r = await runCli(args, { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      const lines = r.stderr.split('\n').filter((l) => l && !l.startsWith('Database: '));
      assert.equal(lines.length, 1, `${args.join(' ')}:\n${r.stderr}`);
      assert.doesNotMatch(r.stderr, /Usage:/);
    }
  });
});

describe('start-up failures in one line', DATABASE_INDEPENDENT, () => {
  test('an unreachable DATABASE_URL is named, without its password, and the command exits 1', async () => {
    for (const args of [['api-key', 'list'], ['serve']]) {
      const r = await runCli(args, { DATABASE_URL: 'postgres://ops:hunter2@127.0.0.1:1/platform', PORT: '0' });
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      const lines = r.stderr.split('\n').filter((l) => l && !l.startsWith('Database: '));
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0], /DATABASE_URL \(postgres:\/\/ops:\*\*\*@127\.0\.0\.1:1\/platform\)/);
      assert.match(lines[0], /ECONNREFUSED/);
      assert.ok(!r.stderr.includes('hunter2') && !r.stdout.includes('hunter2'));
    }
  });

  // The machine's own `node` may be older than 24 (the project pins 24 as a dev dependency).
  const systemNode = (() => {
    for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
      try {
        const v = execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
        if (Number(v.split('.')[0]) < 24) return candidate;
      } catch {
        /* not there */
      }
    }
    return null;
  })();

  test('a Node older than 24 gets one line saying so', {
    skip: systemNode ? false : 'no Node older than 24 on this machine',
  }, async () => {
    const r = await runCli(['api-key', 'list'], {}, PATIENCE_MS, { node: systemNode! });
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /needs Node\.js 24 or newer; this is Node\.js \d+\./);
    assert.doesNotMatch(r.stderr, /ERR_UNKNOWN_FILE_EXTENSION/);
  });
});
