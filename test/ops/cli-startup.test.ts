// Start-up failures of `serve`, `worker` and `migrate` seen by an operator: a failure after the
// database is open still ends the process (exit 1) with one line naming the variable at fault,
// instead of a Node error text or a process living on without a listener; wrong arguments are
// usage errors (exit 2).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { freePort } from '../helpers/process.ts';
import { loadLoops } from '../../src/capabilities.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';
import { DATABASE_INDEPENDENT } from '../helpers/once.ts';

const loops = await loadLoops();

// A process still running after this long never ends on its own (the bug): runCli then kills it and
// reports the exit code null. No slow machine reaches it.
const HANG_MS = PATIENCE_MS;

/** stderr without the `Database: …` line the CLI prints before a command that opens the database. */
const problem = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l && !l.startsWith('Database: '))
    .join('\n');

describe('serve: a start-up failure after the database is open ends the process', () => {
  let db: TestDatabase;
  let blocker: Server;
  let blocked: number;
  before(async () => {
    db = createTestDatabase();
    blocked = await freePort();
    blocker = createServer();
    await new Promise<void>((resolve, reject) => blocker.once('error', reject).listen(blocked, '127.0.0.1', resolve));
  });
  after(async () => {
    await new Promise((r) => blocker.close(r));
    await db.drop();
  });

  const serve = async (env: Record<string, string>) =>
    runCli(['serve'], { ...db.env, HOST: '127.0.0.1', PORT: String(await freePort()), ...env }, HANG_MS);

  test('an unreadable IBC_REGISTRY_FILE: its line, exit 1', async () => {
    const missing = join(db.env.DATA_DIR, 'no-such-registry.json');
    const r = await serve({ IBC_REGISTRY_FILE: missing });
    assert.equal(r.code, 1, `serve kept running:\n${r.stderr}`);
    assert.equal(r.stderr, `Invalid configuration: IBC_REGISTRY_FILE cannot be read (ENOENT): ${missing}\n`);
  });

  test('METRICS_PORT in use: one line naming METRICS_PORT, exit 1', async () => {
    const r = await serve({ METRICS_PORT: String(blocked), METRICS_TOKEN: 'metrics-token-0123456789' });
    assert.equal(r.code, 1, `serve kept running:\n${r.stderr}`);
    assert.equal(r.stderr, `Invalid configuration: METRICS_PORT ${blocked} is already in use on 127.0.0.1\n`);
  });

  test('PORT in use: one line naming PORT, exit 1', async () => {
    const r = await serve({ PORT: String(blocked) });
    assert.equal(r.code, 1, `serve kept running:\n${r.stderr}`);
    assert.equal(r.stderr, `Invalid configuration: PORT ${blocked} is already in use on 127.0.0.1\n`);
  });

  test('a HOST that does not resolve: one line naming HOST, exit 1', async () => {
    const r = await serve({ HOST: 'not-a-host.invalid' });
    assert.equal(r.code, 1, r.stderr);
    // ENOTFOUND, or EAI_AGAIN on a machine without a resolver
    assert.match(
      r.stderr,
      /^Invalid configuration: HOST "not-a-host\.invalid" cannot be resolved \((ENOTFOUND|EAI_AGAIN)\)\n$/,
    );
  });

  test('a HOST that is no address of this machine: one line naming HOST, exit 1', async () => {
    const r = await serve({ HOST: '192.0.2.1' }); // TEST-NET-1: documentation only, never assigned
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr, 'Invalid configuration: HOST 192.0.2.1 is not an address of this machine (EADDRNOTAVAIL)\n');
  });
});

