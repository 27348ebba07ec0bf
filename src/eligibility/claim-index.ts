// The eligibility index of one deployment: every searchable claim, parsed once, with what its
// answer can depend on for a given address, and inverted indexes from each of those to the claims:
//   - (collection) → claims whose must-own-badges requirement reads it;
//   - (store) → claims whose whitelist is backed by it;
//   - (address) → claims that name it (a list entry, a per-address count, the creator or manager).
// An address that touches none of a claim's keys gets the claim's address-independent answer, the
// engine's verdict for an address that holds nothing (computed once, kept until the claim, its
// state, a store or a collection it reads changes). Every other claim is evaluated by the engine
// for the real address (username-set's verdicts are kept per address and username). Nothing here decides a plugin's rule: it only says which inputs a verdict
// can depend on.
//
// Kept current through the change log that migration 0024's triggers write in the transaction of
// every change, whichever process made it: each answer first reads the log past its watermark.
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { dropMinBadgeResults } from '../plugins/minBadge.ts';
import { codes } from '../plugins/codes.ts';
import { halt } from '../plugins/halt.ts';
import { anonymous } from '../plugins/anonymous.ts';
import { customInstructions, urlClicker } from '../plugins/displayOnly.ts';
import { githubContributions } from '../plugins/githubContributions.ts';
import { hostedBaseId } from '../plugins/hosted.ts';
import { minBadge } from '../plugins/minBadge.ts';
import { mustOwnBadges } from '../plugins/mustOwnBadges.ts';
import { numUses } from '../plugins/numUses.ts';
import { collectionsOf, parseRequirement } from '../plugins/ownership.ts';
import { password } from '../plugins/password.ts';
import { transferTimes } from '../plugins/transferTimes.ts';
import { usernameSet } from '../plugins/usernameSet.ts';
import { findPlugin } from '../plugins/registry.ts';
import { whitelist, whitelistList } from '../plugins/whitelist.ts';
import { parseClaimRow, type ClaimRecord } from '../claims/model.ts';
import type { AttemptOutcome } from '../claims/engine.ts';
import { toPlatformAddress } from '../shared/addresses.ts';
import { addressStateKeys, changesAfter, latestChange, oldestChange } from './storage.ts';

export type UnknownReason = 'customPlugin' | 'outboundCall';
export type InputKind = 'password' | 'code' | 'custom';

export interface ClaimEntry {
  claim: ClaimRecord;
  collections: string[];
  stores: string[];
  addresses: string[];
  /** Evaluated for every address (its verdict reads the time, the session, connections or other claims). */
  live: boolean;
  /**
   * Its verdict reads the address's username (username-set): evaluated for every address, and the
   * verdict kept for the address only together with the username it was computed with.
   */
  readsUsername: boolean;
  /** Why it is answered "unknown until claim time", if so. */
  unknown: UnknownReason | null;
  inputs: Array<{ instanceId: string; pluginId: string; kind: InputKind }>;
  /** Whitelist instances whose list or store membership is private. */
  privateInstances: string[];
  /** The verdict for an address that holds nothing: [inputs assumed given, private lists assumed passed too, nothing assumed]. */
  baseline: [Kept | undefined, Kept | undefined, Kept | undefined];
  /** The times (UNIX ms) at which a time window of the claim opens or closes, ascending. */
  boundaries: bigint[];
  /** Address-independent state values read by its engine runs (answer.ts), while this entry stands. */
  state?: Map<string, Promise<unknown>>;
}

/** A kept verdict, valid while the time lies in [since, until) (between two boundaries of the claim's windows). */
export interface Kept {
  outcome: AttemptOutcome;
  since: bigint;
  until: bigint | null;
  /**
   * The answer built from this verdict when it names no address (answer.ts), with the same time
   * stretch as numbers: a walk over the kept answers compares numbers, builds nothing.
   */
  answer?: KeptAnswer;
}

/** An answer built from a kept address-independent verdict, valid while since <= now < until. */
export interface KeptAnswer {
  doc: unknown;
  /** The state's code for the walk (answer.ts). */
  code: number;
  since: number;
  until: number;
}

/**
 * The searchable claims in id order as flat arrays, for walking many of them (answer.ts): what
 * the walk needs of a claim answered from its kept address-independent verdict, without touching
 * the claim's entry. Made again whenever a claim is added, changed or removed.
 */
