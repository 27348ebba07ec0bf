// Attempts: simulate (instant, writes nothing), complete (simulate, then persist the attempt as
// queued: the row is the queue entry), status, success by address, and the attempts list.
import type { Insertable } from 'kysely';
import type { AppContext } from '../context.ts';
import { toCanonical } from '../shared/addresses.ts';
import { randomHex } from '../shared/crypto.ts';
import { ApiError, badRequest, notFound } from '../shared/errors.ts';
import { paginate } from '../shared/pagination.ts';
import { TurnBatcher } from '../shared/turn-batcher.ts';
import type { Session } from '../shared/session.ts';
import { isCreatorOrManager } from './documents.ts';
import { evaluateAttempt } from './engine.ts';
import { admitGuess, settleGuess } from './guess-throttle.ts';
import { isOnChain, loadClaim, numUsesInstance } from './model.ts';
import { claimCode } from './onchain.ts';
import { findPlugin } from '../plugins/registry.ts';
import type { AttemptSession } from '../plugins/types.ts';
import { encodePayload, type AttemptPayload } from './payload.ts';
import { pluginEnv } from './plugin-env.ts';
import { forReads } from '../db/replicas.ts';
import { refusalLog } from './refusals.ts';
import { acceptNotifies, accepted } from './queue-wakeup.ts';
import { ATTEMPT_STATUS, insertRows, runHot } from './hot-sql.ts';
import type { ClaimTables } from './storage.ts';

/** Success by address is what plugins consult too: it lives with their environment. */
export { successOf } from './plugin-env.ts';

export const SIMULATED_ATTEMPT_ID = '0'.repeat(32);
/** How stale the claim read by the complete / simulate pre-check may be (execution always re-reads). */
export const PRECHECK_MAX_AGE_MS = 500;

export interface AttemptBody {
  _expectedVersion: number;
  _specificInstanceIds?: string[];
  [instanceId: string]: unknown;
}

/** Simulates the attempt; when `complete`, then queues it. Failures throw the plugin's error text. */
export async function attemptClaim(
  ctx: AppContext,
  claimId: string,
  address: string,
  body: AttemptBody,
  session: Session | null,
  complete: boolean,
  from: { ip?: string; locale?: string } = {},
): Promise<{ claimAttemptId: string }> {
  const ip = from.ip ?? '';
  const locale = from.locale ?? 'en';
  const platformAddress = toCanonical(address, 'address');
  // the form the claimer used, kept for the owner's console when it is not the canonical one
  const claimerAddress = address === platformAddress ? '' : address;
  const { _expectedVersion: expectedVersion, _specificInstanceIds: specificInstanceIds, ...inputs } = body;
  const now = ctx.clock.now();
  const claim = await loadClaim(ctx.db, ctx, claimId, now, { maxAgeMs: PRECHECK_MAX_AGE_MS });
  if (!claim) throw notFound(`Claim ${claimId} not found`);
  for (const [key, input] of Object.entries(inputs)) {
    const instance = claim.plugins.find((p) => p.instanceId === key);
    if (!instance) throw badRequest(`body has unknown field "${key}" (not an instance id of claim ${claimId})`);
    // Unknown fields are refused here too; a wrong type is the plugin's own error (docs/plugins.md texts).
    if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
      // core plugins declare their input fields; plugin documents check inputs against their own schema
      const plugin = findPlugin(instance.pluginId);
      if (!plugin) continue;
      const allowed = plugin.inputFields ?? (plugin.requiresUserInput ? null : []);
      const extra = allowed && Object.keys(input).find((f) => !allowed.includes(f));
      if (typeof extra === 'string') throw badRequest(`body.${key} has unknown field "${extra}"`);
    }
  }
  if (complete && !numUsesInstance(claim)) {
    throw badRequest(
      `Claim ${claimId} is an on-demand claim (no numUses): it is not completed; check success with GET /api/v0/claims/success/${claimId}/{address}`,
    );
  }
  const attemptSession: AttemptSession | null = session
    ? { platformAddress: session.platformAddress, scopes: [...session.scopes] }
    : null;
  const attempt = {
    platformAddress,
    inputs,
    expectedVersion,
    session: attemptSession,
    ...(specificInstanceIds ? { specificInstanceIds } : {}),
    ...(locale !== 'en' ? { locale } : {}),
  };
  // passwords and codes can be guessed: such claims are throttled per address, IP and claim
  const guessable = claim.plugins.some((p) => findPlugin(p.pluginId)?.requiresUserInput);
  const ticket = guessable ? await admitGuess(ctx, claimId, { ip, platformAddress }, now) : null;
  let outcome;
  try {
    // a simulation may read the chain read model on a replica; a complete's pre-check reads the
    // primary, as its resolution will (docs/scale-out.md#read-replicas)
    const env = pluginEnv(ctx, now, ctx.db, complete ? undefined : forReads(ctx).db);
    outcome = await evaluateAttempt(claim, attempt, { ...env, mode: 'simulate', claimAttemptId: '' });
  } catch (err) {
    if (ticket) await settleGuess(ctx, ticket, 'other');
    throw err;
  }
  if (ticket) await settleGuess(ctx, ticket, outcome.success ? 'right' : outcome.inputRejected ? 'wrong' : 'other');
  if (!outcome.success) {
    // refused completes queue nothing: the owner reads them in the bounded refused-tries log
    if (complete) {
      const instance = outcome.instanceId ? claim.plugins.find((p) => p.instanceId === outcome.instanceId) : undefined;
      refusalLog(ctx).record({
        claimId,
        refusedAt: now,
        platformAddress,
        claimerAddress,
        instanceId: instance?.instanceId ?? '',
        pluginId: instance?.pluginId ?? '',
        error: outcome.error,
      });
    }
    throw new ApiError(outcome.status, outcome.error);
  }
  if (!complete) return { claimAttemptId: SIMULATED_ATTEMPT_ID };

  const claimAttemptId = attemptId(now);
  const payload: AttemptPayload = { ...attempt, replay: outcome.replay };
  await insertAttempt(ctx, {
    claim_attempt_id: claimAttemptId,
    claim_id: claimId,
    lane: claim.lane,
    platform_address: platformAddress,
    claimer_address: claimerAddress,
    status: 'queued',
    success: null,
    error: '',
    claim_number: -1,
    payload: encodePayload(ctx.keyring, payload),
    attempted_at: now,
    resolved_at: null,
  });
  return { claimAttemptId };
}

