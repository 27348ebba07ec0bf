// Read side of the chain read model: documents in the reference client's shapes (note §6.1,
// docs/chain-data.md) and the paged views over them (docs/api.md, signed keyset bookmarks). Every view is
// newest first unless `oldestFirst`; `address` narrows a view to one participant.
import type { AppContext } from '../context.ts';
import { toCanonical } from '../shared/addresses.ts';
import { badRequest } from '../shared/errors.ts';
import type { SelectQueryBuilder } from 'kysely';
import { mapPage, paginate, paginateFiltered, type Page, type SortKey } from '../shared/pagination.ts';
import { ownerDocId } from './model.ts';

export type Doc = Record<string, unknown> & { _docId: string };

export interface ViewOptions {
  bookmark?: string;
  oldestFirst?: boolean;
  /** Either address form; canonicalised. */
  address?: string;
}

/** Keys of `userPermissions` an owner document always carries (docs/chain-data.md). */
const USER_PERMISSION_KEYS = [
  'canUpdateOutgoingApprovals',
  'canUpdateIncomingApprovals',
  'canUpdateAutoApproveSelfInitiatedOutgoingTransfers',
  'canUpdateAutoApproveSelfInitiatedIncomingTransfers',
  'canUpdateAutoApproveAllIncomingTransfers',
];

export const COLLECTION_ID = /^[0-9]{1,20}$/;

export function checkCollectionId(id: string, field = 'collectionId'): string {
  if (!COLLECTION_ID.test(id) || /^0\d/.test(id) || id === '0')
    throw badRequest(
      `${field} must be a collection id: a positive integer as a decimal string (got ${JSON.stringify(id)})`,
    );
  return id;
}

const keys = (oldestFirst: boolean | undefined, ...columns: string[]): SortKey[] =>
  columns.map((column) => ({ column, direction: oldestFirst ? 'asc' : 'desc' }));
const scopeOf = (view: string, o: ViewOptions, address: string | null) =>
  `chain:${view}:${address ?? ''}:${o.oldestFirst ? 'asc' : 'desc'}`;

// ---- document builders --------------------------------------------------------------------------

export function collectionDocFromRow(r: {
  collection_id: string;
  doc_json: string;
  created_block: number;
  created_time: number;
  update_history: string;
}): Doc {
  return {
    ...(JSON.parse(r.doc_json) as Record<string, unknown>),
    _docId: r.collection_id,
    collectionId: r.collection_id,
    createdBlock: String(r.created_block),
    createdTimestamp: String(r.created_time),
    updateHistory: JSON.parse(r.update_history) as unknown[],
  };
}

/** Owner document exactly as docs/chain-data.md lists it. */
export function ownerDoc(
  collectionId: string,
  address: string,
  store: Record<string, unknown>,
  updateHistory: unknown[],
): Doc {
  const perms =
    typeof store.userPermissions === 'object' && store.userPermissions !== null
      ? (store.userPermissions as Record<string, unknown>)
      : {};
  const userPermissions: Record<string, unknown> = {};
  for (const k of USER_PERMISSION_KEYS) userPermissions[k] = Array.isArray(perms[k]) ? perms[k] : [];
  for (const [k, v] of Object.entries(perms)) if (!(k in userPermissions)) userPermissions[k] = v;
  return {
    _docId: ownerDocId(collectionId, address),
    collectionId,
    platformAddress: address,
    balances: Array.isArray(store.balances) ? store.balances : [],
    incomingApprovals: Array.isArray(store.incomingApprovals) ? store.incomingApprovals : [],
    outgoingApprovals: Array.isArray(store.outgoingApprovals) ? store.outgoingApprovals : [],
    userPermissions,
    autoApproveSelfInitiatedOutgoingTransfers: store.autoApproveSelfInitiatedOutgoingTransfers === true,
    autoApproveSelfInitiatedIncomingTransfers: store.autoApproveSelfInitiatedIncomingTransfers === true,
    autoApproveAllIncomingTransfers: store.autoApproveAllIncomingTransfers === true,
    updateHistory,
  };
}

