// The test command: the whole suite on SQLite and on PostgreSQL (TEST_DATABASE_URL, default
// postgres://postgres@127.0.0.1:5432/test). `--db sqlite|postgres` runs one; extra arguments are
// test files or globs (default: every test/**/*.test.ts).
//
// Every (file, database) pair is one `node --test <file>` process; the pairs of both databases share
// one pool of TEST_CONCURRENCY processes, so one file's waits (PostgreSQL, a child process, the
// browser) overlap another's CPU. A file marked database-independent runs once (see ONCE below). Each
// file prints one line with its wall and CPU time when it ends, its whole output when it fails
// (TEST_VERBOSE=1: always); the run ends with the slowest files and the totals.
//
// On a fresh machine it first sees to what the suite needs, or stops with one line saying how:
// - the browser tests drive Debian's Chromium (/usr/bin/chromium, never a downloaded browser):
//   installed with apt-get when missing and this runs as root on a Debian-like system;
// - PostgreSQL at TEST_DATABASE_URL: a database missing on a running server is created.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, globSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
let dbs = ['sqlite', 'postgres'];
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--db') dbs = [args[++i]];
  else files.push(args[i]);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '4';
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

// --- which files run on which database
//
// A file whose behaviour does not depend on the database (pure code, the docs, the CLI's argument
// handling, browser UI flows over the HTTP API that other files test on both databases) carries the
// marker line `// test-run: once (<why>)` near its top. When the run covers both databases it runs
// once, on SQLite; every other file runs on both. With `--db X` every file runs on X. A group of
// tests inside a file that also touches storage says the same with test/helpers/once.ts.
// SQLite for the once-only runs: it needs no server, a file's database is a fresh directory (no
// schema to create and migrate over a connection), and `npm test -- --db sqlite`, the quickest
// local run, still runs everything.
const ONCE = /^\/\/ test-run: once\b/m;
const expand = (pattern) => (/[*?[{]/.test(pattern) ? globSync(pattern).sort() : [pattern]);
const testFiles = [...new Set((files.length ? files : ['test/**/*.test.ts']).flatMap(expand))];
const onceOnly = (file) => {
  try {
    return ONCE.test(readFileSync(file, 'utf8').slice(0, 4000));
  } catch {
    return false; // a missing file: node --test reports it
  }
};
const jobs = [];
for (const file of testFiles) {
  if (dbs.length > 1 && onceOnly(file)) jobs.push({ file, db: 'sqlite' });
  else for (const db of dbs) jobs.push({ file, db });
}

// Longest first, so the pool does not end waiting on one slow file: each file's wall time from the
// last run on this machine (TEST_TIMES_FILE), else its size, browser and process-starting files first.
const timesFile = process.env.TEST_TIMES_FILE ?? join(tmpdir(), 'platform-test-times.json');
let lastTimes = {};
try {
  lastTimes = JSON.parse(readFileSync(timesFile, 'utf8'));
} catch {
  /* first run here */
}
const estimate = ({ file, db }) => {
  const known = lastTimes[`${db} ${file}`];
  if (typeof known === 'number') return known;
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return 0;
  }
  const heavy = /helpers\/chromium|runCli\(|startService\(/.test(text) ? 60 : 0;
  return heavy + text.length / 1000 + (db === 'postgres' ? 1 : 0);
};
jobs.sort((a, b) => estimate(b) - estimate(a));

if (
  testFiles.some(
    (f) => /browser|chromium/.test(f) || (existsSync(f) && /helpers\/chromium/.test(readFileSync(f, 'utf8'))),
  )
)
  ensureChromium();
if (jobs.some((j) => j.db === 'postgres')) {
  await ensureDatabase();
  await dropTestSchemas(); // leftovers of an interrupted run
}

/** CPU seconds (user + system) of this process's waited-for children so far (Linux; else null). */
function childCpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100; // cutime, cstime in clock ticks (USER_HZ 100)
  } catch {
    return null;
  }
}

const countsOf = (db) => jobs.filter((j) => j.db === db).length;
console.log(
  `\n=== test suite: ${jobs.length} file runs (${dbs.map((db) => `${countsOf(db)} on ${db}`).join(', ')}` +
    `${dbs.length > 1 ? `; ${testFiles.filter(onceOnly).length} database-independent files once, on SQLite` : ''}), ${concurrency} at once ===`,
);

const started = Date.now();
const results = [];
let cpuBefore = childCpuSeconds();
const verbose = process.env.TEST_VERBOSE === '1';

// Run from inside a test (test/ops/test-command.test.ts), the environment says "you are a test
// runner's child": the files' runners must not believe it, or they report to nobody and pass.
const { NODE_TEST_CONTEXT: _, ...childEnv } = process.env;

function runJob(job) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(
      process.execPath,
      [
        '--test',
        '--test-reporter=spec',
        // a safety net only: no test is meant to come near it, however loaded the machine (a test's own
        // waits end when their condition holds; test/helpers/patience.ts)
        '--test-timeout=1800000',
        // a file whose setup failed may leave a server or a timer open: once its tests have ended, it
        // exits instead of holding the run open
        '--test-force-exit',
        job.file,
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...childEnv,
          TEST_DB: job.db,
          TEST_DEFER_SCHEMA_DROP: job.db === 'postgres' ? '1' : '0',
          // the database-independent groups of a file (test/helpers/once.ts) ran on SQLite already
          TEST_SKIP_DATABASE_INDEPENDENT: dbs.length > 1 && job.db === 'postgres' ? '1' : '0',
        },
      },
    );
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (code, signal) => {
      const cpuNow = childCpuSeconds();
      const cpu = cpuNow === null || cpuBefore === null ? null : cpuNow - cpuBefore;
      cpuBefore = cpuNow;
      const seconds = (Date.now() - t0) / 1000;
      const ok = code === 0;
      const tests = /^ℹ tests (\d+)/m.exec(output)?.[1] ?? '?';
      const result = { ...job, seconds, cpu, ok, tests };
      results.push(result);
      const cpuText = cpu === null ? '' : `, ${cpu.toFixed(1)} s CPU`;
      const line = `${ok ? '✔' : '✖'} ${job.db.padEnd(8)} ${job.file} (${tests} tests, ${seconds.toFixed(1)} s${cpuText})`;
      if (!ok || verbose) {
        process.stdout.write(`\n--- ${job.file} on ${job.db}${signal ? ` (killed by ${signal})` : ''}\n${output}\n`);
      }
      console.log(line);
      resolve();
    });
  });
}

