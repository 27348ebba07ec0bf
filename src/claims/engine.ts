// Evaluates one attempt: the version check, every plugin in parallel against the state as it was
// before the attempt, the success logic, and the claim number. Pure with respect to storage: it
// reads through the given handle and returns the changes to commit; simulate and execute share it.
import { HALTED } from '../plugins/halt.ts';
import { findPlugin, resolvePlugin } from '../plugins/registry.ts';
import type {
  AttemptRun,
  AttemptSession,
  ClaimInfo,
  EvaluateContext,
  PluginResult,
  StatusWebhook,
} from '../plugins/types.ts';
import { assignerOf, maxUsesOf, numUsesInstance, type ClaimRecord } from './model.ts';
import { evaluateSatisfyMethod } from './satisfy.ts';
import { claimNumberUsed, readStateValue } from './storage.ts';

export interface AttemptInput {
  platformAddress: string;
  /** Inputs keyed by instance id. */
  inputs: Record<string, unknown>;
  expectedVersion: number;
  specificInstanceIds?: string[];
  session: AttemptSession | null;
  /** The claimer's locale (Accept-Language); `en` when absent. */
  locale?: string;
}

export interface StateWrite {
  instanceId: string;
  key: string;
  value: unknown;
}

export type AttemptOutcome =
  | { success: true; claimNumber: number | null; writes: StateWrite[]; replay: Record<string, unknown> }
  | {
      success: false;
      error: string;
      status: number /** A user-input plugin (password, codes) failed: a wrong guess. */;
      inputRejected?: true;
      /** The instance whose failure is the error (absent when no single plugin explains it). */
      instanceId?: string;
    };

export const versionMismatchError = (expected: number, actual: number) =>
  `Claim has been updated since last fetch: expected version ${expected}, current version ${actual}`;

/** The run's environment (claims/plugin-env.ts builds its core), plus what only the engine reads. */
export interface EvaluateEnv extends AttemptRun {
  /** Replayed values by instance id (each plugin sees its own as `ctx.replay`). */
  replay?: Record<string, unknown>;
  /** State reads (default: the database through `db`); the worker layers its batch's writes on top. */
  readState?: (claimId: string, instanceId: string, key: string) => Promise<unknown>;
  claimNumberUsed?: (claimId: string, claimNumber: number) => Promise<boolean>;
  /**
   * Instances counted as passing without running them (eligibility: an input not given yet, a
   * private list not to be revealed). An assumed assigner assigns no claim number.
   */
  assumePassed?: ReadonlySet<string>;
}

export async function evaluateAttempt(
  claim: ClaimRecord,
  input: AttemptInput,
  env: EvaluateEnv,
): Promise<AttemptOutcome> {
  const readState = env.readState ?? ((c: string, i: string, k: string) => readStateValue(env.db, c, i, k, env.app));
  const numberUsed = env.claimNumberUsed ?? ((c: string, n: number) => claimNumberUsed(env.db, c, n));
  if (input.expectedVersion !== -1 && input.expectedVersion !== claim.version) {
    return { success: false, error: versionMismatchError(input.expectedVersion, claim.version), status: 409 };
  }
  // A paused claim says so, whatever else would fail (docs/claims.md: every attempt fails with `Claim halted`).
  if (claim.plugins.some((p) => p.pluginId === 'halt')) return { success: false, error: HALTED, status: 400 };
  const assigner = assignerOf(claim);
  const mandatory = new Set<string>();
  const numUses = numUsesInstance(claim);
  if (numUses) mandatory.add(numUses.instanceId);
  if (assigner) mandatory.add(assigner.instanceId);

  let toRun = claim.plugins;
  if (input.specificInstanceIds) {
    for (const id of input.specificInstanceIds) {
      if (!claim.plugins.some((p) => p.instanceId === id))
        return {
          success: false,
          error: `_specificInstanceIds names "${id}", which is not an instance id of this claim`,
          status: 400,
        };
    }
    const wanted = new Set(input.specificInstanceIds);
    toRun = claim.plugins.filter((p) => wanted.has(p.instanceId) || mandatory.has(p.instanceId));
  }

  const info = claimInfo(claim);
  const results = new Map<string, PluginResult>();
  await Promise.all(
    toRun.map(async (inst) => {
      if (env.assumePassed?.has(inst.instanceId)) {
        results.set(inst.instanceId, { success: true });
        return;
      }
      const plugin = await resolvePlugin(inst, env);
      if (!plugin) {
        results.set(inst.instanceId, { success: false, error: `Unknown plugin: ${inst.pluginId}` });
        return;
      }
      const result = await plugin.evaluate(
        pluginContext(claim, info, inst, input, env, readState, assigner?.instanceId === inst.instanceId),
      );
      results.set(inst.instanceId, result);
    }),
  );
  const outcome = await conclude(claim, results, mandatory, env.mode, numberUsed, env.assumePassed);
  // a wrong password or code counts as a failed guess (guess-throttle.ts), whatever error is shown;
  // a right one that cannot be used (a used code) does not
  const wrong = (r: PluginResult | undefined) => r?.success === false && !r.rightAnswer;
  if (
    !outcome.success &&
    claim.plugins.some((p) => findPlugin(p.pluginId)?.requiresUserInput && wrong(results.get(p.instanceId)))
  ) {
    return { ...outcome, inputRejected: true };
  }
  return outcome;
}

