// Dynamic stores: hosted address lists edited by add/remove actions (docs/stores.md,
// §4.26). Plain functions over the storage module; routes are thin wrappers around these.
//
// Edits apply synchronously inside one transaction: when an action route answers, every claim
// reading the store already sees the change (no queue, unlike the reference's 1–2 s delay).
import { sql } from 'kysely';
import type { AppContext } from '../context.ts';
import { toCanonical } from '../shared/addresses.ts';
import { randomHex, safeEqual, sha256Hex } from '../shared/crypto.ts';
import { ApiError, badRequest, forbidden, notFound, unauthorized } from '../shared/errors.ts';
import { mapPage, newestFirst, paginate, type Page } from '../shared/pagination.ts';
import type { Session } from '../shared/session.ts';
import {
  addMembers,
  adjustSize,
  beginEdit,
  deleteStoreRows,
  findStore,
  firstMembers,
  hasMember,
  insertActivity,
  insertStore,
  removeMembers,
  updateStoreRow,
  type StoreRow,
} from './storage.ts';

export type Deps = Pick<AppContext, 'db' | 'keyring' | 'clock'>;

/** The scope a session needs to manage stores (and to edit them without the secret). */
export const STORE_SCOPE = 'manageDynamicStores';
export const HANDLER_ID = 'addresses';
/** A store document carries its addresses inline up to this many; beyond, `data` is a prefix. */
export const DATA_INLINE_LIMIT = 1000;
export const MAX_BATCH_ACTIONS = 10_000;
/** One activity document holds at most this many actions (a bigger batch spans several). */
export const ACTIVITY_CHUNK = 500;
export const LABEL_MAX = 256;

export type ActionName = 'add' | 'remove';
export interface StoreAction {
  actionName: ActionName;
  payload: { address: string };
}

export interface StoreDoc {
  handlerId: string;
  dynamicDataId: string;
  label: string;
  /** Only for the creator or manager. */
  dataSecret?: string;
  /** Members in address order: all of them when `size <= DATA_INLINE_LIMIT`, else the first ones. */
  data: string[];
  /** True when `data` is not the whole store (page through /values instead). */
  dataTruncated: boolean;
  /** Number of addresses in the store. */
  size: number;
  createdBy: string;
  managedBy: string;
  publicUseInClaims: boolean;
  createdAt: string;
  lastUpdated: string;
}

/** Who is asking: the request's session (if any) and the dataSecret it sent (if any). */
export interface Caller {
  session: Session | null;
  dataSecret?: string;
}

// ---------------------------------------------------------------- access rules

const isOwnerAddress = (row: StoreRow, address: string) => address === row.created_by || address === row.managed_by;

/** Signed in as creator or manager, holding the store scope. */
export const isOwner = (row: StoreRow, session: Session | null): boolean =>
  !!session && session.scopes.includes(STORE_SCOPE) && isOwnerAddress(row, session.platformAddress);

/** Constant-time check of a presented secret against the stored hash. */
export const secretMatches = (row: Pick<StoreRow, 'data_secret_hash'>, secret: string | undefined): boolean =>
  typeof secret === 'string' && safeEqual(sha256Hex(secret), row.data_secret_hash);

const INVALID_SECRET = 'Invalid data secret';

/** `what` names the action as a subject ("Reading this store"), `verb` as a verb phrase ("read this store"). */
function denyWithoutOwnership(row: StoreRow, caller: Caller, what: string, verb: string): never {
  const s = caller.session;
  if (s && isOwnerAddress(row, s.platformAddress)) {
    throw forbidden(`${what} as the store's creator or manager requires the session to hold the scope: ${STORE_SCOPE}`);
  }
  if (s)
    throw forbidden(`Only the creator or manager of this store, or a caller presenting its dataSecret, can ${verb}`);
  throw unauthorized(
    `${what} requires a session of the store's creator or manager (scope ${STORE_SCOPE}) or the store's dataSecret`,
  );
}

/**
 * Reading a store (document, membership, members, activity): the owner, anyone for a
 * publicUseInClaims store, otherwise the correct dataSecret. Returns whether the caller is the owner.
 */