export interface Walk {
  ids: string[];
  entries: ClaimEntry[];
  position: Map<string, number>;
  /** The claim's test expiry (UNIX ms), Infinity when none. */
  expires: Float64Array;
  /** WALK_BASELINE | WALK_USERNAME | WALK_PRIVATE, per claim. */
  flags: Uint8Array;
  /** The kept answers, per view (0: private lists shown, 1: hidden), per claim (answer.ts sets them). */
  answers: [WalkAnswers, WalkAnswers];
}
/** Kept answers by position: state 0 when none, else its code (answer.ts); valid while since <= now < until. */
export interface WalkAnswers {
  doc: unknown[];
  state: Uint8Array;
  since: Float64Array;
  until: Float64Array;
}
const walkAnswers = (n: number): WalkAnswers => ({
  doc: new Array<unknown>(n),
  state: new Uint8Array(n),
  since: new Float64Array(n),
  until: new Float64Array(n),
});
/** Sets a kept answer at a position of the walk. */
export function setWalkAnswer(w: WalkAnswers, at: number, a: KeptAnswer, code: number): void {
  w.doc[at] = a.doc;
  w.since[at] = a.since;
  w.until[at] = a.until;
  w.state[at] = code;
}
/** Answered from the address-independent verdict when the address touches none of its keys (not live, not unknown). */
export const WALK_BASELINE = 1;
/** Reads the username (username-set). */
export const WALK_USERNAME = 2;
/** Has private list instances. */
export const WALK_PRIVATE = 4;

/** The stretch between two of the claim's time boundaries that holds `now`. */
export function timeSlot(boundaries: bigint[], now: number): { since: bigint; until: bigint | null } {
  const t = BigInt(now);
  let since = -1n;
  for (const b of boundaries) {
    if (b > t) return { since, until: b };
    since = b;
  }
  return { since, until: null };
}

const ADDRESS_INDEPENDENT = new Set<unknown>([numUses, halt, anonymous, urlClicker, customInstructions]);
const OUTBOUND = new Set<unknown>([minBadge, githubContributions]);
const CHANGE_BATCH = 5000;
/** Addresses whose verdicts are kept (the oldest goes first). */
const MAX_ADDRESSES = 10_000;
/** PostgreSQL hands sequence numbers out before commit: re-read this many back for late commits. */
const PG_LOOKBACK = 64;

export class EligibilityIndex {
  readonly entries = new Map<string, ClaimEntry>();
  readonly byCollection = new Map<string, Set<string>>();
  readonly byStore = new Map<string, Set<string>>();
  readonly byAddress = new Map<string, Set<string>>();
  /** An address that holds nothing and is in no list (random per process). */
  readonly nobody = toPlatformAddress(randomBytes(20));
  private sorted: string[] | null = null;
  private sortedEntriesCache: ClaimEntry[] = [];
  private walkCache: Walk | null = null;
  private watermark = -1;
  private seen = new Set<number>();
  private syncing: Promise<void> | null = null;
  private known = new Set<string>();
  /**
   * The engine's verdicts for addresses on claims whose keys they touch, by address then claim id:
   * valid while the claim's entry is the same object (its row and state unchanged), the time stays
   * between the same two boundaries, and no balance or store membership of the address that the
   * claim reads changed (those changes drop them).
   */
  private readonly verdicts = new Map<
    string,
    Map<string, { entry: ClaimEntry; variant: string; outcome: AttemptOutcome; since: bigint; until: bigint | null }>
  >();

  private readonly ctx: Pick<AppContext, 'db' | 'keyring' | 'dialect' | 'minBadgeResults'>;

  constructor(ctx: Pick<AppContext, 'db' | 'keyring' | 'dialect' | 'minBadgeResults'>) {
    this.ctx = ctx;
  }

  /** Searchable claim ids in ascending order. */
  sortedIds(): string[] {
    if (!this.sorted) {
      this.sorted = [...this.entries.keys()].sort();
      this.sortedEntriesCache = this.sorted.map((id) => this.entries.get(id)!);
    }
    return this.sorted;
  }

  /** The entries of `sortedIds()`, in that order. */
  sortedEntries(): ClaimEntry[] {
    this.sortedIds();
    return this.sortedEntriesCache;
  }

  /** `sortedIds()` as flat arrays (see Walk). */
  walk(): Walk {
    const ids = this.sortedIds();
    if (this.walkCache?.ids === ids) return this.walkCache;
    const entries = this.sortedEntriesCache;
    const n = ids.length;
    const w: Walk = {
      ids,
      entries,
      position: new Map(ids.map((id, i) => [id, i])),
      expires: new Float64Array(n),
      flags: new Uint8Array(n),
      answers: [walkAnswers(n), walkAnswers(n)],
    };
    for (let i = 0; i < n; i++) {
      const e = entries[i];
      w.expires[i] = e.claim.testExpiresAt ?? Infinity;
      w.flags[i] =
        (!e.live && !e.unknown ? WALK_BASELINE : 0) |
        (e.readsUsername ? WALK_USERNAME : 0) |
        (e.privateInstances.length > 0 ? WALK_PRIVATE : 0);
      for (const view of [0, 1] as const) {
        const a = e.baseline[view]?.answer;
        if (a) setWalkAnswer(w.answers[view], i, a, a.code);
      }
    }
    this.walkCache = w;
    return w;
  }

