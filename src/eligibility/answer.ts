// One address's eligibility over many claims (POST /api/v0/eligibility). Each claim's state is the
// claim engine's own verdict, as simulate gives it: for an address that touches none of the
// claim's keys, the claim's address-independent verdict kept by the index (claim-index.ts); for
// any other, the engine run for the address. Inputs not given yet (passwords, codes) and private
// lists the caller may not see are counted as passing without running them, which turns a
// success into "eligible after input" or "checked at claim time".
import type { AppContext } from '../context.ts';
import type { AttemptOutcome } from '../claims/engine.ts';
import { evaluateAttempt } from '../claims/engine.ts';
import { isCreatorOrManager } from '../claims/documents.ts';
import { loadClaim, numUsesInstance } from '../claims/model.ts';
import { pluginEnv } from '../claims/plugin-env.ts';
import type { AttemptSession } from '../plugins/types.ts';
import { toCanonical } from '../shared/addresses.ts';
import { badRequest } from '../shared/errors.ts';
import { DEFAULT_PAGE_SIZE, decodeBookmark, encodeBookmark } from '../shared/pagination.ts';
import type { Session } from '../shared/session.ts';
import {
  eligibilityIndex,
  entryOf,
  timeSlot,
  type EligibilityIndex,
  type ClaimEntry,
  type InputKind,
  type UnknownReason,
  WALK_BASELINE,
  WALK_PRIVATE,
  WALK_USERNAME,
  setWalkAnswer,
} from './claim-index.ts';
import { addressStateKeys, batchedStateReader, readFootprint } from './storage.ts';

export const STATES = ['eligible', 'afterInput', 'notEligible', 'claimed', 'unknown'] as const;
export type EligibilityState = (typeof STATES)[number];
export const MAX_CLAIM_IDS = 100;
export const MAX_PAGE_SIZE = 1000;
/** Claims with an outbound call evaluated per request when the caller asks (`includeOutbound`). */
export const MAX_OUTBOUND_PER_REQUEST = 5;
/** Claims looked at per request, and engine runs per request, when a `states` filter skips many. */
export const MAX_SCAN = 10_000;
export const MAX_EVALUATIONS = 200;
/**
 * Claims answered at once within a request: their engine runs' state reads go out as one query
 * (storage.ts batchedStateReader), and on PostgreSQL their other reads on several connections.
 */
const CONCURRENCY = 256;
export const CHECKED_AT_CLAIM_TIME = 'Checked at claim time';

export interface EligibilityQuery {
  address: string;
  claimIds?: string[];
  collectionId?: string;
  category?: string;
  states?: EligibilityState[];
  includeOutbound?: boolean;
  bookmark?: string;
  pageSize?: number;
}

export interface EligibilityDoc {
  claimId: string;
  name: string;
  state: EligibilityState;
  /** afterInput: the inputs still to give. */
  inputs?: Array<{ instanceId: string; pluginId: string; kind: InputKind }>;
  /** notEligible: the first failing requirement, as simulate words it. */
  error?: string;
  /** claimed */
  successCount?: number;
  claimNumbers?: number[];
  /** unknown */
  reason?: UnknownReason | 'privateList';
  message?: string;
}

const UNKNOWN_TEXT: Record<UnknownReason, string> = {
  customPlugin: 'A custom plugin decides at claim time (its simulation calls its endpoint).',
  outboundCall: 'Checking it needs an outbound call (the chain or another service); it is checked at claim time.',
};

