// The claim as the engine sees it (private params decrypted), and how it is loaded. Parsed claims
// are cached per process and keyed by (version, lastUpdated): every change bumps the version, so
// a hit needs one small query and no JSON parsing or decryption.
import type { AppContext } from '../context.ts';
import type { DB, Tx } from '../db/index.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { JsonObject } from '../shared/json.ts';
import type { ClaimTable } from './storage.ts';
import type { SatisfyMethod } from './satisfy.ts';
import { CLAIM_HEAD, CLAIM_HEAD_FOR_UPDATE, runHot } from './hot-sql.ts';

export interface TrackerDetails {
  collectionId: string;
  approvalId: string;
  challengeTrackerId: string;
  approvalLevel: 'collection' | 'outgoing' | 'incoming';
  approverAddress: string;
}

export interface PluginInstance {
  pluginId: string;
  instanceId: string;
  version: string;
  publicParams: JsonObject;
  privateParams: JsonObject;
}

export interface ClaimDetails {
  rewards: JsonObject[];
  metadata: { name: string; description: string; image: string };
  categories: string[];
  estimatedCost: string;
  estimatedTime: string;
  approach: string;
}

export interface ClaimRecord {
  claimId: string;
  createdBy: string;
  managedBy: string;
  collectionId: string;
  standaloneClaim: boolean;
  trackerDetails: TrackerDetails | null;
  plugins: PluginInstance[];
  /** Claim-level seed of on-chain claims (decrypted). */
  seedCode: string | null;
  useCreatorAddressAsLeaf: boolean;
  assignMethod: string;
  satisfyMethod: SatisfyMethod | null;
  details: ClaimDetails;
  showInSearchResults: boolean;
  lane: string;
  version: number;
  createdAt: number;
  lastUpdated: number;
  testExpiresAt: number | null;
}

/** On-chain: linked to a collection approval (collectionId + trackerDetails) and not standalone. */
export const isOnChain = (c: Pick<ClaimRecord, 'collectionId' | 'trackerDetails' | 'standaloneClaim'>): boolean =>
  c.collectionId !== '' && c.trackerDetails !== null && !c.standaloneClaim;

/** Attempts of one collection run in order; claims not linked to a collection have their own lane. */
export const laneOf = (c: Pick<ClaimRecord, 'claimId' | 'collectionId' | 'standaloneClaim'>): string =>
  !c.standaloneClaim && c.collectionId !== '' ? `c:${c.collectionId}` : `k:${c.claimId}`;

export const trackerKey = (t: TrackerDetails): string =>
  [t.collectionId, t.approvalId, t.challengeTrackerId, t.approvalLevel, t.approverAddress].join('|');

export const numUsesInstance = (c: ClaimRecord): PluginInstance | undefined =>
  c.plugins.find((p) => p.pluginId === 'numUses');
export const maxUsesOf = (c: ClaimRecord): number | null => {
  const n = numUsesInstance(c);
  return n ? Number(n.publicParams.maxUses) : null;
};

/** The instance assigning claim numbers: `assignMethod` when it names one, else numUses. */
export function assignerOf(c: ClaimRecord): PluginInstance | undefined {
  if (c.assignMethod && c.assignMethod !== 'firstComeFirstServe')
    return c.plugins.find((p) => p.instanceId === c.assignMethod);
  return numUsesInstance(c);
}

export function parseClaimRow(row: ClaimTable, keyring: Keyring): ClaimRecord {
  const publicPlugins = JSON.parse(row.plugins) as Array<Omit<PluginInstance, 'privateParams'>>;
  const privateParams = JSON.parse(keyring.decrypt(row.private_params)) as Record<string, JsonObject>;
  return {
    claimId: row.claim_id,
    createdBy: row.created_by,
    managedBy: row.managed_by,
    collectionId: row.collection_id,
    standaloneClaim: row.standalone_claim === 1,
    trackerDetails: row.tracker_details ? (JSON.parse(row.tracker_details) as TrackerDetails) : null,
    plugins: publicPlugins.map((p) => ({ ...p, privateParams: privateParams[p.instanceId] ?? {} })),
    seedCode: row.seed_code ? keyring.decrypt(row.seed_code) : null,
    useCreatorAddressAsLeaf: row.use_creator_address_as_leaf === 1,
    assignMethod: row.assign_method,
    satisfyMethod: row.satisfy_method ? (JSON.parse(row.satisfy_method) as SatisfyMethod) : null,
    details: JSON.parse(row.details) as ClaimDetails,
    showInSearchResults: row.show_in_search === 1,
    lane: row.lane,
    version: row.version,
    createdAt: row.created_at,
    lastUpdated: row.last_updated,
    testExpiresAt: row.test_expires_at,
  };
}

