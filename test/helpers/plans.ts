// Query plans for the plan tests (test/claims/*-plan.test.ts, test/signin/code-lookup-plan.test.ts),
// which assert a statement's plan by its shape and the rows it reads, never by its time.
import { CompiledQuery } from 'kysely';
import type { DB } from '../../src/db/index.ts';

/** A node of PostgreSQL's `explain (format json)`, with the fields the tests read. */
export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** The plan's nodes, depth first. */
export function nodesOf(node: PlanNode, out: PlanNode[] = []): PlanNode[] {
  out.push(node);
  for (const p of node.Plans ?? []) nodesOf(p, out);
  return out;
}

/** The nodes of an `explain (…, format json)` result. */
export function explainedNodes(rows: unknown[]): PlanNode[] {
  return nodesOf((rows as Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>)[0]!['QUERY PLAN'][0]!.Plan);
}

/** One line for an assertion's message: each node's type, and its index. */
export function planShape(nodes: PlanNode[]): string {
  return nodes.map((n) => `${n['Node Type']}${n['Index Name'] ? ` on ${n['Index Name']}` : ''}`).join(' > ');
}

/** SQLite: the steps of `explain query plan` for the query, in order. */
export async function sqlitePlanSteps(db: DB, query: CompiledQuery): Promise<string[]> {
  const rows = (await db.executeQuery(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters])))
    .rows as Array<{ detail: string }>;
  return rows.map((r) => r.detail);
}