export async function answerEligibility(
  ctx: AppContext,
  q: EligibilityQuery,
  session: Session | null,
): Promise<{ docs: EligibilityDoc[]; bookmark: string; hasMore: boolean }> {
  const address = toCanonical(q.address, 'address');
  if (q.claimIds && q.claimIds.length > MAX_CLAIM_IDS)
    throw badRequest(`claimIds must hold at most ${MAX_CLAIM_IDS} claim ids`);
  const scope = `eligibility:${address}:${JSON.stringify([q.claimIds ?? null, q.collectionId ?? null, q.category ?? null, q.states ?? null, q.includeOutbound === true])}`;
  const pageSize = q.pageSize ?? DEFAULT_PAGE_SIZE;
  const cursor = decodeBookmark(ctx.keyring, scope, q.bookmark, 1);
  const after = cursor ? String(cursor[0]) : null;
  const index = eligibilityIndex(ctx);
  const [, footprint] = await Promise.all([index.sync(), readFootprint(ctx.db, address)]);
  const now = ctx.clock.now();
  const tNow = BigInt(now);
  // on SQLite (never with replicas: those are PostgreSQL's) the state reads take the fast path
  const reads: Reads = {
    readState: cachedStateReader(index, batchedStateReader(ctx.db, ctx.replicas ? undefined : ctx.sqlite)),
    env: pluginEnv(ctx, now),
  };
  // username-set's verdicts are kept with the username they read
  const userTag = `|u:${footprint.username ?? ''}`;

  const candidates = new Set<string>(index.byAddress.get(address) ?? []);
  for (const c of footprint.collections) for (const id of index.byCollection.get(c) ?? []) candidates.add(id);
  for (const s of footprint.stores) for (const id of index.byStore.get(s) ?? []) candidates.add(id);
  for (const id of footprint.claimNumbers.keys()) candidates.add(id);

  // named claims: searchable or not, each as its own entry
  let order: string[];
  let named: Map<string, ClaimEntry> | null = null;
  if (q.claimIds) {
    order = [...new Set(q.claimIds)].sort();
    named = new Map();
    const missing = order.filter((id) => !index.entries.has(id));
    const keys = missing.length ? await addressStateKeys(ctx.db, missing) : new Map<string, string[]>();
    const known = new Set(
      missing.length
        ? (await ctx.db.selectFrom('chain_collections').select('collection_id').execute()).map((r) => r.collection_id)
        : [],
    );
    for (const id of order) {
      const e = index.entries.get(id);
      if (e) named.set(id, e);
      else {
        const claim = await loadClaim(ctx.db, ctx, id, now);
        if (claim) {
          const entry = entryOf(claim, keys.get(id) ?? [], known);
          named.set(id, entry);
          candidates.add(id); // not kept by the index: no stored address-independent verdict
        }
      }
    }
    order = order.filter((id) => named!.has(id));
  } else order = index.sortedIds();

  let start = 0;
  if (after !== null) {
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (order[mid] <= after) lo = mid + 1;
      else hi = mid;
    }
    start = lo;
  }

  const attemptSession: AttemptSession | null = session
    ? { platformAddress: session.platformAddress, scopes: [...session.scopes] }
    : null;
  const wanted = q.states ? new Set(q.states) : null;
  const docs: EligibilityDoc[] = [];
  let outbound = 0;
  let evaluations = 0;
  let last: string | null = null;
  let hasMore = false;
  let scanned = 0;
  const passes = (e: ClaimEntry) =>
    !(e.claim.testExpiresAt !== null && e.claim.testExpiresAt <= now) &&
    (q.collectionId === undefined || e.claim.collectionId === q.collectionId) &&
    (q.category === undefined || e.claim.details.categories.includes(q.category));
  const walk = named ? null : index.walk();
  const entries = walk ? walk.entries : order.map((id) => named!.get(id)!);
  const entryAt = (i: number) => entries[i];
  // The walk over the index's claims in flat arrays: the positions of the claims the address
  // touches, and whether any claim is to be filtered on more than its test expiry.
  let touched: Uint8Array | null = null;
  if (walk) {
    touched = new Uint8Array(order.length);
    for (const id of candidates) {
      const at = walk.position.get(id);
      if (at !== undefined) touched[at] = 1;
    }
  }
  const filtered = q.collectionId !== undefined || q.category !== undefined;
  const hasUsername = footprint.username !== null;
  // One claim's answer: at once when its verdicts are kept, else a promise. Its checks and counters
  // run before its first await, so claims answered together (below) share the outbound budget in
  // claim order.
  const answerOne = (id: string, e: ClaimEntry, at: number): EligibilityDoc | Promise<EligibilityDoc> => {
    const claim = e.claim;
    // The common case, first and without building anything: a claim whose keys the address does
    // not touch, answered with the doc kept with its address-independent verdict (set below).
    if (!e.live && !e.unknown && !candidates.has(id) && !(e.readsUsername && footprint.username !== null)) {
      const hidden = e.privateInstances.length > 0 && !seesPrivate(e);
      const a = e.baseline[hidden ? 1 : 0]?.answer;
      if (a !== undefined && a.since <= now && now < a.until) {
        if (walk && walk.entries[at] === e) setWalkAnswer(walk.answers[hidden ? 1 : 0], at, a, a.code);
        return a.doc as EligibilityDoc;
      }
    }
    const base = { claimId: id, name: claim.details.metadata.name };
    const numbers = footprint.claimNumbers.get(id);
    if (numbers && numUsesInstance(claim)) {
      return { ...base, state: 'claimed', successCount: numbers.length, claimNumbers: numbers };
    }
    if (e.unknown && !(q.includeOutbound && outbound < MAX_OUTBOUND_PER_REQUEST)) {
      return { ...base, state: 'unknown', reason: e.unknown, message: UNKNOWN_TEXT[e.unknown] };
    }
    if (e.unknown) outbound++;
    const privileged =
      session !== null && (session.platformAddress === address || isCreatorOrManager(claim, session.platformAddress));
    const hide = e.privateInstances.length > 0 && !privileged;
    // The address-independent verdict (the engine's, for an address that holds nothing, is in no
    // list and has no username) when the address touches none of the claim's keys: username-set
    // reads the username, so an address with one is evaluated.
    const fromBaseline =
      !e.live && !e.unknown && !candidates.has(id) && !(e.readsUsername && footprint.username !== null);
    const keep = !fromBaseline && !e.live && !e.unknown && index.entries.get(id) === e;
    const tag = e.readsUsername ? userTag : '';
    const variant = (hide ? 'hide' : 'show') + tag;
    // under a satisfyMethod the claim may pass without the input: the engine is asked again without it
    const mayAskWithout = e.inputs.length > 0 && !!claim.satisfyMethod && !hide;
    const askWithout = (o: AttemptOutcome) => o.success && mayAskWithout;
    const finish = (o: AttemptOutcome, passesWithout: boolean) =>
      stateOf(
        base,
        fromBaseline && !o.success ? { ...o, error: o.error.split(index.nobody).join(address) } : o,
        hide,
        e.inputs.length > 0 && !passesWithout ? e.inputs : null,
      );

    const kept = fromBaseline
      ? keptBaseline(e, hide ? 1 : 0, tNow)
      : keep
        ? index.verdict(address, e, variant, now)
        : undefined;
    if (kept && !(kept.success && mayAskWithout)) {
      const doc = finish(kept, false);
      // kept with the verdict for the next answers (above), unless its text names the address
      if (fromBaseline && (kept.success || !kept.error.includes(index.nobody))) {
        const k = e.baseline[hide ? 1 : 0]!;
        k.answer = {
          doc,
          code: STATES.indexOf(doc.state) + 1,
          since: asTime(k.since),
          until: k.until === null ? Infinity : asTime(k.until),
        };
        if (walk && walk.entries[at] === e) setWalkAnswer(walk.answers[hide ? 1 : 0], at, k.answer, k.answer.code);
      }
      return doc;
    }
    if (!kept && !fromBaseline) evaluations++;
    return (async () => {
      let outcome: AttemptOutcome;
      if (kept) outcome = kept;
      else if (fromBaseline) outcome = await baseline(ctx, reads, index, e, hide ? 1 : 0, now);
      else {
        outcome = await evaluate(ctx, reads, e, address, attemptSession, hide, now);
        if (keep) index.keepVerdict(address, e, variant, now, outcome);
      }
      if (!askWithout(outcome)) return finish(outcome, false);
      const without = fromBaseline
        ? await baseline(ctx, reads, index, e, 2, now)
        : await withoutInputs(ctx, reads, index, e, address, attemptSession, now, keep, tag);
      return finish(outcome, without.success);
    })();
  };

  // whether the session sees a claim's private lists (it is the address's, or the claim's creator's or manager's)
  const seesPrivate = (e: ClaimEntry) =>
    session !== null && (session.platformAddress === address || isCreatorOrManager(e.claim, session.platformAddress));
  const answered: Array<EligibilityDoc | Promise<EligibilityDoc>> = [];
  // per claim answered together: its state's code (1 + its index in STATES) when kept, else 0
  const codes: number[] = [];
  // claims are answered CONCURRENCY at a time (PostgreSQL runs their reads on several connections)
  let i = start;
  for (;;) {
    if (docs.length >= pageSize || scanned >= MAX_SCAN || evaluations >= MAX_EVALUATIONS) {
      while (i < order.length && !passes(entryAt(i))) i++;
      hasMore = i < order.length;
      break;
    }
    // no more claims at once than may still be looked at or evaluated, so the caps hold
    const room = Math.min(CONCURRENCY, pageSize - docs.length, MAX_EVALUATIONS - evaluations, MAX_SCAN - scanned);
    // the claims answered together, in order: each its answer (or a promise of it) and its state
    // when known at once (an answer kept in the walk's arrays: its doc is not read unless listed)
    answered.length = 0;
    codes.length = 0;
    let waits = false;
    while (i < order.length && answered.length < room) {
      if (walk && !filtered) {
        if (walk.expires[i] <= now) {
          i++;
          continue;
        }
        const f = walk.flags[i];
        if (f & WALK_BASELINE && touched![i] === 0 && !(f & WALK_USERNAME && hasUsername)) {
          const hidden = f & WALK_PRIVATE && !(session !== null && seesPrivate(entries[i]));
          const w = walk.answers[hidden ? 1 : 0];
          const code = w.state[i];
          if (code !== 0 && w.since[i] <= now && now < w.until[i]) {
            answered.push(w.doc[i] as EligibilityDoc);
            codes.push(code);
            i++;
            continue;
          }
        }
      } else if (!passes(entryAt(i))) {
        i++;
        continue;
      }
      const a = answerOne(order[i], entries[i], i);
      if (a instanceof Promise) waits = true;
      answered.push(a);
      codes.push(0);
      i++;
    }
    if (answered.length === 0) break;
    const answers = waits ? await Promise.all(answered) : (answered as EligibilityDoc[]);
    scanned += answers.length;
    for (let j = 0; j < answers.length; j++) {
      const code = codes[j];
      if (code !== 0) {
        if (!wanted || wanted.has(STATES[code - 1])) docs.push(answers[j]);
        continue;
      }
      const doc = answers[j];
      if (!wanted || wanted.has(doc.state)) docs.push(doc);
    }
    last = order[i - 1];
  }
  return {
    docs,
    hasMore,
    bookmark: hasMore && last !== null ? encodeBookmark(ctx.keyring, scope, [last]) : '',
  };
}

