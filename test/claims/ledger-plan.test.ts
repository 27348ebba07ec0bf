// An address's claim numbers are read through its attempts (migration 0032: the ledger has no
// address index): the attempts' address index finds the address's attempts, and the ledger's
// primary key (claim_id, claim_number) each one's ledger row. Asserted on plans taken before and
// after ANALYZE on a ledger of 20,000 numbers held by 20,000 addresses, by their shape and by the rows
// they read, never by their time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { ADDRESS_NUMBERS, ADDRESS_NUMBERS_ON_CLAIM } from '../../src/claims/hot-sql.ts';
import { explainedNodes, planShape, sqlitePlanSteps } from '../helpers/plans.ts';
import { useApp } from '../helpers/use-app.ts';

const t = useApp();

const ADDRESS = 'bb1target';

test("an address's claim numbers, on one claim and on every claim, are index reads on both databases", async () => {
  const db = t.ctx.db;
  // 4 claims; 20,000 successful attempts of distinct addresses, each with its ledger row; then the
  // address's own: 3 successes and 2 failures on c1, 1 success on c2
  if (t.ctx.dialect === 'sqlite') {
    await sql`
      insert into claim_attempts (claim_attempt_id, claim_id, lane, platform_address, status, success, error,
        claim_number, attempted_at, resolved_at)
      with recursive g(i) as (select 1 union all select i + 1 from g where i < 20000)
      select printf('%032x', i), 'c' || (i % 4), 'c' || (i % 4), 'bb1' || i, 'success', 1, '', i, 1000 + i, 2000 + i
      from g`.execute(db);
  } else {
    await sql`
      insert into claim_attempts (claim_attempt_id, claim_id, lane, platform_address, status, success, error,
        claim_number, attempted_at, resolved_at)
      select lpad(to_hex(i), 32, '0'), 'c' || (i % 4), 'c' || (i % 4), 'bb1' || i, 'success', 1, '', i, 1000 + i, 2000 + i
      from generate_series(1, 20000) as i`.execute(db);
  }
  const own = [
    { id: 'own1', claim: 'c1', ok: true, n: 30001 },
    { id: 'own2', claim: 'c1', ok: false, n: -1 },
    { id: 'own3', claim: 'c1', ok: true, n: 30002 },
    { id: 'own4', claim: 'c1', ok: false, n: -1 },
    { id: 'own5', claim: 'c1', ok: true, n: 30000 },
    { id: 'own6', claim: 'c2', ok: true, n: 30003 },
  ];
  await db
    .insertInto('claim_attempts')
    .values(
      own.map((a, i) => ({
        claim_attempt_id: a.id,
        claim_id: a.claim,
        lane: a.claim,
        platform_address: ADDRESS,
        status: a.ok ? 'success' : 'failure',
        success: a.ok ? 1 : 0,
        error: a.ok ? '' : 'no',
        claim_number: a.n,
        attempted_at: 50_000 + i,
        resolved_at: 60_000 + i,
      })),
    )
    .execute();
  await sql`
    insert into claim_numbers (claim_id, claim_number, platform_address, claim_attempt_id)
    select claim_id, claim_number, platform_address, claim_attempt_id from claim_attempts where status = 'success'`.execute(
    db,
  );
  const oneClaim = ADDRESS_NUMBERS_ON_CLAIM(t.ctx.dialect, [ADDRESS, 'c1']);
  const everyClaim = ADDRESS_NUMBERS(t.ctx.dialect, [ADDRESS]);
  assert.deepEqual(
    (await db.executeQuery(oneClaim)).rows.map((r) => (r as { claim_number: number }).claim_number),
    [30000, 30001, 30002],
  );
  assert.deepEqual((await db.executeQuery(everyClaim)).rows, [
    { claim_id: 'c1', claim_number: 30000 },
    { claim_id: 'c1', claim_number: 30001 },
    { claim_id: 'c1', claim_number: 30002 },
    { claim_id: 'c2', claim_number: 30003 },
  ]);

  // without statistics, and once ANALYZE has seen the ledger
  for (const analyzed of [false, true]) {
    if (analyzed) await sql`analyze`.execute(db);
    await assertPlans(analyzed ? 'after ANALYZE' : 'before ANALYZE', [
      ['one claim', oneClaim, 'claim_attempts_address'],
      ['every claim', everyClaim, 'claim_attempts_account'],
    ]);
  }
});

async function assertPlans(when: string, cases: Array<[string, CompiledQuery, string]>): Promise<void> {
  const db = t.ctx.db;
  for (const [what, query, attemptsIndex] of cases) {
    const name = `${what}, ${when}`;
    if (t.ctx.dialect === 'sqlite') {
      const plan = (await sqlitePlanSteps(db, query)).join('; ');
      assert.match(plan, new RegExp(`SEARCH a USING INDEX ${attemptsIndex} \\(`), `${name}: ${plan}`);
      assert.match(
        plan,
        /SEARCH n USING INDEX sqlite_autoindex_claim_numbers_1 \(claim_id=\? AND claim_number=\?\)/,
        `${name}: ${plan}`,
      );
      assert.doesNotMatch(plan, /\bSCAN\b/, `${name}: ${plan}`);
      continue;
    }
    const values = query.parameters;
    const nodes = explainedNodes(
      (await db.executeQuery(CompiledQuery.raw(`explain (analyze, format json) ${query.sql}`, [...values]))).rows,
    );
    const shape = planShape(nodes);
    assert.ok(
      nodes.some((n) => n['Index Name'] === attemptsIndex),
      `${name} finds the attempts by address: ${shape}`,
    );
    assert.ok(
      nodes.some((n) => n['Index Name'] === 'claim_numbers_pk'),
      `${name} finds the numbers by key: ${shape}`,
    );
    for (const n of nodes) {
      assert.doesNotMatch(n['Node Type'], /Seq Scan|Hash/, `${name}: ${shape}`);
      // every node reads the address's rows only (not the ledger, nor the other attempts)
      assert.ok((n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1) <= 10, `${name} reads few rows: ${shape}`);
    }
  }
}
