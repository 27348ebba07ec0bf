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
const databaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

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

let failed = false;
for (const db of dbs) {
  console.log(`\n=== test suite on ${db} ===`);
  if (db === 'postgres') await dropTestSchemas(); // leftovers of an interrupted run
  const r = spawnSync(
    process.execPath,
    ['--test', `--test-concurrency=${concurrency}`, '--test-timeout=120000', ...(files.length ? files : ['test/**/*.test.ts'])],
    { stdio: 'inherit', env: { ...process.env, TEST_DB: db, TEST_DEFER_SCHEMA_DROP: db === 'postgres' ? '1' : '0' } },
  );
  if (r.status !== 0) failed = true;
  if (db === 'postgres') await dropTestSchemas();
}
process.exit(failed ? 1 : 0);