const ownerDocFromRow = (r: {
  collection_id: string;
  address: string;
  store_json: string;
  update_history: string;
}): Doc =>
  ownerDoc(
    r.collection_id,
    r.address,
    JSON.parse(r.store_json) as Record<string, unknown>,
    JSON.parse(r.update_history) as unknown[],
  );

const jsonDoc = (r: { doc_json: string }): Doc => JSON.parse(r.doc_json) as Doc;

// ---- single documents ---------------------------------------------------------------------------

export async function getCollection(ctx: AppContext, collectionId: string): Promise<Doc | null> {
  const r = await ctx.db
    .selectFrom('chain_collections')
    .selectAll()
    .where('collection_id', '=', collectionId)
    .executeTakeFirst();
  return r ? collectionDocFromRow(r) : null;
}

/**
 * An address's owner document. An address the indexer never saw touched holds the collection's
 * default balance store (what the chain's `get_balance` answers for it), with no history.
 */
export async function getBalance(ctx: AppContext, collectionId: string, address: string): Promise<Doc | null> {
  const native = toCanonical(address, 'address');
  const r = await ctx.db
    .selectFrom('chain_balances')
    .selectAll()
    .where('collection_id', '=', collectionId)
    .where('address', '=', native)
    .executeTakeFirst();
  if (r) return ownerDocFromRow(r);
  const c = await ctx.db
    .selectFrom('chain_collections')
    .select('doc_json')
    .where('collection_id', '=', collectionId)
    .executeTakeFirst();
  if (!c) return null;
  const defaults = (JSON.parse(c.doc_json) as { defaultBalances?: Record<string, unknown> }).defaultBalances ?? {};
  return ownerDoc(collectionId, native, defaults, []);
}

/**
 * The address's owner document in each of these collections (documents of the read model, as a
 * page of collectionsByRoleView holds them), in their order: the stored store, or the
 * collection's default balances when the indexer never saw the address touched there.
 */
export async function ownerDocsIn(ctx: AppContext, address: string, collections: Doc[]): Promise<Doc[]> {
  const native = toCanonical(address, 'address');
  const ids = collections.map((c) => String(c.collectionId));
  const rows = ids.length
    ? await ctx.db
        .selectFrom('chain_balances')
        .select(['collection_id', 'address', 'store_json', 'update_history'])
        .where('address', '=', native)
        .where('collection_id', 'in', ids)
        .execute()
    : [];
  const stored = new Map(rows.map((r) => [r.collection_id, r]));
  return collections.map((c, i) => {
    const r = stored.get(ids[i]);
    if (r) return ownerDocFromRow(r);
    const defaults = c.defaultBalances;
    return ownerDoc(
      ids[i],
      native,
      typeof defaults === 'object' && defaults !== null ? (defaults as Record<string, unknown>) : {},
      [],
    );
  });
}

// ---- token ids ---------------------------------------------------------------------------------

export const TOKEN_ID = /^[1-9][0-9]{0,19}$/;
const MAX_UINT64 = 18446744073709551615n;

export function checkTokenId(id: string): bigint {
  if (!TOKEN_ID.test(id) || BigInt(id) > MAX_UINT64)
    throw badRequest(
      `tokenId must be a token id: a positive integer up to 2^64 - 1 as a decimal string (got ${JSON.stringify(id)})`,
    );
  return BigInt(id);
}

type JsonBalance = { amount: string; tokenIds?: { start: string; end: string }[]; ownershipTimes?: unknown[] };
const covers = (b: JsonBalance, tokenId: bigint) =>
  (b.tokenIds ?? []).some((r) => BigInt(r.start) <= tokenId && tokenId <= BigInt(r.end));
const amountOf = (b: JsonBalance) => BigInt(b.amount);

/** The pieces of a balance list that cover `tokenId`, each narrowed to that one id. */
export function balancesOfToken(balances: unknown, tokenId: bigint): JsonBalance[] {
  const list = Array.isArray(balances) ? (balances as JsonBalance[]) : [];
  const id = tokenId.toString();
  return list.filter((b) => covers(b, tokenId)).map((b) => ({ ...b, tokenIds: [{ start: id, end: id }] }));
}

