// The test command: the whole suite on SQLite, then on PostgreSQL (TEST_DATABASE_URL, default
// postgres://postgres@127.0.0.1:5432/test). `--db sqlite|postgres` runs one; extra arguments are
// test files or globs (default: every test/**/*.test.ts).
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
let dbs = ['sqlite', 'postgres'];
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--db') dbs = [args[++i]];
  else files.push(args[i]);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '3';
let failed = false;
for (const db of dbs) {
  console.log(`\n=== test suite on ${db} ===`);
  const r = spawnSync(
    process.execPath,
    ['--test', `--test-concurrency=${concurrency}`, '--test-timeout=120000', ...(files.length ? files : ['test/**/*.test.ts'])],
    { stdio: 'inherit', env: { ...process.env, TEST_DB: db } },
  );
  if (r.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