describe('DATA_DIR that cannot be a directory', DATABASE_INDEPENDENT, () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'platform-datadir-'));
    writeFileSync(join(dir, 'file'), 'not a directory\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('a regular file, or a path through one: one line naming DATA_DIR, exit 1 (serve and a one-shot command)', async () => {
    for (const dataDir of [join(dir, 'file'), join(dir, 'file', 'sub')]) {
      for (const args of [['serve'], ['api-key', 'list']]) {
        const r = await runCli(args, { DATA_DIR: dataDir, DATABASE_URL: '', PORT: String(await freePort()) }, HANG_MS);
        assert.equal(r.code, 1, `${args.join(' ')} ${dataDir}: ${r.stderr}`);
        assert.equal(
          r.stderr,
          `Invalid configuration: DATA_DIR is not a directory: ${dataDir}\n`,
          `${args.join(' ')} ${dataDir}`,
        );
      }
    }
  });
});

describe('worker and migrate: usage errors', DATABASE_INDEPENDENT, () => {
  let db: TestDatabase;
  before(async () => {
    db = createTestDatabase();
    // migrated first: commands started together on a fresh database would race to create its tables
    assert.equal((await runCli(['migrate'], db.env)).code, 0);
  });
  after(() => db.drop());

  test('an empty --only, an unknown loop name (with or without --once) and --once with --only exit 2 naming --only', async () => {
    const known = loops
      .map((l) => l.name)
      .sort()
      .join(', ');
    const cases: Array<[string[], RegExp]> = [
      [
        ['worker', '--only', ''],
        /^worker --only needs at least one loop name \(comma-separated\) \('platform worker --help' shows the usage\)$/,
      ],
      [['worker', '--only', ','], /^worker --only needs at least one loop name/],
      [
        ['worker', '--only', 'bogus'],
        new RegExp(
          `^worker --only: unknown background loop "bogus"; known: ${known} \\('platform worker --help' shows the usage\\)$`,
        ),
      ],
      [['worker', '--once', '--only', 'bogus'], /^worker --only: unknown background loop "bogus"; known: /],
      [
        ['worker', '--once', '--only', 'claim-queue'],
        /^worker --once drains the claim queue and takes no --only \('platform worker --help' shows the usage\)$/,
      ],
      [['worker', 'extra'], /^platform worker: .*extra/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args, db.env, HANG_MS)));
    results.forEach((r, i) => {
      const [args, why] = cases[i];
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(problem(r.stderr), why, args.join(' '));
      assert.equal(problem(r.stderr).split('\n').length, 1, r.stderr);
      assert.equal(r.stdout, '', args.join(' '));
    });
  });

  test('migrate takes no option and no argument', async () => {
    for (const [args, why] of [
      [
        ['migrate', '--foo'],
        /^platform migrate: Unknown option '--foo'.* \('platform migrate --help' shows the usage\)$/,
      ],
      [
        ['migrate', 'extra'],
        /^platform migrate: Unexpected argument 'extra'.* \('platform migrate --help' shows the usage\)$/,
      ],
    ] as const) {
      const r = await runCli([...args], db.env);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(problem(r.stderr), why);
      assert.equal(r.stdout, '');
    }
  });
});

describe('several processes starting on a new database at once', () => {
  // serve and worker started together by a process manager: on SQLite both applied the first
  // migrations and one failed ("table … already exists", "UNIQUE constraint failed: kysely_migration.name")
  test('every one migrates or waits for the other, and all succeed', async () => {
    for (let round = 0; round < 3; round++) {
      const fresh = createTestDatabase();
      try {
        const runs = await Promise.all([
          runCli(['migrate'], fresh.env),
          runCli(['api-key', 'list'], fresh.env),
          runCli(['migrate'], fresh.env),
        ]);
        for (const r of runs) assert.equal(r.code, 0, r.stderr);
        const applied = runs.flatMap((r, i) =>
          i === 1 ? [] : (JSON.parse(r.stdout) as { applied: string[] }).applied,
        );
        assert.equal(new Set(applied).size, applied.length, `no migration applied twice: ${applied.join(', ')}`);
      } finally {
        await fresh.drop();
      }
    }
  });
});