const holdsToken = (balances: unknown, tokenId: bigint) =>
  balancesOfToken(balances, tokenId).some((b) => amountOf(b) > 0n);

// ---- collection views ---------------------------------------------------------------------------
// The per-token views keep the same rows and order as the collection views, narrowed to one token
// id. Whether a balance list covers the id is read from its JSON, so those page with
// paginateFiltered.

/** One page of `query` in the order of `columns`: filtered in memory by `keep` when given. */
function pageOf<D, TB extends keyof D, Row extends Record<string, unknown>>(
  ctx: Pick<AppContext, 'keyring'>,
  query: SelectQueryBuilder<D, TB, Row>,
  columns: string[],
  o: ViewOptions,
  scope: string,
  keep?: (row: Row) => boolean,
): Promise<Page<Row>> {
  const opts = { query, keys: keys(o.oldestFirst, ...columns), bookmark: o.bookmark, keyring: ctx.keyring, scope };
  return keep ? paginateFiltered({ ...opts, keep }) : paginate(opts);
}

/** Transfer legs `address` sent or received, through the parties index. */
const legsOfParty = (ctx: Pick<AppContext, 'db'>, address: string) =>
  ctx.db
    .selectFrom('chain_activity_parties as p')
    .innerJoin('chain_activity as a', 'a.doc_id', 'p.doc_id')
    .select(['a.doc_json', 'p.block', 'p.tx_index', 'p.leg_index'])
    .where('p.address', '=', address);
const PARTY_LEG_ORDER = ['p.block', 'p.tx_index', 'p.leg_index'];

/** Holders (some amount > 0) in the order they first appeared; with `tokenId`, holders of that token. */
async function holders(ctx: AppContext, collectionId: string, o: ViewOptions, tokenId?: bigint): Promise<Page<Doc>> {
  const address = o.address ? toCanonical(o.address, 'address') : null;
  let query = ctx.db
    .selectFrom('chain_balances')
    .select(['collection_id', 'address', 'store_json', 'update_history', 'first_block'])
    .where('collection_id', '=', collectionId)
    .where('has_balance', '=', 1);
  if (address) query = query.where('address', '=', address);
  const view = tokenId === undefined ? `owners:${collectionId}` : `owners:${collectionId}:${tokenId}`;
  const keep =
    tokenId === undefined
      ? undefined
      : (r: { store_json: string }) =>
          holdsToken((JSON.parse(r.store_json) as { balances?: unknown }).balances, tokenId);
  const page = await pageOf(ctx, query, ['first_block', 'address'], o, scopeOf(view, o, address), keep);
  return mapPage(page, ownerDocFromRow);
}

/** Transfer legs of the collection in chain order; with `tokenId`, legs that moved some of it. */
async function transfers(ctx: AppContext, collectionId: string, o: ViewOptions, tokenId?: bigint): Promise<Page<Doc>> {
  const address = o.address ? toCanonical(o.address, 'address') : null;
  const view = tokenId === undefined ? `activity:${collectionId}` : `activity:${collectionId}:${tokenId}`;
  const scope = scopeOf(view, o, address);
  const keep =
    tokenId === undefined
      ? undefined
      : (r: { doc_json: string }) => holdsToken((JSON.parse(r.doc_json) as { balances?: unknown }).balances, tokenId);
  if (!address) {
    const query = ctx.db
      .selectFrom('chain_activity')
      .select(['doc_json', 'block', 'tx_index', 'leg_index'])
      .where('collection_id', '=', collectionId);
    return mapPage(await pageOf(ctx, query, ['block', 'tx_index', 'leg_index'], o, scope, keep), jsonDoc);
  }
  const query = legsOfParty(ctx, address).where('p.collection_id', '=', collectionId);
  return mapPage(await pageOf(ctx, query, PARTY_LEG_ORDER, o, scope, keep), jsonDoc);
}

/** Holders (some amount > 0) in the order they first appeared. */
export const ownersView = (ctx: AppContext, collectionId: string, o: ViewOptions): Promise<Page<Doc>> =>
  holders(ctx, collectionId, o);

