// Rendering claim documents for readers. Private params (and the claim-level seed) are stripped,
// with `_includesPrivateParams: false`, unless the reader asked for them and is the creator or
// manager holding `readPrivateClaimData`. Search matches names with a case-insensitive regular
// expression run by a linear-time engine (re2js), never in SQL.
import type { AppContext } from '../context.ts';
import type { DB, Tx } from '../db/index.ts';
import type { JsonObject } from '../shared/json.ts';
import { RE2JS } from 're2js';
import { badRequest } from '../shared/errors.ts';
import { mapPage, newestFirst, paginate, paginateFiltered, type Page, type SortKey } from '../shared/pagination.ts';
import type { Session } from '../shared/session.ts';
import { findPlugin } from '../plugins/registry.ts';
import { isCreatorOrManager } from './documents.ts';
import { loadClaim, parseClaimRow, type ClaimRecord, type TrackerDetails } from './model.ts';
import type { SatisfyMethod } from './satisfy.ts';
import { failedGuesses } from './guess-throttle.ts';
import { allClaimNumbers, liveClaimQuery } from './storage.ts';

export interface ReadOptions {
  fetchAllClaimedUsers?: boolean;
  fetchPrivateParams?: boolean;
  privateStatesToFetch?: string[];
  /** Clock reading for the owner's guess figures (default: the system clock). */
  now?: number;
}

export interface PluginDocument {
  pluginId: string;
  instanceId: string;
  version: string;
  publicParams: JsonObject;
  privateParams: JsonObject;
  publicState: JsonObject;
  privateState?: JsonObject;
}

export interface ClaimDocument {
  _includesPrivateParams: boolean;
  _seedCode?: string;
  _failedGuesses?: { total: number; lastHour: number };
  claimId: string;
  createdBy: string;
  managedBy: string;
  collectionId: string;
  standaloneClaim: boolean;
  /** Always present: the empty values of its fields when the claim is not linked to an on-chain approval. */
  trackerDetails: TrackerDetails | typeof NO_TRACKER;
  plugins: PluginDocument[];
  rewards: JsonObject[];
  showInSearchResults: boolean;
  categories: string[];
  estimatedCost: string;
  estimatedTime: string;
  approach: string;
  metadata: { name: string; description: string; image: string };
  assignMethod: string;
  satisfyMethod?: SatisfyMethod;
  useCreatorAddressAsLeaf: boolean;
  testOnly: boolean;
  createdAt: string;
  lastUpdated: string;
  version: string;
}

/** Whether the session may read private params and private state of this claim. */
export const mayReadPrivate = (claim: ClaimRecord, session: Session | null): boolean =>
  !!session && session.scopes.includes('readPrivateClaimData') && isCreatorOrManager(claim, session.platformAddress);

async function instanceState(db: DB | Tx, claimId: string, instanceId: string, keys?: string[]) {
  if (keys && keys.length === 0) return [];
  let q = db
    .selectFrom('claim_state')
    .select(['key', 'value'])
    .where('claim_id', '=', claimId)
    .where('instance_id', '=', instanceId);
  if (keys) q = q.where('key', 'in', keys);
  return (await q.execute()).map((r) => ({ key: r.key, value: JSON.parse(r.value) as unknown }));
}

