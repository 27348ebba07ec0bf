// The worker's queue reads stay on the queued attempts under a backlog, whatever the statistics say.
//
// On PostgreSQL, with 20,000 resolved and 50,000 queued attempts and statistics taken during the
// backlog (as autovacuum would), the head of a lane (`status = $1 and lane = $2 order by seq`) was
// planned as a walk of the primary key (seq) that filtered out every resolved row before it reached
// the queued ones, and the lane list (`group by lane`) read every queued row. The statements are
// prepared, so after a few runs a connection may keep a generic plan, in which a status given as a
// parameter cannot match a partial index. The plans are asserted by their shape and by the rows
// they read, never by their time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { LANE_HEAD_FOR_UPDATE, LANE_LIST, QUEUE_HEAD } from '../../src/claims/hot-sql.ts';
import { explainedNodes, type PlanNode, planShape, sqlitePlanSteps } from '../helpers/plans.ts';
import { useApp } from '../helpers/use-app.ts';

const t = useApp();

test('the head of a lane and the lane list read only queued attempts through the partial index, after ANALYZE on a backlog', async () => {
  if (t.ctx.dialect === 'sqlite') {
    // SQLite: the one writer's head of all lanes reads the partial index in order (no sort), also
    // once ANALYZE has seen a backlog (its planner then preferred a filtering walk of the table)
    await sql`
      insert into claim_attempts (claim_attempt_id, claim_id, lane, platform_address, status, success, error,
        claim_number, attempted_at, resolved_at)
      with recursive g(i) as (select 1 union all select i + 1 from g where i < 70000)
      select printf('%032x', i), 'c' || (i % 4), 'c' || (i % 4), 'bb1' || i,
        case when i <= 20000 then 'success' else 'queued' end, case when i <= 20000 then 1 end, '',
        case when i <= 20000 then i else 0 end, 1000 + i, case when i <= 20000 then 2000 + i end
      from g`.execute(t.ctx.db);
    await sql`analyze`.execute(t.ctx.db);
    const q = QUEUE_HEAD('sqlite', [100]);
    const plan = (await sqlitePlanSteps(t.ctx.db, q)).join('; ');
    assert.match(plan, /USING INDEX claim_attempts_queued\b/, plan);
    assert.doesNotMatch(plan, /TEMP B-TREE/, plan);
    return;
  }
  // 4 lanes; 20,000 resolved attempts (the oldest, as in a real backlog) then 50,000 queued
  await sql`
    insert into claim_attempts (claim_attempt_id, claim_id, lane, platform_address, status, success, error,
      claim_number, attempted_at, resolved_at)
    select lpad(to_hex(i), 32, '0'), 'c' || (i % 4), 'c' || (i % 4), 'bb1' || i,
      case when i <= 20000 then 'success' else 'queued' end, case when i <= 20000 then 1 end, '',
      case when i <= 20000 then i else 0 end, 1000 + i, case when i <= 20000 then 2000 + i end
    from generate_series(1, 70000) as i`.execute(t.ctx.db);
  await sql`analyze claim_attempts`.execute(t.ctx.db);

  const explain = async (query: CompiledQuery): Promise<PlanNode[]> =>
    t.ctx.db.connection().execute(async (c) => {
      const q = (s: string) => c.executeQuery(CompiledQuery.raw(s));
      // the plan a pooled connection keeps once PostgreSQL settles on a generic one
      await q('begin');
      await q('set local plan_cache_mode = force_generic_plan');
      await q(`prepare queue_plan as ${query.sql}`);
      try {
        const values = query.parameters.map((p) => `'${String(p)}'`).join(', ');
        return explainedNodes(
          (await q(`explain (analyze, format json) execute queue_plan${values ? `(${values})` : ''}`)).rows,
        );
      } finally {
        await q('rollback');
        await q('deallocate queue_plan');
      }
    });

  const cases = [
    ['lane head', LANE_HEAD_FOR_UPDATE('postgres', ['c1', 'c1', 100])],
    ['lane list', LANE_LIST('postgres', [64])],
  ] as const;
  for (const [name, query] of cases) {
    const nodes = await explain(query);
    const shape = planShape(nodes);
    assert.ok(
      nodes.some((n) => n['Index Name'] === 'claim_attempts_queued'),
      `${name} reads the partial index: ${shape}`,
    );
    for (const n of nodes) {
      assert.doesNotMatch(n['Node Type'], /Seq Scan|Aggregate/, `${name}: ${shape}`);
      if (n['Relation Name'] === 'claim_attempts') {
        assert.equal(n['Rows Removed by Filter'] ?? 0, 0, `${name} filters no resolved rows out: ${shape}`);
      }
      // every node reads a batch's worth of rows at most (not the backlog, nor the history)
      assert.ok((n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1) <= 200, `${name} reads few rows: ${shape}`);
    }
  }
});