export function authorizeRead(row: StoreRow, caller: Caller): 'owner' | 'reader' {
  if (isOwner(row, caller.session)) return 'owner';
  if (row.public_use_in_claims) return 'reader';
  if (caller.dataSecret !== undefined) {
    if (secretMatches(row, caller.dataSecret)) return 'reader';
    throw forbidden(INVALID_SECRET);
  }
  return denyWithoutOwnership(row, caller, 'Reading this store', 'read this store');
}

/** Editing members: the owner without a secret, or anyone with the API key plus the correct secret. publicUseInClaims never grants edits. */
export function authorizeEdit(row: StoreRow, caller: Caller): void {
  if (isOwner(row, caller.session)) return;
  if (caller.dataSecret !== undefined) {
    if (secretMatches(row, caller.dataSecret)) return;
    throw forbidden(INVALID_SECRET);
  }
  denyWithoutOwnership(row, caller, 'Editing this store', 'edit this store');
}

function authorizeManage(row: StoreRow, session: Session, what: string): void {
  if (!isOwnerAddress(row, session.platformAddress))
    throw forbidden(`Only the creator or manager of this store can ${what} it`);
  if (!session.scopes.includes(STORE_SCOPE))
    throw forbidden(`This route requires the session to hold the scope(s): ${STORE_SCOPE}`);
}

const storeNotFound = (id: string) => notFound(`Dynamic data doc not found: ${id}`);

async function loadStore(deps: Deps, dynamicDataId: string): Promise<StoreRow> {
  const row = await findStore(deps.db, dynamicDataId);
  if (!row) throw storeNotFound(dynamicDataId);
  return row;
}

// ---------------------------------------------------------------- documents

export async function toDoc(deps: Deps, row: StoreRow, withSecret: boolean): Promise<StoreDoc> {
  const data = row.size === 0 ? [] : await firstMembers(deps.db, row.dynamic_data_id, DATA_INLINE_LIMIT);
  return {
    handlerId: row.handler_id,
    dynamicDataId: row.dynamic_data_id,
    label: row.label,
    ...(withSecret ? { dataSecret: deps.keyring.decrypt(row.data_secret_enc) } : {}),
    data,
    dataTruncated: row.size > data.length,
    size: row.size,
    createdBy: row.created_by,
    managedBy: row.managed_by,
    publicUseInClaims: row.public_use_in_claims === 1,
    createdAt: String(row.created_at),
    lastUpdated: String(row.last_updated),
  };
}

function checkLabel(label: string): string {
  if (label.length > LABEL_MAX) throw badRequest(`label must be at most ${LABEL_MAX} characters`);
  return label;
}

export async function createStore(
  deps: Deps,
  session: Session,
  input: { handlerId: string; label: string; publicUseInClaims?: boolean },
): Promise<StoreDoc> {
  if (input.handlerId !== HANDLER_ID) {
    throw badRequest(
      `Invalid handlerId: ${JSON.stringify(input.handlerId)}. The only supported handler is "${HANDLER_ID}".`,
    );
  }
  const now = deps.clock.now();
  const secret = randomHex(32);
  const row: StoreRow = {
    dynamic_data_id: randomHex(16),
    handler_id: HANDLER_ID,
    label: checkLabel(input.label),
    data_secret_enc: deps.keyring.encrypt(secret),
    data_secret_hash: sha256Hex(secret),
    created_by: session.platformAddress,
    managed_by: session.platformAddress,
    public_use_in_claims: input.publicUseInClaims ? 1 : 0,
    size: 0,
    activity_seq: 0,
    created_at: now,
    last_updated: now,
  };
  await insertStore(deps.db, row);
  return toDoc(deps, row, true);
}