export async function renderClaim(
  db: DB | Tx,
  claim: ClaimRecord,
  session: Session | null,
  opts: ReadOptions = {},
): Promise<ClaimDocument> {
  const privileged = isCreatorOrManager(claim, session?.platformAddress);
  const includePrivate = !!opts.fetchPrivateParams && mayReadPrivate(claim, session);
  const privateStates = mayReadPrivate(claim, session) ? new Set(opts.privateStatesToFetch ?? []) : new Set<string>();
  const claimNumbers = opts.fetchAllClaimedUsers ? await allClaimNumbers(db, claim.claimId) : undefined;
  const plugins = await Promise.all(
    claim.plugins.map(async (inst): Promise<PluginDocument> => {
      const plugin = findPlugin(inst.pluginId);
      const doc: PluginDocument = {
        pluginId: inst.pluginId,
        instanceId: inst.instanceId,
        version: inst.version,
        publicParams: inst.publicParams,
        privateParams: includePrivate ? inst.privateParams : {},
        publicState: {},
      };
      if (plugin?.publicState) {
        const entries = await instanceState(db, claim.claimId, inst.instanceId, plugin.publicStateKeys);
        doc.publicState = plugin.publicState(entries, inst, {
          fetchAllClaimedUsers: !!opts.fetchAllClaimedUsers,
          privileged,
          ...(claimNumbers ? { claimNumbers } : {}),
        });
      }
      if (plugin?.privateState && privateStates.has(inst.instanceId)) {
        doc.privateState = plugin.privateState(await instanceState(db, claim.claimId, inst.instanceId));
      }
      return doc;
    }),
  );
  // failed password/code guesses (guess-throttle.ts), for the claim's creator or manager only
  const guessable = privileged && claim.plugins.some((p) => findPlugin(p.pluginId)?.requiresUserInput);
  const guesses = guessable ? await failedGuesses(db, claim.claimId, opts.now ?? Date.now()) : null;
  return {
    _includesPrivateParams: includePrivate,
    ...(includePrivate && claim.seedCode ? { _seedCode: claim.seedCode } : {}),
    ...(guesses ? { _failedGuesses: guesses } : {}),
    claimId: claim.claimId,
    createdBy: claim.createdBy,
    managedBy: claim.managedBy,
    collectionId: claim.collectionId,
    standaloneClaim: claim.standaloneClaim,
    trackerDetails: claim.trackerDetails ?? NO_TRACKER,
    plugins,
    rewards: claim.details.rewards,
    showInSearchResults: claim.showInSearchResults,
    categories: claim.details.categories,
    estimatedCost: claim.details.estimatedCost,
    estimatedTime: claim.details.estimatedTime,
    approach: claim.details.approach,
    metadata: claim.details.metadata,
    assignMethod: claim.assignMethod,
    ...(claim.satisfyMethod ? { satisfyMethod: claim.satisfyMethod } : {}),
    useCreatorAddressAsLeaf: claim.useCreatorAddressAsLeaf,
    testOnly: claim.testExpiresAt !== null,
    createdAt: String(claim.createdAt),
    lastUpdated: String(claim.lastUpdated),
    version: String(claim.version),
  };
}

/** trackerDetails of a claim with no on-chain link: every field present, empty. */
export const NO_TRACKER = {
  collectionId: '',
  approvalId: '',
  challengeTrackerId: '',
  approvalLevel: '',
  approverAddress: '',
} as const;

export async function getClaimDocument(
  ctx: AppContext,
  claimId: string,
  session: Session | null,
  opts: ReadOptions,
): Promise<ClaimDocument | null> {
  const claim = await loadClaim(ctx.db, ctx, claimId, ctx.clock.now());
  return claim ? renderClaim(ctx.db, claim, session, { ...opts, now: ctx.clock.now() }) : null;
}

/** Longest search pattern (the route's schema holds the same bound). */
export const MAX_SEARCH_PATTERN = 256;

/**
 * The search pattern, compiled by re2js: a linear-time engine (no backreferences, no
 * catastrophic backtracking), so no pattern can stall the service; case-insensitive, matched
 * anywhere in the name. An invalid pattern is a 400 naming the parser's reason.
 */
function searchPattern(searchValue: string): RE2JS | null {
  if (searchValue === '') return null;
  if (searchValue.length > MAX_SEARCH_PATTERN)
    throw badRequest(`searchValue must be at most ${MAX_SEARCH_PATTERN} characters`);
  try {
    RE2JS.compile(searchValue); // first without the flag: its error quotes the pattern as sent
    return RE2JS.compile(searchValue, RE2JS.CASE_INSENSITIVE);
  } catch (err) {
    throw badRequest(`searchValue is not a valid regular expression: ${(err as Error).message}`);
  }
}

/**
 * Listed claims whose name matches `searchValue` as a regular expression, newest first. The match
 * runs here in JavaScript over the listed claims in order (never in SQL), so both databases give
 * the same answers; paginateFiltered keeps pages full and bounds the rows one request reads.
 */