export function claimToRow(c: ClaimRecord, keyring: Keyring, deletedAt: number | null = null): ClaimTable {
  const privateParams = Object.fromEntries(c.plugins.map((p) => [p.instanceId, p.privateParams]));
  return {
    claim_id: c.claimId,
    created_by: c.createdBy,
    managed_by: c.managedBy,
    collection_id: c.collectionId,
    standalone_claim: c.standaloneClaim ? 1 : 0,
    tracker_details: c.trackerDetails ? JSON.stringify(c.trackerDetails) : null,
    tracker_key: isOnChain(c) && c.trackerDetails ? trackerKey(c.trackerDetails) : null,
    plugins: JSON.stringify(c.plugins.map(({ privateParams: _omit, ...pub }) => pub)),
    private_params: keyring.encrypt(JSON.stringify(privateParams)),
    seed_code: c.seedCode ? keyring.encrypt(c.seedCode) : null,
    use_creator_address_as_leaf: c.useCreatorAddressAsLeaf ? 1 : 0,
    assign_method: c.assignMethod,
    satisfy_method: c.satisfyMethod ? JSON.stringify(c.satisfyMethod) : null,
    details: JSON.stringify(c.details),
    name_search: c.details.metadata.name.toLowerCase(),
    show_in_search: c.showInSearchResults ? 1 : 0,
    lane: c.lane,
    version: c.version,
    created_at: c.createdAt,
    last_updated: c.lastUpdated,
    deleted_at: deletedAt,
    test_expires_at: c.testExpiresAt,
  };
}

const CACHE_MAX = 1000;
/** An entry of AppContext.claimCache. */
export interface CachedClaim {
  claim: ClaimRecord;
  /** When the version was last confirmed against the database (ms, monotonic). */
  checkedAt: number;
}
// one cache per deployment (AppContext.claimCache), so apps on other databases never share entries;
// with its own handle and SQLite fast path, the version check runs synchronously when it can
type Deployment = Pick<AppContext, 'keyring' | 'claimCache'> & Partial<Pick<AppContext, 'db' | 'sqlite'>>;

function remember(app: Deployment, c: ClaimRecord): void {
  const cache = app.claimCache;
  cache.delete(c.claimId);
  cache.set(c.claimId, { claim: c, checkedAt: performance.now() });
  if (cache.size > CACHE_MAX) cache.delete(cache.keys().next().value as string);
}

/** Changes made in this process are seen at once; other processes' within `maxAgeMs`. */
export function forgetClaim(app: Pick<AppContext, 'claimCache'>, claimId: string): void {
  app.claimCache.delete(claimId);
}

export interface LoadOptions {
  /** PostgreSQL: lock the claim row for the rest of the transaction (serialises state writes). */
  forUpdate?: boolean;
  /**
   * Trust a cached claim confirmed this recently without asking the database. Only for the
   * pre-check of complete / simulate: execution always re-reads, so a stale pre-check can at most
   * queue an attempt that then fails (or refuse one a concurrent update just allowed).
   */
  maxAgeMs?: number;
}

/** The live claim (not deleted, not an expired test claim), or null. */
export async function loadClaim(
  db: DB | Tx,
  app: Deployment,
  claimId: string,
  now: number,
  opts: LoadOptions = {},
): Promise<ClaimRecord | null> {
  const cache = app.claimCache;
  if (opts.maxAgeMs) {
    const c = cache.get(claimId);
    if (c && performance.now() - c.checkedAt <= opts.maxAgeMs)
      return c.claim.testExpiresAt !== null && c.claim.testExpiresAt <= now ? null : c.claim;
  }
  const [h] = await runHot<Pick<ClaimTable, 'version' | 'last_updated' | 'deleted_at' | 'test_expires_at'>>(
    db,
    opts.forUpdate ? CLAIM_HEAD_FOR_UPDATE : CLAIM_HEAD,
    [claimId],
    app,
  );
  if (!h || h.deleted_at !== null || (h.test_expires_at !== null && h.test_expires_at <= now)) return null;
  const hit = cache.get(claimId);
  if (hit && hit.claim.version === h.version && hit.claim.lastUpdated === h.last_updated) {
    hit.checkedAt = performance.now();
    return hit.claim;
  }
  const row = await db.selectFrom('claims').selectAll().where('claim_id', '=', claimId).executeTakeFirstOrThrow();
  const parsed = parseClaimRow(row, app.keyring);
  remember(app, parsed);
  return parsed;
}
