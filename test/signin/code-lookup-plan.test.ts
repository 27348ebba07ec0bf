// The code exchange finds its row by the code's hash, whatever the database's statistics say.
//
// On PostgreSQL the token endpoint's statements are prepared on each pooled connection, and after a
// few runs PostgreSQL may keep one generic plan for the connection's life. Planned while the table
// had never been analyzed (a new deployment), the one-statement exchange chose the index
// (client_id, created_at) over the unique code hash, since its conditions name both, and then read
// every authorization of the client on each exchange (10,000 rows per exchange in the sign-in
// benchmark, a quarter of the rate). The statement now takes the row by its code hash first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompiledQuery } from 'kysely';
import { EXCHANGE_CODE, EXCHANGE_CODE_REDIRECT, ROTATE_IN_ONE } from '../../src/signin/sql.ts';
import { authorizationRow } from '../helpers/signin.ts';
import { sqlitePlanSteps } from '../helpers/plans.ts';
import { useApp } from '../helpers/use-app.ts';

const t = useApp();
const CLIENT = 'c'.repeat(64);
const REDIRECT = 'https://app.example/cb';

/** Index names anywhere in a PostgreSQL JSON plan. */
function indexesOf(plan: unknown, out: string[] = []): string[] {
  if (Array.isArray(plan)) for (const p of plan) indexesOf(p, out);
  else if (plan && typeof plan === 'object') {
    for (const [k, v] of Object.entries(plan)) {
      if (k === 'Index Name') out.push(String(v));
      else indexesOf(v, out);
    }
  }
  return out;
}

test('the one-statement exchange and rotation read one row by its key, on a table never analyzed', async () => {
  const now = Date.now();
  // one client's codes, fewer than autovacuum's threshold: the table stays without statistics
  await t.ctx.db
    .insertInto('signin_authorizations')
    .values(
      Array.from({ length: 20 }, (_, i) =>
        authorizationRow({
          authorization_id: String(i).padStart(32, 'a'),
          code_hash: String(i).padStart(64, 'h'),
          client_id: CLIENT,
          redirect_uri: REDIRECT,
          created_at: now,
        }),
      ),
    )
    .execute();
  const params = [now, null, 'a', now + 1, 'r', now + 2, 'h'.padEnd(64, '0'), CLIENT, now, now - 600_000];
  const cases = [
    [EXCHANGE_CODE, params],
    [EXCHANGE_CODE_REDIRECT, [...params, REDIRECT]],
    // the refresh rotation, the other prepared statement that names the client
    [ROTATE_IN_ONE, ['a', now + 1, 'r', now + 2, '1'.padStart(32, 'a'), 'x', CLIENT, now]],
  ] as const;
  for (const [statement, args] of cases) {
    const query = statement(t.ctx.dialect, args);
    let used: string[];
    if (t.ctx.dialect === 'postgres') {
      used = await t.ctx.db.connection().execute(async (c) => {
        const q = (s: string) => c.executeQuery(CompiledQuery.raw(s));
        // the plan a pooled connection keeps once PostgreSQL settles on a generic one
        await q('set plan_cache_mode = force_generic_plan');
        await q(`prepare exchange_plan as ${query.sql}`);
        try {
          const values = query.parameters.map((p) => (p === null ? 'null' : `'${String(p)}'`)).join(', ');
          const rows = (await q(`explain (format json) execute exchange_plan(${values})`)).rows as Array<
            Record<string, unknown>
          >;
          return indexesOf(rows[0]!['QUERY PLAN']);
        } finally {
          await q('deallocate exchange_plan');
          await q('reset plan_cache_mode');
        }
      });
    } else {
      used = await sqlitePlanSteps(t.ctx.db, query);
    }
    assert.ok(used.length > 0, 'the plan reads through an index');
    for (const step of used) {
      assert.doesNotMatch(step, /client/, `the exchange must not scan a client's authorizations: ${used.join('; ')}`);
    }
  }
});