export async function searchClaims(
  ctx: AppContext,
  searchValue: string,
  bookmark: string | undefined,
  session: Session | null,
): Promise<Page<ClaimDocument>> {
  const pattern = searchPattern(searchValue);
  const query = liveClaimQuery(ctx.db, ctx.clock.now())
    .selectAll()
    .where('show_in_search', '=', 1)
    .where('test_expires_at', 'is', null);
  const page = await paginateFiltered({
    query,
    keys: newestFirst('claim_id', 'asc'),
    bookmark,
    keyring: ctx.keyring,
    scope: `claims/search-re:${searchValue}`,
    // the name from the public details only: nothing is decrypted for a row that is not kept
    keep: (row) =>
      pattern === null || pattern.test((JSON.parse(row.details) as { metadata: { name: string } }).metadata.name),
  });
  const docs = await Promise.all(page.docs.map((row) => renderClaim(ctx.db, parseClaimRow(row, ctx.keyring), session)));
  return { docs, bookmark: page.bookmark, hasMore: page.hasMore };
}

/** A claim in its creator's list (GET /api/v0/claims/mine). */
export interface OwnClaimSummary {
  claimId: string;
  name: string;
  createdAt: string;
  lastUpdated: string;
  version: string;
  testOnly: boolean;
}

/** The live claims `platformAddress` created, newest first, a page at a time. */
export async function claimsCreatedBy(
  ctx: Pick<AppContext, 'db' | 'clock' | 'keyring'>,
  platformAddress: string,
  bookmark: string | undefined,
): Promise<Page<OwnClaimSummary>> {
  const page = await paginate({
    query: liveClaimQuery(ctx.db, ctx.clock.now())
      .select(['claim_id', 'details', 'created_at', 'last_updated', 'version', 'test_expires_at'])
      .where('created_by', '=', platformAddress),
    keys: newestFirst('claim_id'),
    bookmark,
    keyring: ctx.keyring,
    scope: `myClaims|${platformAddress}`,
  });
  return mapPage(page, (r) => ({
    claimId: r.claim_id,
    name: String((JSON.parse(r.details) as { metadata?: { name?: string } }).metadata?.name ?? ''),
    createdAt: String(r.created_at),
    lastUpdated: String(r.last_updated),
    version: String(r.version),
    testOnly: r.test_expires_at !== null,
  }));
}

/**
 * Resolved attempts of `platformAddress`, by attempt time. `listedSuccesses`: only its successes
 * on claims listed in search (not deleted, not test claims), so the list never reveals an unlisted
 * claim's id; otherwise every resolved attempt on any claim.
 */
export async function resolvedAttemptsOf(
  ctx: Pick<AppContext, 'db' | 'keyring'>,
  platformAddress: string,
  listedSuccesses: boolean,
  req: { bookmark: string; oldestFirst: boolean; scope: string },
) {
  let query = ctx.db
    .selectFrom('claim_attempts as a')
    .select([
      'a.seq',
      'a.claim_attempt_id',
      'a.claim_id',
      'a.platform_address',
      'a.status',
      'a.error',
      'a.claim_number',
      'a.attempted_at',
      'a.resolved_at',
    ])
    .where('a.platform_address', '=', platformAddress);
  if (!listedSuccesses) {
    query = query.where('a.status', '!=', 'queued');
  } else {
    query = query
      .where('a.status', '=', 'success')
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('claims as c')
            .select('c.claim_id')
            .whereRef('c.claim_id', '=', 'a.claim_id')
            .where('c.show_in_search', '=', 1)
            .where('c.deleted_at', 'is', null)
            .where('c.test_expires_at', 'is', null),
        ),
      );
  }
  const direction = req.oldestFirst ? 'asc' : 'desc';
  const keys: SortKey[] = [
    { column: 'a.attempted_at', direction },
    { column: 'a.seq', direction },
  ];
  return paginate({ query, keys, bookmark: req.bookmark, keyring: ctx.keyring, scope: req.scope });
}