function stateOf(
  base: { claimId: string; name: string },
  o: AttemptOutcome,
  hide: boolean,
  inputs: ClaimEntry['inputs'] | null,
): EligibilityDoc {
  const { claimId, name } = base;
  if (!o.success) return { claimId, name, state: 'notEligible', error: o.error };
  if (hide) return { claimId, name, state: 'unknown', reason: 'privateList', message: CHECKED_AT_CLAIM_TIME };
  if (inputs) return { claimId, name, state: 'afterInput', inputs };
  return { claimId, name, state: 'eligible' };
}

function assumed(e: ClaimEntry, hide: boolean, inputs: boolean): Set<string> {
  const s = new Set(inputs ? e.inputs.map((i) => i.instanceId) : []);
  if (hide) for (const id of e.privateInstances) s.add(id);
  return s;
}

type StateReader = (claimId: string, instanceId: string, key: string) => Promise<unknown>;

/** Reads shared by the engine runs of one answer, and their plugin environment. */
interface Reads {
  readState: (e: ClaimEntry) => StateReader;
  env: ReturnType<typeof pluginEnv>;
}

/**
 * The engine's state reads for one claim, through what its index entry already says: an entry is
 * replaced whenever the claim's state changes (the change log), so while it is the index's entry
 *   - a per-address key (`a:<address>`) of an address not among the claim's keys is absent (the
 *     entry lists every address with such a key), without a read;
 *   - an address-independent key (`numUses`, a code's `c<i>`) read once is kept on the entry for the
 *     next engine runs of any address (each gets its own copy of an object value).
 * Anything else is read (batched) as before.
 */