/** Transfer legs of the collection in chain order; `address`: legs it sent or received. */
export const collectionActivityView = (ctx: AppContext, collectionId: string, o: ViewOptions): Promise<Page<Doc>> =>
  transfers(ctx, collectionId, o);

/** Amount trackers, most recently moved first; `address`: trackers it approves or is tracked in. */
export async function amountTrackersView(ctx: AppContext, collectionId: string, o: ViewOptions): Promise<Page<Doc>> {
  const address = o.address ? toCanonical(o.address, 'address') : null;
  let query = ctx.db
    .selectFrom('chain_amount_trackers')
    .select(['doc_json', 'updated_block', 'doc_id'])
    .where('collection_id', '=', collectionId);
  if (address)
    query = query.where((eb) => eb.or([eb('approver_address', '=', address), eb('approved_address', '=', address)]));
  const scope = scopeOf(`amountTrackers:${collectionId}`, o, address);
  return mapPage(await pageOf(ctx, query, ['updated_block', 'doc_id'], o, scope), jsonDoc);
}

/** Challenge trackers, most recently used first; `address`: trackers of approvals it owns. */
export async function challengeTrackersView(ctx: AppContext, collectionId: string, o: ViewOptions): Promise<Page<Doc>> {
  const address = o.address ? toCanonical(o.address, 'address') : null;
  let query = ctx.db
    .selectFrom('chain_challenge_trackers')
    .select(['doc_json', 'updated_block', 'doc_id'])
    .where('collection_id', '=', collectionId);
  if (address) query = query.where('approver_address', '=', address);
  const scope = scopeOf(`challengeTrackers:${collectionId}`, o, address);
  return mapPage(await pageOf(ctx, query, ['updated_block', 'doc_id'], o, scope), jsonDoc);
}

/** Owners holding some amount of `tokenId`, in the owners view's order. */
export const tokenOwnersView = (
  ctx: AppContext,
  collectionId: string,
  tokenId: bigint,
  o: ViewOptions,
): Promise<Page<Doc>> => holders(ctx, collectionId, o, tokenId);

/** Transfer legs of the collection that moved some of `tokenId`, in the activity view's order. */
export const tokenActivityView = (
  ctx: AppContext,
  collectionId: string,
  tokenId: bigint,
  o: ViewOptions,
): Promise<Page<Doc>> => transfers(ctx, collectionId, o, tokenId);

// ---- account views ------------------------------------------------------------------------------

export async function addressActivityView(ctx: AppContext, address: string, o: ViewOptions): Promise<Page<Doc>> {
  const scope = scopeOf('account-activity', o, address);
  return mapPage(await pageOf(ctx, legsOfParty(ctx, address), PARTY_LEG_ORDER, o, scope), jsonDoc);
}

/** Owner documents of the address in every collection where it holds something. */
export async function tokensCollectedView(ctx: AppContext, address: string, o: ViewOptions): Promise<Page<Doc>> {
  const query = ctx.db
    .selectFrom('chain_balances')
    .select(['collection_id', 'address', 'store_json', 'update_history', 'first_block'])
    .where('address', '=', address)
    .where('has_balance', '=', 1);
  const scope = scopeOf('tokens-collected', o, address);
  return mapPage(await pageOf(ctx, query, ['first_block', 'collection_id'], o, scope), ownerDocFromRow);
}

/** Collections the address created (`createdBy`) or manages (`manager`), newest first. */
export async function collectionsByRoleView(
  ctx: AppContext,
  role: 'created_by' | 'manager',
  address: string,
  o: ViewOptions,
): Promise<Page<Doc>> {
  const query = ctx.db
    .selectFrom('chain_collections')
    .select(['collection_id', 'doc_json', 'created_block', 'created_time', 'update_history'])
    .where(role, '=', address);
  const scope = scopeOf(`collections-${role}`, o, address);
  return mapPage(await pageOf(ctx, query, ['created_block', 'collection_id'], o, scope), collectionDocFromRow);
}