  /** Brings the index up to date with the change log (one query when nothing changed). */
  sync(): Promise<void> {
    // concurrent answers share one sync
    this.syncing ??= this.doSync().finally(() => {
      this.syncing = null;
    });
    return this.syncing;
  }

  private async doSync(): Promise<void> {
    if (this.watermark < 0) return this.rebuild();
    const lookback = this.ctx.dialect === 'postgres' ? PG_LOOKBACK : 0;
    const changes = (await changesAfter(this.ctx.db, this.watermark - lookback, CHANGE_BATCH)).filter(
      (c) => !this.seen.has(c.seq),
    );
    if (changes.length === 0) return;
    if (changes.length >= CHANGE_BATCH || (await oldestChange(this.ctx.db)) > this.watermark + 1 + CHANGE_BATCH) {
      return this.rebuild();
    }
    const claims = new Set<string>();
    const balanceAddresses = new Set<string>();
    for (const c of changes) {
      this.seen.add(c.seq);
      if (c.seq > this.watermark) this.watermark = c.seq;
      if (c.kind === 'claim') claims.add(c.k1);
      else if (c.kind === 'store') for (const id of this.byStore.get(c.k1) ?? []) claims.add(id);
      else if (c.kind === 'collection') {
        this.known.add(c.k1);
        for (const id of this.byCollection.get(c.k1) ?? []) claims.add(id);
      } else if (c.kind === 'balance') {
        balanceAddresses.add(c.k1);
        this.forgetVerdicts(c.k1, this.byCollection.get(c.k2));
      } else if (c.kind === 'member') this.forgetVerdicts(c.k1, this.byStore.get(c.k2));
    }
    for (const s of this.seen) if (s <= this.watermark - lookback) this.seen.delete(s);
    // a block changed these addresses' balances: hosted plugins' cached verdicts for them go now
    if (balanceAddresses.size) dropMinBadgeResults(this.ctx, balanceAddresses);
    if (claims.size) await this.reload([...claims]);
  }

  /** A kept verdict of one address, if still valid for this entry (same claim row and state), view and time. */
  verdict(address: string, e: ClaimEntry, variant: string, now: number): AttemptOutcome | undefined {
    const v = this.verdicts.get(address)?.get(e.claim.claimId);
    if (!v || v.entry !== e || v.variant !== variant) return undefined;
    const t = BigInt(now);
    return v.since <= t && (v.until === null || t < v.until) ? v.outcome : undefined;
  }

  keepVerdict(address: string, e: ClaimEntry, variant: string, now: number, outcome: AttemptOutcome): void {
    let m = this.verdicts.get(address);
    if (!m) {
      if (this.verdicts.size >= MAX_ADDRESSES) this.verdicts.delete(this.verdicts.keys().next().value as string);
      this.verdicts.set(address, (m = new Map()));
    }
    m.set(e.claim.claimId, { entry: e, variant, outcome, ...timeSlot(e.boundaries, now) });
  }

  private forgetVerdicts(address: string, claimIds: Iterable<string> | undefined): void {
    const m = this.verdicts.get(address);
    if (m && claimIds) for (const id of claimIds) m.delete(id);
  }

  private async rebuild(): Promise<void> {
    const mark = await latestChange(this.ctx.db);
    this.verdicts.clear();
    for (const id of [...this.entries.keys()]) this.remove(id);
    this.known = new Set(
      (await this.ctx.db.selectFrom('chain_collections').select('collection_id').execute()).map((r) => r.collection_id),
    );
    const ids = (
      await this.ctx.db
        .selectFrom('claims')
        .select('claim_id')
        .where('show_in_search', '=', 1)
        .where('deleted_at', 'is', null)
        .execute()
    ).map((r) => r.claim_id);
    await this.reload(ids);
    this.watermark = mark;
    this.seen.clear();
  }

  /** Reads these claims again (removing the deleted and the no longer searchable). */
  private async reload(ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const rows = await this.ctx.db.selectFrom('claims').selectAll().where('claim_id', 'in', chunk).execute();
      const stateKeys = await addressStateKeys(this.ctx.db, chunk);
      const found = new Set<string>();
      for (const row of rows) {
        if (row.deleted_at !== null || row.show_in_search !== 1) continue;
        found.add(row.claim_id);
        this.remove(row.claim_id);
        this.add(entryOf(parseClaimRow(row, this.ctx.keyring), stateKeys.get(row.claim_id) ?? [], this.known));
      }
      for (const id of chunk) if (!found.has(id)) this.remove(id);
    }
  }

  private add(e: ClaimEntry): void {
    const id = e.claim.claimId;
    this.entries.set(id, e);
    for (const c of e.collections) link(this.byCollection, c, id);
    for (const s of e.stores) link(this.byStore, s, id);
    for (const a of e.addresses) link(this.byAddress, a, id);
    this.sorted = null;
  }

  private remove(id: string): void {
    const e = this.entries.get(id);
    if (!e) return;
    this.entries.delete(id);
    for (const c of e.collections) unlink(this.byCollection, c, id);
    for (const s of e.stores) unlink(this.byStore, s, id);
    for (const a of e.addresses) unlink(this.byAddress, a, id);
    this.sorted = null;
  }
}