/** The success logic over the plugins' results: the attempt's outcome and the writes it commits. */
async function conclude(
  claim: ClaimRecord,
  results: Map<string, PluginResult>,
  mandatory: Set<string>,
  mode: EvaluateEnv['mode'],
  numberUsed: (claimId: string, claimNumber: number) => Promise<boolean>,
  assumed?: ReadonlySet<string>,
): Promise<AttemptOutcome> {
  const assigner = assignerOf(claim);
  const numUses = numUsesInstance(claim);
  const passed = (id: string) => results.get(id)?.success === true;
  // first failure in claim order, mandatory plugins first
  const firstFailure = (ids: string[]) => {
    for (const inst of claim.plugins) {
      if (!ids.includes(inst.instanceId)) continue;
      const r = results.get(inst.instanceId);
      if (r && !r.success)
        return {
          success: false as const,
          error: r.error ?? 'Plugin failed',
          status: r.status ?? 400,
          instanceId: inst.instanceId,
        };
    }
    return null;
  };

  const mandatoryFailure = firstFailure([...mandatory]);
  if (mandatoryFailure) return mandatoryFailure;

  let path: Set<string>;
  if (claim.satisfyMethod) {
    const logic = evaluateSatisfyMethod(claim.satisfyMethod, passed);
    if (!logic.ok) {
      // under NOT a passing plugin is what fails the claim, so no plugin error explains it
      const failure = hasNot(claim.satisfyMethod) ? null : firstFailure(referencedIds(claim.satisfyMethod));
      if (failure) return failure;
      return { success: false, error: notRunOrUnsatisfied(claim, results), status: 400 };
    }
    path = new Set([...logic.path, ...mandatory]);
  } else {
    const failure = firstFailure(claim.plugins.map((p) => p.instanceId));
    if (failure) return failure;
    if (claim.plugins.some((p) => !results.has(p.instanceId)))
      return { success: false, error: notRunOrUnsatisfied(claim, results), status: 400 };
    path = new Set(claim.plugins.map((p) => p.instanceId));
  }

  let claimNumber: number | null = null;
  if (numUses && assigner && !assumed?.has(assigner.instanceId)) {
    const n = results.get(assigner.instanceId)?.claimNumber;
    const maxUses = maxUsesOf(claim) ?? 0;
    if (n === undefined) return { success: false, error: 'Claim number not found', status: 400 };
    if (!Number.isInteger(n) || n < 0 || n >= maxUses)
      return { success: false, error: `Invalid claim number: ${n}`, status: 400 };
    // The numUses counter cannot collide unless its state was edited, so the pre-check skips that
    // lookup; execution always checks (and the ledger's primary key is the last guard).
    const counter = mode === 'simulate' && assigner.pluginId === 'numUses';
    if (!counter && (await numberUsed(claim.claimId, n)))
      return { success: false, error: `Claim number already used: ${n}`, status: 400 };
    claimNumber = n;
  }

  const writes: StateWrite[] = [];
  const replay: Record<string, unknown> = {};
  for (const inst of claim.plugins) {
    const r = results.get(inst.instanceId);
    if (!r) continue;
    if (r.replay !== undefined) replay[inst.instanceId] = r.replay;
    if (!path.has(inst.instanceId)) continue;
    for (const c of r.stateChanges ?? []) writes.push({ instanceId: inst.instanceId, key: c.key, value: c.value });
  }
  return { success: true, claimNumber, writes, replay };
}

const claimInfo = (claim: ClaimRecord): ClaimInfo => ({
  claimId: claim.claimId,
  version: claim.version,
  createdAt: claim.createdAt,
  lastUpdated: claim.lastUpdated,
  createdBy: claim.createdBy,
  managedBy: claim.managedBy,
  maxUses: maxUsesOf(claim),
});

