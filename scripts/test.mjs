// The test command: the whole suite on SQLite, then on PostgreSQL (TEST_DATABASE_URL, default
// postgres://postgres@127.0.0.1:5432/test). `--db sqlite|postgres` runs one; extra arguments are
// test files or globs (default: every test/**/*.test.ts).
//
// On a fresh machine it first sees to what the suite needs, or stops with one line saying how:
// - the browser tests drive Debian's Chromium (/usr/bin/chromium, never a downloaded browser):
//   installed with apt-get when missing and this runs as root on a Debian-like system;
// - PostgreSQL at TEST_DATABASE_URL: a database missing on a running server is created.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
let dbs = ['sqlite', 'postgres'];
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--db') dbs = [args[++i]];
  else files.push(args[i]);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '3';
// Every test file is its own process that imports the TypeScript sources: with Node's compile cache
// each module is type-stripped and compiled once per change, not once per process (the suite's CPU
// time drops by about a third). NODE_DISABLE_COMPILE_CACHE=1 turns it off.
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'node-compile-cache');
const databaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Stops the run with one line on stderr. */
function fail(line) {
  process.stderr.write(line + '\n');
  process.exit(1);
}

const redacted = (url) => {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
};

// --- Chromium, when the run includes the browser tests
const DEBIAN_CHROMIUM = '/usr/bin/chromium';
function ensureChromium() {
  const wanted = process.env.CHROMIUM_PATH ?? DEBIAN_CHROMIUM;
  if (existsSync(wanted)) return;
  if (process.env.CHROMIUM_PATH)
    fail(
      `The browser tests need Chromium, but CHROMIUM_PATH=${wanted} does not exist: point it at a Chromium binary, or unset it to use Debian's ${DEBIAN_CHROMIUM}.`,
    );
  const how = `install Debian's package: sudo apt-get install -y chromium (or set CHROMIUM_PATH to a Chromium binary)`;
  const canInstall = process.getuid?.() === 0 && existsSync('/usr/bin/apt-get');
  if (!canInstall) fail(`The browser tests need Chromium at ${DEBIAN_CHROMIUM}: ${how}.`);
  console.log(
    `The browser tests need Debian's Chromium at ${DEBIAN_CHROMIUM}; installing it now: apt-get install -y chromium`,
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  const r = spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env });
  if (r.status !== 0 || !existsSync(DEBIAN_CHROMIUM))
    fail(`Installing Chromium failed (apt-get exit ${r.status}); ${how}.`);
}

// --- PostgreSQL
async function ensureDatabase() {
  const { default: pg } = await import('pg');
  const connect = async (url) => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    await client.connect();
    return client;
  };
  try {
    await (await connect(databaseUrl)).end();
    return;
  } catch (err) {
    if (err.code !== '3D000') {
      const reason = err.message || err.code || String(err);
      fail(
        `Cannot use the test database TEST_DATABASE_URL=${redacted(databaseUrl)} (${reason}): start PostgreSQL there, point TEST_DATABASE_URL at one, or run only SQLite with --db sqlite.`,
      );
    }
  }
  // the server is up, the database is not there: create it
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  try {
    const admin = await connect(url.toString());
    try {
      await admin.query(`create database "${name.replace(/"/g, '""')}"`);
    } finally {
      await admin.end();
    }
  } catch (err) {
    if (err.code !== '42P04')
      fail(
        `The test database of TEST_DATABASE_URL=${redacted(databaseUrl)} does not exist and cannot be created (${err.message}): create it, or run only SQLite with --db sqlite.`,
      );
  }
  console.log(`Created the test database "${name}" (TEST_DATABASE_URL=${redacted(databaseUrl)}).`);
}

/** Drops the per-file test schemas (t_<hex>) left in the test database. */
async function dropTestSchemas() {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(`select nspname from pg_namespace where nspname ~ '^t_[0-9a-f]{12}$'`);
    for (const { nspname } of rows) await client.query(`drop schema if exists "${nspname}" cascade`);
  } finally {
    await client.end();
  }
}

if (files.length === 0 || files.some((f) => /browser|\*\*/.test(f))) ensureChromium();
if (dbs.includes('postgres')) await ensureDatabase();

let failed = false;
for (const db of dbs) {
  console.log(`\n=== test suite on ${db} ===`);
  if (db === 'postgres') await dropTestSchemas(); // leftovers of an interrupted run
  const r = spawnSync(
    process.execPath,
    [
      '--test',
      `--test-concurrency=${concurrency}`,
      // a safety net only: no test is meant to come near it, however loaded the machine (a test's own
      // waits end when their condition holds; test/helpers/patience.ts)
      '--test-timeout=1800000',
      // a file whose setup failed may leave a server or a timer open: once its tests have ended, it
      // exits instead of holding the run open
      '--test-force-exit',
      ...(files.length ? files : ['test/**/*.test.ts']),
    ],
    { stdio: 'inherit', env: { ...process.env, TEST_DB: db, TEST_DEFER_SCHEMA_DROP: db === 'postgres' ? '1' : '0' } },
  );
  if (r.status !== 0) failed = true;
  if (db === 'postgres') await dropTestSchemas();
}
process.exit(failed ? 1 : 0);