function cachedStateReader(index: EligibilityIndex, read: StateReader): (e: ClaimEntry) => StateReader {
  return (e) => (claimId, instanceId, key) => {
    if (claimId !== e.claim.claimId || index.entries.get(claimId) !== e) return read(claimId, instanceId, key);
    if (key.startsWith('a:')) {
      if (!index.byAddress.get(key.slice(2))?.has(claimId)) return Promise.resolve(undefined);
      return read(claimId, instanceId, key);
    }
    if (key.includes(':')) return read(claimId, instanceId, key);
    const cache = (e.state ??= new Map());
    const k = `${instanceId}\0${key}`;
    let v: Promise<unknown> | undefined = cache.get(k);
    if (!v) {
      v = read(claimId, instanceId, key);
      cache.set(k, v);
      v.catch(() => cache.delete(k));
    }
    return v.then((x) => (x !== null && typeof x === 'object' ? structuredClone(x) : x));
  };
}

function evaluate(
  ctx: AppContext,
  reads: Reads,
  e: ClaimEntry,
  address: string,
  session: AttemptSession | null,
  hide: boolean,
  now: number,
  inputs = true,
): Promise<AttemptOutcome> {
  return evaluateAttempt(
    e.claim,
    { platformAddress: address, inputs: {}, expectedVersion: -1, session },
    {
      ...reads.env,
      mode: 'simulate',
      claimAttemptId: '',
      assumePassed: assumed(e, hide, inputs),
      readState: reads.readState(e),
    },
  );
}