/**
 * An attempt id: 32 hex digits, the first 12 the time of acceptance (UNIX ms), the other 20 random
 * (80 bits, so ids stay unguessable). Ids accepted together sort together, so the unique index on
 * claim_attempt_id grows at its end, as the queue's index does, instead of taking each new id on a
 * random page of a table that keeps every attempt: a group commit dirties one or two of its pages,
 * not one per attempt, and the worker's update finds them in the same few pages.
 */
export function attemptId(now: number): string {
  return Math.max(0, Math.floor(now)).toString(16).padStart(12, '0').slice(-12) + randomHex(10);
}

type AttemptRow = Insertable<ClaimTables['claim_attempts']>;
/** An attempt waiting for its turn's insert (AppContext `services.attemptInserts`). */
export interface PendingInsert {
  row: AttemptRow;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Group commit: attempts accepted in the same turn of the event loop are inserted by one
 * statement; each request answers only once its row is committed.
 */
function insertAttempt(ctx: AppContext, row: AttemptRow): Promise<void> {
  const batcher = (ctx.services.attemptInserts ??= new TurnBatcher((batch) => void accept(ctx, batch)));
  return new Promise((resolve, reject) => batcher.add({ row, resolve, reject }));
}

/**
 * PostgreSQL commits the transactions that NOTIFY one at a time (it holds a lock from before
 * the commit until after it, flush included). So while this process's notifying insert is in
 * flight, the turns that end meanwhile wait and go together in the next one, instead of each
 * waiting for that lock in an insert of its own: at most one notifying insert per process at a
 * time, and fewer, larger ones. Inserts that notify nothing (SQLite, or a worker in this process)
 * go at once, one per turn, as before.
 */
async function accept(ctx: AppContext, batch: PendingInsert[]): Promise<void> {
  const state = (ctx.services.notifyingAccept ??= { inFlight: false, waiting: [] });
  if (acceptNotifies(ctx) === null) return flushInserts(ctx, batch);
  if (state.inFlight) {
    state.waiting.push(...batch);
    return;
  }
  state.inFlight = true;
  try {
    for (let next = batch; next.length > 0; next = state.waiting.splice(0)) await flushInserts(ctx, next);
  } finally {
    state.inFlight = false;
  }
}

const ATTEMPT_COLUMNS = [
  'claim_attempt_id',
  'claim_id',
  'lane',
  'platform_address',
  'claimer_address',
  'status',
  'success',
  'error',
  'claim_number',
  'payload',
  'attempted_at',
  'resolved_at',
];
const INSERT_ATTEMPTS = insertRows('claim_attempts', ATTEMPT_COLUMNS);
/** PostgreSQL, no worker in this process: the insert also wakes other processes' workers (queue-wakeup.ts). */
const INSERT_ATTEMPTS_NOTIFYING = insertRows('claim_attempts', ATTEMPT_COLUMNS, { notify: true });

async function flushInserts(ctx: AppContext, batch: PendingInsert[]): Promise<void> {
  // the wake-up of other processes commits with the rows (or not at all): no transaction of its own
  const channel = acceptNotifies(ctx);
  let inserted = false;
  for (let i = 0; i < batch.length; i += 500) {
    const chunk = batch.slice(i, i + 500);
    try {
      const params: unknown[] = [];
      for (const { row } of chunk)
        params.push(
          row.claim_attempt_id,
          row.claim_id,
          row.lane,
          row.platform_address,
          row.claimer_address ?? '',
          row.status,
          row.success ?? null,
          row.error,
          row.claim_number,
          row.payload ?? null,
          row.attempted_at,
          row.resolved_at ?? null,
        );
      if (channel !== null) params.push(channel);
      await runHot(ctx.db, (channel === null ? INSERT_ATTEMPTS : INSERT_ATTEMPTS_NOTIFYING)(chunk.length), params, ctx);
      inserted = true;
      for (const p of chunk) p.resolve();
    } catch (err) {
      for (const p of chunk) p.reject(err);
    }
  }
  if (inserted) accepted(ctx);
}

export interface AttemptStatus {
  success?: boolean;
  error: string;
  code?: string;
  platformAddress: string;
}

/**
 * `code` (on-chain claims, successful attempts) only for a session of the claiming address with
 * completeClaims, or of the creator / manager with readPrivateClaimData.
 */
export async function attemptStatus(
  ctx: AppContext,
  claimAttemptId: string,
  session: Session | null,
): Promise<AttemptStatus> {
  if (claimAttemptId === SIMULATED_ATTEMPT_ID) return { success: true, error: '', platformAddress: '' };
  const [row] = await runHot<{
    claim_id: string;
    platform_address: string;
    status: string;
    error: string;
    claim_number: number;
  }>(ctx.db, ATTEMPT_STATUS, [claimAttemptId], ctx);
  if (!row) throw notFound(`Claim attempt ${claimAttemptId} not found`);
  const out: AttemptStatus = { error: row.error, platformAddress: row.platform_address };
  if (row.status === 'queued') return out;
  out.success = row.status === 'success';
  if (out.success && session && row.claim_number >= 0) {
    const claim = await loadClaim(ctx.db, ctx, row.claim_id, ctx.clock.now());
    if (claim && isOnChain(claim) && claim.seedCode) {
      const permitted =
        (session.platformAddress === row.platform_address && session.scopes.includes('completeClaims')) ||
        (isCreatorOrManager(claim, session.platformAddress) && session.scopes.includes('readPrivateClaimData'));
      if (permitted) out.code = claimCode(claim.seedCode, row.claim_number);
    }
  }
  return out;
}

export interface AttemptListItem {
  success: boolean;
  attemptedAt: string;
  claimId: string;
  platformAddress: string;
  /** The address as the claimer sent it (the 0x form when they used it); else platformAddress. */
  claimerAddress: string;
  claimAttemptId: string;
  claimNumber: number;
  error?: string;
}

/** Resolved attempts, newest first; failures only with includeErrors. */
export async function listAttempts(
  ctx: AppContext,
  claimId: string,
  opts: { address?: string; includeErrors?: boolean; bookmark?: string },
): Promise<{ docs: AttemptListItem[]; bookmark: string; hasMore: boolean; total: number }> {
  const claim = await loadClaim(ctx.db, ctx, claimId, ctx.clock.now());
  if (!claim) throw notFound(`Claim ${claimId} not found`);
  const address = opts.address ? toCanonical(opts.address, 'address') : undefined;
  const filtered = () => {
    let q = ctx.db.selectFrom('claim_attempts').where('claim_id', '=', claimId).where('status', '!=', 'queued');
    if (!opts.includeErrors) q = q.where('status', '=', 'success');
    if (address) q = q.where('platform_address', '=', address);
    return q;
  };
  const [page, count] = await Promise.all([
    paginate({
      query: filtered().select([
        'seq',
        'claim_attempt_id',
        'platform_address',
        'claimer_address',
        'status',
        'error',
        'claim_number',
        'attempted_at',
      ]),
      keys: [
        { column: 'attempted_at', direction: 'desc' },
        { column: 'seq', direction: 'desc' },
      ],
      bookmark: opts.bookmark,
      keyring: ctx.keyring,
      scope: `claims/attempts:${claimId}:${address ?? ''}:${opts.includeErrors ? 1 : 0}`,
    }),
    filtered()
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  const docs = page.docs.map((r) => ({
    success: r.status === 'success',
    attemptedAt: String(r.attempted_at),
    claimId,
    platformAddress: r.platform_address,
    claimerAddress: r.claimer_address || r.platform_address,
    claimAttemptId: r.claim_attempt_id,
    claimNumber: r.status === 'success' ? r.claim_number : -1,
    ...(r.status === 'failure' ? { error: r.error } : {}),
  }));
  return { docs, bookmark: page.bookmark, hasMore: page.hasMore, total: Number(count.n) };
}
