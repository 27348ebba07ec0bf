// `platform import-chain FILE`: starts the read model from a snapshot of chain state at a height
// instead of replaying history. The file is validated as a whole; then one transaction replaces
// the read model and sets the cursor to the snapshot height, so the indexer resumes at height + 1
// (a running indexer loses its lease and picks the new cursor up). Format: docs/chain-data.md.
import { chunks, type DB } from '../db/index.ts';
import { tryCanonical } from '../shared/addresses.ts';
import {
  AMOUNT_TRACKER_FIELDS,
  amountTrackerDocId,
  amountTrackerKey,
  challengeTrackerDocId,
  CHALLENGE_TRACKER_FIELDS,
  challengeTrackerKey,
  type UpdateEntry,
} from './model.ts';
import { balanceRow } from './storage.ts';
import { checkCollectionId } from './views.ts';

export class SnapshotError extends Error {}

interface Snapshot {
  height: number;
  blockTime: number;
  collections: Record<string, unknown>[];
  balances: {
    collectionId: string;
    address: string;
    balance: Record<string, unknown> & { balances: { amount: string }[] };
  }[];
  amountTrackers: Record<string, string | unknown>[];
  challengeTrackers: Record<string, unknown>[];
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const DEC = /^\d+$/;

function need<T>(ok: boolean, message: string, value: T): T {
  if (!ok) throw new SnapshotError(message);
  return value;
}

function arrayField(doc: Record<string, unknown>, name: string): unknown[] {
  const v = doc[name];
  if (v === undefined) return [];
  return need(Array.isArray(v), `${name} must be an array`, v as unknown[]);
}

function checkBalances(list: unknown, field: string): void {
  need(Array.isArray(list), `${field} must be an array`, null);
  (list as unknown[]).forEach((b, i) => {
    need(
      isObj(b) && typeof b.amount === 'string' && DEC.test(b.amount),
      `${field}[${i}].amount must be a decimal string`,
      null,
    );
    for (const r of ['tokenIds', 'ownershipTimes']) {
      const ranges = (b as Record<string, unknown>)[r];
      need(
        Array.isArray(ranges) &&
          ranges.every(
            (x) =>
              isObj(x) &&
              typeof x.start === 'string' &&
              DEC.test(x.start) &&
              typeof x.end === 'string' &&
              DEC.test(x.end),
          ),
        `${field}[${i}].${r} must be an array of { start, end } decimal strings`,
        null,
      );
    }
  });
}

/** The native form of an address given in either form; '' (no address) is kept where `optional`. */
function address(v: unknown, field: string, optional: boolean): string {
  if (optional && (v ?? '') === '') return '';
  const native = tryCanonical(v);
  return need(native !== null, `${field} must be a native or 0x address (got ${JSON.stringify(v)})`, native as string);
}

function checkId(v: unknown, field: string): string {
  try {
    return checkCollectionId(typeof v === 'string' ? v : '', field);
  } catch (err) {
    throw new SnapshotError((err as Error).message);
  }
}

export function parseSnapshot(doc: unknown): Snapshot {
  if (!isObj(doc)) throw new SnapshotError('the snapshot must be a JSON object');
  const h = doc.height;
  const height = need(
    (typeof h === 'string' && /^\d{1,15}$/.test(h)) || (typeof h === 'number' && Number.isSafeInteger(h)),
    'height must be a block height (decimal string)',
    Number(h),
  );
  need(height >= 1, 'height must be at least 1', null);
  let blockTime = 0;
  if (doc.blockTime !== undefined) {
    blockTime =
      typeof doc.blockTime === 'string' && DEC.test(doc.blockTime)
        ? Number(doc.blockTime)
        : Date.parse(String(doc.blockTime));
    need(Number.isFinite(blockTime), 'blockTime must be an RFC 3339 time or UNIX ms', null);
  }
  const collections = arrayField(doc, 'collections').map((c, i) => {
    need(isObj(c), `collections[${i}] must be an object`, null);
    const col = c as Record<string, unknown>;
    checkId(col.collectionId, `collections[${i}].collectionId`);
    // stored native: the account views (managingTokens, createdTokens) match the native form
    const doc = { ...col };
    for (const k of ['manager', 'createdBy'])
      if (col[k] !== undefined) doc[k] = address(col[k], `collections[${i}].${k}`, true);
    return doc;
  });
  const ids = new Set<string>();
  collections.forEach((c, i) => {
    need(!ids.has(c.collectionId as string), `collections[${i}].collectionId ${c.collectionId} appears twice`, null);
    ids.add(c.collectionId as string);
  });
  const seen = new Set<string>();
  const balances = arrayField(doc, 'balances').map((b, i) => {
    need(isObj(b), `balances[${i}] must be an object`, null);
    const r = b as Record<string, unknown>;
    const collectionId = checkId(r.collectionId, `balances[${i}].collectionId`);
    need(
      ids.has(collectionId),
      `balances[${i}].collectionId ${collectionId} is not among the snapshot's collections`,
      null,
    );
    const owner = address(r.address, `balances[${i}].address`, false);
    need(isObj(r.balance), `balances[${i}].balance must be a balance store object`, null);
    const store = r.balance as Record<string, unknown>;
    checkBalances(store.balances, `balances[${i}].balance.balances`);
    const key = `${collectionId}:${owner}`;
    need(!seen.has(key), `balances[${i}]: ${key} appears twice`, null);
    seen.add(key);
    return { collectionId, address: owner, balance: store as Snapshot['balances'][number]['balance'] };
  });
  const str = (r: Record<string, unknown>, k: string, field: string) =>
    need(typeof (r[k] ?? '') === 'string', `${field}.${k} must be a string`, String(r[k] ?? ''));
  const amountTrackers = arrayField(doc, 'amountTrackers').map((t, i) => {
    need(isObj(t), `amountTrackers[${i}] must be an object`, null);
    const r = t as Record<string, unknown>;
    const f = `amountTrackers[${i}]`;
    checkId(r.collectionId, `${f}.collectionId`);
    for (const k of AMOUNT_TRACKER_FIELDS) str(r, k, f);
    need(
      typeof r.numTransfers === 'string' && DEC.test(r.numTransfers),
      `${f}.numTransfers must be a decimal string`,
      null,
    );
    checkBalances(r.amounts ?? [], `${f}.amounts`);
    return {
      ...r,
      approverAddress: address(r.approverAddress, `${f}.approverAddress`, true),
      approvedAddress: address(r.approvedAddress, `${f}.approvedAddress`, true),
    };
  });
  const challengeTrackers = arrayField(doc, 'challengeTrackers').map((t, i) => {
    need(isObj(t), `challengeTrackers[${i}] must be an object`, null);
    const r = t as Record<string, unknown>;
    const f = `challengeTrackers[${i}]`;
    checkId(r.collectionId, `${f}.collectionId`);
    for (const k of CHALLENGE_TRACKER_FIELDS) str(r, k, f);
    const leaves = r.usedLeafIndices ?? [];
    need(
      Array.isArray(leaves) &&
        leaves.every(
          (l) => isObj(l) && typeof l.leafIndex === 'string' && DEC.test(l.leafIndex) && typeof l.usedBy === 'string',
        ),
      `${f}.usedLeafIndices must be an array of { leafIndex, usedBy }`,
      null,
    );
    const usedLeafIndices = (leaves as Record<string, unknown>[]).map((l, j) => ({
      ...l,
      usedBy: address(l.usedBy, `${f}.usedLeafIndices[${j}].usedBy`, true),
    }));
    return { ...r, approverAddress: address(r.approverAddress, `${f}.approverAddress`, true), usedLeafIndices };
  });
  return { height, blockTime, collections, balances, amountTrackers, challengeTrackers };
}

async function insertChunks<T>(rows: T[], insert: (part: T[]) => Promise<unknown>): Promise<void> {
  for (const part of chunks(rows)) await insert(part);
}

/** Replaces the read model with the snapshot; returns what was loaded. */
export async function importSnapshot(
  db: DB,
  s: Snapshot,
  now: number,
): Promise<{
  height: number;
  collections: number;
  balances: number;
  amountTrackers: number;
  challengeTrackers: number;
}> {
  const history = JSON.stringify([
    {
      txHash: '',
      block: String(s.height),
      blockTimestamp: String(s.blockTime),
      timestamp: String(now),
    } satisfies UpdateEntry,
  ]);
  await db.transaction().execute(async (tx) => {
    for (const t of [
      'chain_activity_parties',
      'chain_activity',
      'chain_challenge_trackers',
      'chain_amount_trackers',
      'chain_balances',
      'chain_collections',
      'chain_index_state',
    ] as const) {
      await tx.deleteFrom(t).execute();
    }
    await tx
      .insertInto('chain_index_state')
      .values({
        id: 'indexer',
        height: s.height,
        block_time: s.blockTime,
        chain_height: s.height,
        holder: null,
        lease_expires_at: 0,
        updated_at: now,
      })
      .execute();
    await insertChunks(s.collections, (part) =>
      tx
        .insertInto('chain_collections')
        .values(
          part.map((c) => ({
            collection_id: c.collectionId as string,
            doc_json: JSON.stringify(c),
            manager: String(c.manager ?? ''),
            created_by: String(c.createdBy ?? ''),
            created_block: s.height,
            created_time: s.blockTime,
            updated_block: s.height,
            update_history: history,
          })),
        )
        .execute(),
    );
    await insertChunks(s.balances, (part) =>
      tx
        .insertInto('chain_balances')
        .values(part.map((b) => balanceRow(b.collectionId, b.address, b.balance, s.height, history)))
        .execute(),
    );
    await insertChunks(s.amountTrackers, (part) =>
      tx
        .insertInto('chain_amount_trackers')
        .values(
          part.map((t) => {
            const key = amountTrackerKey(String(t.collectionId), (field) => t[field]);
            const docId = amountTrackerDocId(key);
            const doc = {
              _docId: docId,
              ...key,
              numTransfers: String(t.numTransfers),
              amounts: t.amounts ?? [],
              lastUpdatedAt: String(t.lastUpdatedAt ?? '0'),
            };
            return {
              collection_id: key.collectionId,
              doc_id: docId,
              approver_address: key.approverAddress,
              approved_address: key.approvedAddress,
              doc_json: JSON.stringify(doc),
              updated_block: s.height,
            };
          }),
        )
        .execute(),
    );
    await insertChunks(s.challengeTrackers, (part) =>
      tx
        .insertInto('chain_challenge_trackers')
        .values(
          part.map((t) => {
            const key = challengeTrackerKey(String(t.collectionId), (field) => t[field]);
            const docId = challengeTrackerDocId(key);
            return {
              collection_id: key.collectionId,
              doc_id: docId,
              approver_address: key.approverAddress,
              doc_json: JSON.stringify({ _docId: docId, ...key, usedLeafIndices: t.usedLeafIndices ?? [] }),
              updated_block: s.height,
            };
          }),
        )
        .execute(),
    );
  });
  return {
    height: s.height,
    collections: s.collections.length,
    balances: s.balances.length,
    amountTrackers: s.amountTrackers.length,
    challengeTrackers: s.challengeTrackers.length,
  };
}