const queue = [...jobs];
process.on('SIGINT', () => process.exit(130)); // the children get the terminal's SIGINT themselves
await Promise.all(
  Array.from({ length: Math.max(1, Number(concurrency) || 1) }, async () => {
    for (let job = queue.shift(); job; job = queue.shift()) {
      await runJob(job);
    }
  }),
);
if (jobs.some((j) => j.db === 'postgres')) await dropTestSchemas();

const failedRuns = results.filter((r) => !r.ok);
const wall = (Date.now() - started) / 1000;
const cpuTotal = results.every((r) => r.cpu !== null) ? results.reduce((s, r) => s + r.cpu, 0) : null;
const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 10);
console.log(`\nslowest files:`);
for (const r of slowest)
  console.log(
    `  ${r.seconds.toFixed(1).padStart(6)} s  ${r.cpu === null ? '' : `${r.cpu.toFixed(1).padStart(6)} s CPU  `}${r.db.padEnd(8)} ${r.file}`,
  );
console.log(
  `\n${results.length - failedRuns.length} of ${results.length} file runs passed in ${(wall / 60).toFixed(1)} min` +
    `${cpuTotal === null ? '' : ` (${(cpuTotal / 60).toFixed(1)} CPU-min)`}`,
);
for (const r of failedRuns) console.log(`✖ failed: ${r.file} on ${r.db}`);

// the wall times, for the next run's order (only a whole run's, or added to them)
try {
  const times = { ...lastTimes };
  for (const r of results) times[`${r.db} ${r.file}`] = Math.round(r.seconds * 10) / 10;
  writeFileSync(timesFile, JSON.stringify(times));
} catch {
  /* ordering is only an optimisation */
}
process.exit(failedRuns.length ? 1 : 0);