function pluginContext(
  claim: ClaimRecord,
  info: ClaimInfo,
  inst: ClaimRecord['plugins'][number],
  input: AttemptInput,
  env: EvaluateEnv,
  readState: (claimId: string, instanceId: string, key: string) => Promise<unknown>,
  isClaimNumberAssigner: boolean,
): EvaluateContext {
  return {
    mode: env.mode,
    claimAttemptId: env.claimAttemptId,
    now: env.now,
    db: env.db,
    ...(env.readModel ? { readModel: env.readModel } : {}),
    keyring: env.keyring,
    app: env.app,
    claims: env.claims,
    claim: info,
    instanceId: inst.instanceId,
    publicParams: inst.publicParams,
    privateParams: inst.privateParams,
    platformAddress: input.platformAddress,
    input: input.inputs[inst.instanceId],
    session: input.session,
    state: { get: (key) => readState(claim.claimId, inst.instanceId, key) },
    isClaimNumberAssigner,
    ...(env.replay && inst.instanceId in env.replay ? { replay: env.replay[inst.instanceId] } : {}),
    locale: input.locale ?? 'en',
  };
}

/**
 * The status webhooks of a resolved attempt: one per instance whose plugin asks for it
 * (receiveStatusWebhook), to be enqueued in the transaction that stores the result.
 */
export async function statusWebhooks(
  claim: ClaimRecord,
  input: AttemptInput,
  env: EvaluateEnv,
  success: boolean,
): Promise<Array<StatusWebhook & { pluginId: string; instanceId: string }>> {
  const info = claimInfo(claim);
  const assigner = assignerOf(claim);
  const readState = env.readState ?? ((c: string, i: string, k: string) => readStateValue(env.db, c, i, k, env.app));
  const out: Array<StatusWebhook & { pluginId: string; instanceId: string }> = [];
  for (const inst of claim.plugins) {
    const plugin = await resolvePlugin(inst, env);
    if (!plugin?.statusWebhook) continue;
    const hook = await plugin.statusWebhook(
      pluginContext(claim, info, inst, input, env, readState, assigner?.instanceId === inst.instanceId),
      success ? 'success' : 'failure',
    );
    if (hook) out.push({ ...hook, pluginId: inst.pluginId, instanceId: inst.instanceId });
  }
  return out;
}

/**
 * The instances of a queued attempt whose execution-time work is still to do outside the
 * transaction (plugins with `prepareExecution` and no replayed value), in claim order.
 */
export async function unpreparedInstances(
  claim: ClaimRecord,
  input: AttemptInput,
  env: Pick<EvaluateEnv, 'db' | 'app' | 'replay'>,
): Promise<string[]> {
  const out: string[] = [];
  const assigner = assignerOf(claim)?.instanceId;
  for (const inst of claim.plugins) {
    if (env.replay && inst.instanceId in env.replay) continue;
    if (
      input.specificInstanceIds &&
      !input.specificInstanceIds.includes(inst.instanceId) &&
      inst.instanceId !== assigner
    )
      continue;
    const plugin = await resolvePlugin(inst, env);
    if (plugin?.prepareExecution) out.push(inst.instanceId);
  }
  return out;
}

/** Runs `prepareExecution` of the named instances (in parallel); their values, by instance id. */
export async function prepareExecution(
  claim: ClaimRecord,
  input: AttemptInput,
  env: EvaluateEnv,
  instanceIds: string[],
): Promise<Record<string, unknown>> {
  const info = claimInfo(claim);
  const assigner = assignerOf(claim);
  const readState = env.readState ?? ((c: string, i: string, k: string) => readStateValue(env.db, c, i, k, env.app));
  const out: Record<string, unknown> = {};
  await Promise.all(
    claim.plugins
      .filter((inst) => instanceIds.includes(inst.instanceId))
      .map(async (inst) => {
        const plugin = await resolvePlugin(inst, env);
        if (!plugin?.prepareExecution) return;
        out[inst.instanceId] = await plugin.prepareExecution(
          pluginContext(claim, info, inst, input, env, readState, assigner?.instanceId === inst.instanceId),
        );
      }),
  );
  return out;
}

function referencedIds(node: string | { conditions: Array<unknown> }): string[] {
  if (typeof node === 'string') return [node];
  return node.conditions.flatMap((c) => referencedIds(c as string | { conditions: unknown[] }));
}

function hasNot(node: string | { type: string; conditions: Array<unknown> }): boolean {
  if (typeof node === 'string') return false;
  return (
    node.type === 'NOT' || node.conditions.some((c) => hasNot(c as string | { type: string; conditions: unknown[] }))
  );
}

function notRunOrUnsatisfied(claim: ClaimRecord, results: Map<string, PluginResult>): string {
  const skipped = claim.plugins.filter((p) => !results.has(p.instanceId)).map((p) => p.instanceId);
  if (skipped.length)
    return `The claim's success logic is not satisfied: ${skipped.join(', ')} did not run (not in _specificInstanceIds)`;
  return "The claim's success logic is not satisfied";
}
