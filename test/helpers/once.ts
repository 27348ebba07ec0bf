// Tests whose behaviour does not depend on the database run once when `npm test` covers both
// databases: on SQLite. A whole file says so with the marker line `// test-run: once (<why>)` near its
// top (scripts/test.mjs then starts it only on SQLite); a group inside a file that also touches storage
// takes this option instead: `describe('…', DATABASE_INDEPENDENT, () => …)`. scripts/test.mjs sets
// TEST_SKIP_DATABASE_INDEPENDENT=1 on the PostgreSQL runs of such a run, where the group is reported
// as skipped. With `--db postgres` alone, everything runs on PostgreSQL.
export const DATABASE_INDEPENDENT: { skip?: string } =
  process.env.TEST_SKIP_DATABASE_INDEPENDENT === '1'
    ? { skip: 'database-independent: runs once, on SQLite, when the run covers both databases' }
    : {};
