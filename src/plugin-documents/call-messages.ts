// The messages between the main thread and the plugin call thread (call-thread.ts, call-worker.ts):
// one flat array of values per batch, a fixed number of values per call or outcome, so that a
// message is copied without an object per call and rebuilt on the other side without one either.
import type { EgressStats } from '../egress/index.ts';
import { specTextOf, type CallContext, type CallFields } from './call.ts';

/** Main thread → call thread: a batch of calls (`writeCall`, CALL_VALUES values each), or a stats request. */
export type ToCallThread = { calls: unknown[] } | { stats: number };
/**
 * Call thread → main thread: a batch of outcomes (OUTCOME_VALUES values each: the call's id, then
 * OK and the response, FAILED with the error and its detail, or FAULT with an unexpected error's
 * message), or stats.
 */
export type FromCallThread = { outcomes: unknown[] } | { stats: number; value: EgressStats };

export const CALL_VALUES = 18;
/** Appends one call to a message's flat array: its id, time, version's CallSpec text and CallFields. */
export function writeCall(out: unknown[], id: number, c: CallContext, now: number): void {
  out.push(
    id,
    now,
    specTextOf(c.version),
    c.pluginId,
    c.pluginSecret,
    c.instanceId,
    c.claim.claimId,
    c.claim.createdAt,
    c.claim.lastUpdated,
    c.claimAttemptId,
    c.isSimulation,
    c.attemptStatus,
    c.platformAddress,
    c.isAddressSignedIn,
    c.locale,
    c.publicParams,
    c.privateParams,
    c.inputs,
  );
}

/** The call at `at` of a message's flat array (the thread's side of `writeCall`). */
export function readCall(m: unknown[], at: number): { id: number; now: number; specText: string; fields: CallFields } {
  return {
    id: m[at] as number,
    now: m[at + 1] as number,
    specText: m[at + 2] as string,
    fields: {
      pluginId: m[at + 3] as string,
      pluginSecret: m[at + 4] as string,
      instanceId: m[at + 5] as string,
      claim: { claimId: m[at + 6] as string, createdAt: m[at + 7] as number, lastUpdated: m[at + 8] as number },
      claimAttemptId: m[at + 9] as string,
      isSimulation: m[at + 10] as boolean,
      attemptStatus: m[at + 11] as CallFields['attemptStatus'],
      platformAddress: m[at + 12] as string,
      isAddressSignedIn: m[at + 13] as boolean,
      locale: m[at + 14] as string,
      publicParams: m[at + 15] as CallFields['publicParams'],
      privateParams: m[at + 16] as CallFields['privateParams'],
      inputs: m[at + 17] as CallFields['inputs'],
    },
  };
}

export const OUTCOME_VALUES = 4;
export const OK = 0;
export const FAILED = 1;
export const FAULT = 2;