export async function updateStore(
  deps: Deps,
  session: Session,
  input: { dynamicDataId: string; label?: string; publicUseInClaims?: boolean; rotateDataSecret?: boolean },
): Promise<StoreDoc> {
  const row = await loadStore(deps, input.dynamicDataId);
  authorizeManage(row, session, 'update');
  const set: Partial<StoreRow> = { last_updated: deps.clock.now() };
  if (input.label !== undefined) set.label = checkLabel(input.label);
  if (input.publicUseInClaims !== undefined) set.public_use_in_claims = input.publicUseInClaims ? 1 : 0;
  if (input.rotateDataSecret) {
    const secret = randomHex(32);
    set.data_secret_enc = deps.keyring.encrypt(secret);
    set.data_secret_hash = sha256Hex(secret);
  }
  const updated = await updateStoreRow(deps.db, input.dynamicDataId, set);
  if (!updated) throw storeNotFound(input.dynamicDataId);
  return toDoc(deps, updated, true);
}

export async function deleteStore(deps: Deps, session: Session, dynamicDataId: string): Promise<void> {
  const row = await loadStore(deps, dynamicDataId);
  authorizeManage(row, session, 'delete');
  const deleted = await deps.db.transaction().execute((tx) => deleteStoreRows(tx, dynamicDataId));
  if (!deleted) throw storeNotFound(dynamicDataId);
}

export async function getStore(deps: Deps, dynamicDataId: string, caller: Caller): Promise<StoreDoc> {
  const row = await loadStore(deps, dynamicDataId);
  return toDoc(deps, row, authorizeRead(row, caller) === 'owner');
}

/** Batch fetch: unknown stores and stores the caller may not read come back as null, in request order. */
export async function fetchStores(deps: Deps, ids: string[], caller: Caller): Promise<(StoreDoc | null)[]> {
  const out: (StoreDoc | null)[] = [];
  for (const id of ids) {
    const row = await findStore(deps.db, id);
    if (!row) {
      out.push(null);
      continue;
    }
    try {
      out.push(await toDoc(deps, row, authorizeRead(row, caller) === 'owner'));
    } catch (err) {
      if (err instanceof ApiError) out.push(null);
      else throw err;
    }
  }
  return out;
}