/** The deployment's index (on its context), made on first use and built by its first sync. */
export function eligibilityIndex(ctx: AppContext): EligibilityIndex {
  ctx.services.eligibility ??= new EligibilityIndex(ctx);
  return ctx.services.eligibility;
}

/**
 * Drops hosted-plugin results kept for addresses whose balances a committed block changed: through
 * the index when this process has one (and it reads the primary), else with the caller's own
 * watermark. Returns the new mark.
 */
export async function dropChangedBalances(ctx: AppContext, mark: number): Promise<number> {
  // with read replicas the index reads a replica: this reader keeps its own mark on the primary
  if (ctx.services.eligibility && !ctx.replicas) {
    await ctx.services.eligibility.sync();
    return mark;
  }
  if (mark < 0) return latestChange(ctx.db);
  const changes = await changesAfter(ctx.db, mark, CHANGE_BATCH);
  const addresses = new Set(changes.filter((c) => c.kind === 'balance').map((c) => c.k1));
  if (addresses.size) dropMinBadgeResults(ctx, addresses);
  return changes.length ? changes[changes.length - 1].seq : mark;
}

function link(m: Map<string, Set<string>>, key: string, id: string): void {
  const s = m.get(key);
  if (s) s.add(id);
  else m.set(key, new Set([id]));
}
function unlink(m: Map<string, Set<string>>, key: string, id: string): void {
  const s = m.get(key);
  if (!s) return;
  s.delete(id);
  if (s.size === 0) m.delete(key);
}

/** What a claim's answer can depend on, read from its plugin instances. */
export function entryOf(claim: ClaimRecord, stateAddresses: string[], known: ReadonlySet<string>): ClaimEntry {
  const e: ClaimEntry = {
    claim,
    collections: [],
    stores: [],
    addresses: [...new Set([claim.createdBy, claim.managedBy, ...stateAddresses])],
    live: false,
    readsUsername: false,
    unknown: null,
    inputs: [],
    privateInstances: [],
    baseline: [undefined, undefined, undefined],
    boundaries: [],
  };
  const boundaries = new Set<bigint>();
  const addresses = new Set(e.addresses);
  for (const inst of claim.plugins) {
    const core = findPlugin(inst.pluginId) ?? findPlugin(hostedBaseId(inst.pluginId) ?? '');
    if (!core) {
      // a custom plugin: its simulation is a call to its endpoint
      e.unknown ??= 'customPlugin';
      continue;
    }
    if (ADDRESS_INDEPENDENT.has(core)) continue;
    if (core === password || core === codes) {
      e.inputs.push({
        instanceId: inst.instanceId,
        pluginId: inst.pluginId,
        kind: core === password ? 'password' : 'code',
      });
    } else if (core === whitelist) {
      const list = whitelistList(inst);
      if (list) for (const a of list.addresses) addresses.add(a);
      else if (typeof inst.privateParams.dynamicDataId === 'string') e.stores.push(inst.privateParams.dynamicDataId);
      if (!list || inst.publicParams.hasPrivateList === true || !inst.publicParams.list)
        e.privateInstances.push(inst.instanceId);
    } else if (core === mustOwnBadges) {
      try {
        const ids = collectionsOf(parseRequirement(inst.publicParams.ownershipRequirements, 'ownershipRequirements'));
        e.collections.push(...ids);
        // a collection the service does not index is read from the chain
        if (ids.some((id) => !known.has(id))) e.unknown ??= 'outboundCall';
      } catch {
        e.live = true;
      }
    } else if (core === transferTimes) {
      // the verdict changes only when a window opens (start) or closes (end + 1)
      for (const r of (inst.publicParams.transferTimes ?? []) as Array<{ start: string; end: string }>) {
        boundaries.add(BigInt(r.start));
        boundaries.add(BigInt(r.end) + 1n);
      }
    } else if (core === usernameSet) {
      e.readsUsername = true;
    } else if (OUTBOUND.has(core)) {
      e.unknown ??= 'outboundCall';
    } else {
      // the time, the session, connections, usernames or other claims: evaluated every time
      e.live = true;
    }
  }
  e.addresses = [...addresses];
  e.boundaries = [...boundaries].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  e.collections = [...new Set(e.collections)];
  return e;
}