/**
 * A time boundary as a number: exact up to 2^53; beyond, it may round, but stays on the same side of
 * any time now (far below 2^53 ms), which is all the comparisons above ask of it.
 */
const asTime = (b: bigint): number => Number(b);

/** The claim's address-independent verdict kept for this time, if any. */
function keptBaseline(e: ClaimEntry, which: 0 | 1 | 2, t: bigint): AttemptOutcome | undefined {
  const kept = e.baseline[which];
  if (!kept) return undefined;
  return kept.since <= t && (kept.until === null || t < kept.until) ? kept.outcome : undefined;
}

async function baseline(
  ctx: AppContext,
  reads: Reads,
  index: EligibilityIndex,
  e: ClaimEntry,
  which: 0 | 1 | 2,
  now: number,
): Promise<AttemptOutcome> {
  const kept = keptBaseline(e, which, BigInt(now));
  if (kept) return kept;
  const outcome = await evaluate(ctx, reads, e, index.nobody, null, which === 1, now, which !== 2);
  e.baseline[which] = { outcome, ...timeSlot(e.boundaries, now) };
  return outcome;
}

async function withoutInputs(
  ctx: AppContext,
  reads: Reads,
  index: EligibilityIndex,
  e: ClaimEntry,
  address: string,
  session: AttemptSession | null,
  now: number,
  keep: boolean,
  tag: string,
): Promise<AttemptOutcome> {
  const variant = `bare${tag}`;
  const kept = keep ? index.verdict(address, e, variant, now) : undefined;
  if (kept) return kept;
  const outcome = await evaluate(ctx, reads, e, address, session, false, now, false);
  if (keep) index.keepVerdict(address, e, variant, now, outcome);
  return outcome;
}