/** The signed-in user's stores (created or managed), newest first; `searchValue` filters labels. */
export async function searchStores(
  deps: Deps,
  session: Session,
  opts: { bookmark?: string; searchValue?: string },
): Promise<Page<StoreDoc>> {
  const me = session.platformAddress;
  let query = deps.db
    .selectFrom('dynamic_stores')
    .selectAll()
    .where((eb) => eb.or([eb('created_by', '=', me), eb('managed_by', '=', me)]));
  if (opts.searchValue) {
    const pattern = `%${opts.searchValue.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where(sql<boolean>`lower(label) like ${pattern} escape '\\'`);
  }
  const page = await paginate({
    query,
    keys: newestFirst('dynamic_data_id', 'asc'),
    bookmark: opts.bookmark,
    keyring: deps.keyring,
    scope: `dynamicStores/search:${me}:${opts.searchValue ?? ''}`,
  });
  const docs: StoreDoc[] = [];
  for (const row of page.docs) docs.push(await toDoc(deps, row, isOwner(row, session)));
  return { ...page, docs };
}

// ---------------------------------------------------------------- membership

export async function lookupMember(
  deps: Deps,
  dynamicDataId: string,
  key: unknown,
  caller: Caller,
): Promise<{ key: string; inStore: boolean }> {
  const address = toCanonical(key, 'key');
  const row = await loadStore(deps, dynamicDataId);
  authorizeRead(row, caller);
  return { key: address, inStore: await hasMember(deps.db, dynamicDataId, address) };
}

export async function listMembers(
  deps: Deps,
  dynamicDataId: string,
  bookmark: string | undefined,
  caller: Caller,
): Promise<Page<{ key: string; inStore: true }>> {
  const row = await loadStore(deps, dynamicDataId);
  authorizeRead(row, caller);
  const page = await paginate({
    query: deps.db.selectFrom('dynamic_store_members').select('address').where('dynamic_data_id', '=', dynamicDataId),
    keys: [{ column: 'address', direction: 'asc' }],
    bookmark,
    keyring: deps.keyring,
    scope: `dynamicStore/values:${dynamicDataId}`,
  });
  return mapPage(page, (r) => ({ key: r.address, inStore: true as const }));
}

export interface ActivityDoc {
  _docId: string;
  dynamicDataId: string;
  updatedAt: string;
  actions: StoreAction[];
}

export async function listActivity(
  deps: Deps,
  dynamicDataId: string,
  bookmark: string | undefined,
  caller: Caller,
): Promise<Page<ActivityDoc>> {
  const row = await loadStore(deps, dynamicDataId);
  authorizeRead(row, caller);
  const page = await paginate({
    query: deps.db.selectFrom('dynamic_store_activity').selectAll().where('dynamic_data_id', '=', dynamicDataId),
    keys: [{ column: 'seq', direction: 'desc' }],
    bookmark,
    keyring: deps.keyring,
    scope: `dynamicStores/activity:${dynamicDataId}`,
  });
  return mapPage(page, (r) => ({
    _docId: `${r.dynamic_data_id}:${r.seq}`,
    dynamicDataId: r.dynamic_data_id,
    updatedAt: String(r.updated_at),
    actions: JSON.parse(r.actions) as StoreAction[],
  }));
}

// ---------------------------------------------------------------- actions

/** Validates and canonicalises actions; a 400 names the first bad one by index and value. */
export function normalizeActions(actions: unknown[], fieldOf: (i: number) => string): StoreAction[] {
  if (actions.length > MAX_BATCH_ACTIONS)
    throw badRequest(`A batch holds at most ${MAX_BATCH_ACTIONS} actions (got ${actions.length})`);
  const out: StoreAction[] = new Array(actions.length);
  for (let i = 0; i < actions.length; i++) {
    const a = actions[i] as { actionName?: unknown; payload?: { address?: unknown } } | null;
    const where = fieldOf(i);
    const name = a?.actionName;
    if (name !== 'add' && name !== 'remove') {
      throw badRequest(`Invalid ${where}.actionName: ${JSON.stringify(name)} is not an action (use "add" or "remove")`);
    }
    out[i] = { actionName: name, payload: { address: toCanonical(a?.payload?.address, `${where}.payload.address`) } };
  }
  return out;
}

export interface ApplyInput {
  dynamicDataId: string;
  dataSecret?: string;
  actions: StoreAction[];
  isSimulation?: boolean;
}

/**
 * Applies validated actions as one unit, in order: within a batch the last action on an address
 * decides whether it ends in the store. All or nothing; nothing at all when simulating.
 */
export async function applyActions(deps: Deps, input: ApplyInput, session: Session | null): Promise<void> {
  const caller: Caller = { session, ...(input.dataSecret !== undefined ? { dataSecret: input.dataSecret } : {}) };
  const row = await loadStore(deps, input.dynamicDataId);
  authorizeEdit(row, caller);
  if (input.isSimulation || input.actions.length === 0) return;

  const last = new Map<string, ActionName>();
  for (const a of input.actions) last.set(a.payload.address, a.actionName);
  const toAdd: string[] = [];
  const toRemove: string[] = [];
  for (const [address, name] of last) (name === 'add' ? toAdd : toRemove).push(address);
  // Key order: the B-tree is then walked once instead of probed at random.
  toAdd.sort();
  toRemove.sort();

  const chunks = Math.ceil(input.actions.length / ACTIVITY_CHUNK);
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (tx) => {
    // Lock first, then re-check access against the locked row (the secret may have just rotated).
    const locked = await beginEdit(tx, input.dynamicDataId, chunks, now);
    if (!locked) throw storeNotFound(input.dynamicDataId);
    authorizeEdit(locked, caller);
    const removed = toRemove.length ? await removeMembers(tx, input.dynamicDataId, toRemove) : 0;
    const added = toAdd.length ? await addMembers(tx, input.dynamicDataId, toAdd) : 0;
    await adjustSize(tx, input.dynamicDataId, added - removed);
    const firstSeq = locked.activity_seq - chunks + 1;
    await insertActivity(
      tx,
      Array.from({ length: chunks }, (_, c) => ({
        dynamic_data_id: input.dynamicDataId,
        seq: firstSeq + c,
        updated_at: now,
        actions: JSON.stringify(input.actions.slice(c * ACTIVITY_CHUNK, (c + 1) * ACTIVITY_CHUNK)),
      })),
    );
  });
}
