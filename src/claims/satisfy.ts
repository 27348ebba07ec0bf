// Success logic. By default every plugin must pass. `satisfyMethod` relaxes that with a tree of
// AND / OR (M of N via options.minNumSatisfied) / NOT over instance ids. numUses and the
// claim-number assigner stay mandatory whatever the tree says. Only plugins on the success path
// commit their state: for OR, the first minNumSatisfied passing conditions in the order listed;
// under NOT nothing (its conditions must fail, and failing plugins propose nothing).
import { badRequest } from '../shared/errors.ts';

export interface SatisfyMethod {
  type: 'AND' | 'OR' | 'NOT';
  conditions: Array<string | SatisfyMethod>;
  options?: { minNumSatisfied?: number };
}

export const MAX_SATISFY_DEPTH = 5;

/** Checks the tree against the claim's instance ids; returns a normalised copy. */
export function validateSatisfyMethod(v: unknown, instanceIds: string[], path: string, depth = 1): SatisfyMethod {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw badRequest(`${path} must be an object { type, conditions, options? }`);
  const node = v as Record<string, unknown>;
  for (const k of Object.keys(node))
    if (!['type', 'conditions', 'options'].includes(k)) throw badRequest(`${path} has unknown field "${k}"`);
  if (depth > MAX_SATISFY_DEPTH) throw badRequest(`${path} nests deeper than ${MAX_SATISFY_DEPTH} levels`);
  if (node.type !== 'AND' && node.type !== 'OR' && node.type !== 'NOT')
    throw badRequest(`${path}.type must be AND, OR or NOT`);
  if (!Array.isArray(node.conditions) || node.conditions.length === 0)
    throw badRequest(`${path}.conditions must be a non-empty array`);
  const conditions = node.conditions.map((c, i): string | SatisfyMethod => {
    if (typeof c === 'string') {
      if (!instanceIds.includes(c))
        throw badRequest(`${path}.conditions[${i}] names "${c}", which is not an instance id of this claim`);
      return c;
    }
    return validateSatisfyMethod(c, instanceIds, `${path}.conditions[${i}]`, depth + 1);
  });
  const out: SatisfyMethod = { type: node.type, conditions };
  if (node.options !== undefined) {
    if (typeof node.options !== 'object' || node.options === null || Array.isArray(node.options))
      throw badRequest(`${path}.options must be an object`);
    const o = node.options as Record<string, unknown>;
    for (const k of Object.keys(o))
      if (k !== 'minNumSatisfied') throw badRequest(`${path}.options has unknown field "${k}"`);
    if (o.minNumSatisfied !== undefined) {
      const n = o.minNumSatisfied;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > conditions.length) {
        throw badRequest(
          `${path}.options.minNumSatisfied must be an integer from 1 to the number of conditions (${conditions.length})`,
        );
      }
      if (node.type !== 'OR') throw badRequest(`${path}.options.minNumSatisfied applies to OR only`);
      out.options = { minNumSatisfied: n };
    }
  }
  return out;
}

export interface LogicResult {
  ok: boolean;
  /** Instances whose proposals commit when ok. */
  path: Set<string>;
}

/** `passed(id)`: whether that instance ran and passed. */
export function evaluateSatisfyMethod(node: SatisfyMethod | string, passed: (id: string) => boolean): LogicResult {
  if (typeof node === 'string')
    return passed(node) ? { ok: true, path: new Set([node]) } : { ok: false, path: new Set() };
  const results = node.conditions.map((c) => evaluateSatisfyMethod(c, passed));
  if (node.type === 'AND') {
    const ok = results.every((r) => r.ok);
    return { ok, path: ok ? union(results.map((r) => r.path)) : new Set() };
  }
  if (node.type === 'OR') {
    const need = node.options?.minNumSatisfied ?? 1;
    const chosen = results.filter((r) => r.ok).slice(0, need);
    const ok = chosen.length >= need;
    return { ok, path: ok ? union(chosen.map((r) => r.path)) : new Set() };
  }
  // NOT: satisfied when none of its conditions is
  return { ok: results.every((r) => !r.ok), path: new Set() };
}

function union(sets: Set<string>[]): Set<string> {
  const out = new Set<string>();
  for (const s of sets) for (const v of s) out.add(v);
  return out;
}
