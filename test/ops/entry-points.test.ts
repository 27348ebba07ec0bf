import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../helpers/app.ts';
import { ROOT } from '../helpers/cli.ts';

// The package bin as the README tells users to reach it: `npx platform …` from the checkout
// (npm runs the package's own bin through its shebang, not as `node bin/platform.js`).
function runLinkedBin(
  args: string[],
  env: Record<string, string>,
  command: string[] = ['npx', 'platform'],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], [...command.slice(1), ...args], {
      cwd: ROOT,
      env: {
        ...process.env,
        PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH}`,
        LOG_LEVEL: 'warn',
        ...env,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('package bin (npx platform)', () => {
  let db: TestDatabase;
  before(() => {
    db = createTestDatabase();
  });
  after(() => db.drop());

  test('npx platform runs the CLI and prints its JSON', async () => {
    const r = await runLinkedBin(['api-key', 'create', '--label', 'via link'], db.env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).label, 'via link');
  });

  test('exit codes pass through npx', async () => {
    const r = await runLinkedBin(['no-such-command'], db.env);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Unknown command/);
  });
});

// `./platform`, the documented entry: the CLI on the pinned Node without npm's start-up.
describe('./platform (the CLI without npx)', () => {
  let db: TestDatabase;
  let dir: string;
  before(() => {
    db = createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'platform-loads-'));
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await db.drop();
  });
  const platform = [join(ROOT, 'platform')];

  test('runs the CLI, prints its JSON and passes exit codes through', async () => {
    const r = await runLinkedBin(['api-key', 'create', '--label', 'via ./platform'], db.env, platform);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).label, 'via ./platform');
    const usage = await runLinkedBin(['no-such-command'], db.env, platform);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /Unknown command/);
  });

  /** The source files and packages a CLI run loads (a module hook records every URL it loads). */
  async function loaded(args: string[]): Promise<string[]> {
    const out = join(dir, `${args.join('_').replace(/\W/g, '')}.txt`);
    const hook = join(dir, 'record.mjs');
    writeFileSync(
      hook,
      [
        "import { registerHooks } from 'node:module';",
        "import { appendFileSync } from 'node:fs';",
        'registerHooks({ load(url, context, next) { appendFileSync(process.env.LOADED_FILE, url + "\\n"); return next(url, context); } });',
      ].join('\n'),
    );
    const r = await runLinkedBin(args, { ...db.env, LOADED_FILE: out, NODE_OPTIONS: `--import ${hook}` }, platform);
    assert.equal(r.code, 0, r.stderr);
    return readFileSync(out, 'utf8').trim().split('\n');
  }

  test('--version and --help load little: neither the service, nor the database, nor Fastify', async () => {
    const heavy = (urls: string[]) =>
      urls.filter((u) =>
        /\/src\/(context|server|db\/index)\.ts$|\/node_modules\/(fastify|kysely|pg|better-sqlite3)\//.test(u),
      );
    const version = await loaded(['--version']);
    assert.deepEqual(heavy(version), []);
    assert.ok(!version.some((u) => u.endsWith('/src/capabilities.ts')), 'the version needs no command');
    const help = await loaded(['--help']);
    assert.ok(
      help.some((u) => u.endsWith('/src/capabilities.ts')),
      'the command list is read',
    );
    assert.deepEqual(heavy(help), []);
  });
});
