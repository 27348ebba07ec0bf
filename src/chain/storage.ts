// The chain read model in the database: the indexer's cursor and lease, and one block's writes,
// committed in one transaction fenced by the cursor (height h commits only over h − 1, and only
// by the lease holder), so a crash loses nothing and a second indexer cannot duplicate anything.
import { chunks, type DB, type Tx } from '../db/index.ts';
import { appendHistory, holdsSomething, ownerDocId, type BlockWork, type UpdateEntry } from './model.ts';

export interface ChainIndexStateTable {
  id: string;
  height: number;
  block_time: number;
  chain_height: number;
  holder: string | null;
  lease_expires_at: number;
  updated_at: number;
}
export interface ChainCollectionTable {
  collection_id: string;
  doc_json: string;
  manager: string;
  created_by: string;
  created_block: number;
  created_time: number;
  updated_block: number;
  update_history: string;
}
export interface ChainBalanceTable {
  collection_id: string;
  address: string;
  store_json: string;
  has_balance: number;
  first_block: number;
  updated_block: number;
  update_history: string;
}

/** A holder's balance row as of block `height`, where it was first and last written. */
export const balanceRow = (
  collectionId: string,
  address: string,
  store: { balances: { amount: string }[] },
  height: number,
  updateHistory: string,
): ChainBalanceTable => ({
  collection_id: collectionId,
  address,
  store_json: JSON.stringify(store),
  has_balance: holdsSomething(store.balances) ? 1 : 0,
  first_block: height,
  updated_block: height,
  update_history: updateHistory,
});

export interface ChainActivityTable {
  doc_id: string;
  collection_id: string;
  block: number;
  tx_index: number;
  leg_index: number;
  doc_json: string;
}
export interface ChainActivityPartyTable {
  address: string;
  collection_id: string;
  block: number;
  tx_index: number;
  leg_index: number;
  doc_id: string;
}
export interface ChainAmountTrackerTable {
  collection_id: string;
  doc_id: string;
  approver_address: string;
  approved_address: string;
  doc_json: string;
  updated_block: number;
}
export interface ChainChallengeTrackerTable {
  collection_id: string;
  doc_id: string;
  approver_address: string;
  doc_json: string;
  updated_block: number;
}

export interface ChainTables {
  chain_index_state: ChainIndexStateTable;
  chain_collections: ChainCollectionTable;
  chain_balances: ChainBalanceTable;
  chain_activity: ChainActivityTable;
  chain_activity_parties: ChainActivityPartyTable;
  chain_amount_trackers: ChainAmountTrackerTable;
  chain_challenge_trackers: ChainChallengeTrackerTable;
}

// Its tables join the database's type (db/schema.ts).
declare module '../db/schema.ts' {
  interface Database extends ChainTables {}
}

const STATE_ID = 'indexer';

export interface IndexState {
  /** Last indexed height (start height − 1 before the first block). */
  height: number;
  blockTime: number;
  chainHeight: number;
  holder: string | null;
  leaseExpiresAt: number;
  updatedAt: number;
}

/** The cursor, or null before the indexer (or an import) ever ran. */
export async function readIndexState(db: DB | Tx): Promise<IndexState | null> {
  const r = await db.selectFrom('chain_index_state').selectAll().where('id', '=', STATE_ID).executeTakeFirst();
  if (!r) return null;
  return {
    height: Number(r.height),
    blockTime: Number(r.block_time),
    chainHeight: Number(r.chain_height),
    holder: r.holder,
    leaseExpiresAt: Number(r.lease_expires_at),
    updatedAt: Number(r.updated_at),
  };
}

/**
 * Takes (or renews) the indexing lease: granted when free, expired, or already ours. Creates the
 * cursor at `startHeight − 1` on first use.
 */
export async function acquireLease(
  db: DB,
  holder: string,
  now: number,
  leaseMs: number,
  startHeight: number,
): Promise<boolean> {
  await db
    .insertInto('chain_index_state')
    .values({
      id: STATE_ID,
      height: startHeight - 1,
      block_time: 0,
      chain_height: 0,
      holder: null,
      lease_expires_at: 0,
      updated_at: now,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  const r = await db
    .updateTable('chain_index_state')
    .set({ holder, lease_expires_at: now + leaseMs })
    .where('id', '=', STATE_ID)
    .where((eb) => eb.or([eb('holder', '=', holder), eb('holder', 'is', null), eb('lease_expires_at', '<', now)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Renews a lease we hold; false when it was taken over. */
export async function renewLease(
  db: DB,
  holder: string,
  now: number,
  leaseMs: number,
  chainHeight?: number,
): Promise<boolean> {
  const r = await db
    .updateTable('chain_index_state')
    .set({
      lease_expires_at: now + leaseMs,
      ...(chainHeight !== undefined ? { chain_height: chainHeight, updated_at: now } : {}),
    })
    .where('id', '=', STATE_ID)
    .where('holder', '=', holder)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function releaseLease(db: DB, holder: string): Promise<void> {
  await db
    .updateTable('chain_index_state')
    .set({ holder: null, lease_expires_at: 0 })
    .where('id', '=', STATE_ID)
    .where('holder', '=', holder)
    .execute();
}

/** The commit found the cursor elsewhere or the lease gone: another indexer (or an import) moved on. */
export class FencedError extends Error {}

export async function knownCollections(db: DB, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('chain_collections')
    .select('collection_id')
    .where('collection_id', 'in', ids)
    .execute();
  return new Set(rows.map((r) => r.collection_id));
}

/** Writes one block's results and advances the cursor to it, all or nothing. */
export async function commitBlock(
  db: DB,
  work: BlockWork,
  holder: string,
  now: number,
  leaseMs: number,
): Promise<void> {
  const h = work.height;
  const blockTimestamp = String(work.time);
  const entry = (txHash: string): UpdateEntry => ({ txHash, block: String(h), blockTimestamp, timestamp: String(now) });
  await db.transaction().execute(async (tx) => {
    const fence = await tx
      .updateTable('chain_index_state')
      .set({ height: h, block_time: work.time, lease_expires_at: now + leaseMs, updated_at: now })
      .where('id', '=', STATE_ID)
      .where('height', '=', h - 1)
      .where('holder', '=', holder)
      .executeTakeFirst();
    if (Number(fence.numUpdatedRows) !== 1)
      throw new FencedError(`block ${h} was not committed: the cursor is no longer at ${h - 1} or the lease was lost`);

    // collections: upsert, or purge everything of a deleted one (its activity stays: it happened)
    for (const c of work.collections) {
      if (c.doc === null) {
        await tx.deleteFrom('chain_collections').where('collection_id', '=', c.collectionId).execute();
        await tx.deleteFrom('chain_balances').where('collection_id', '=', c.collectionId).execute();
        await tx.deleteFrom('chain_amount_trackers').where('collection_id', '=', c.collectionId).execute();
        await tx.deleteFrom('chain_challenge_trackers').where('collection_id', '=', c.collectionId).execute();
        continue;
      }
      const prev = await tx
        .selectFrom('chain_collections')
        .select('update_history')
        .where('collection_id', '=', c.collectionId)
        .executeTakeFirst();
      const doc_json = JSON.stringify(c.doc);
      const history = appendHistory(prev?.update_history, entry(c.txHash));
      await tx
        .insertInto('chain_collections')
        .values({
          collection_id: c.collectionId,
          doc_json,
          manager: String(c.doc.manager ?? ''),
          created_by: String(c.doc.createdBy ?? ''),
          created_block: h,
          created_time: work.time,
          updated_block: h,
          update_history: history,
        })
        .onConflict((oc) =>
          oc.column('collection_id').doUpdateSet({
            doc_json,
            manager: String(c.doc!.manager ?? ''),
            created_by: String(c.doc!.createdBy ?? ''),
            updated_block: h,
            update_history: history,
          }),
        )
        .execute();
    }

    if (work.balances.length) {
      // previous histories, per collection, in one query each
      const prev = new Map<string, string>();
      const byCollection = new Map<string, string[]>();
      for (const b of work.balances)
        byCollection.set(b.collectionId, [...(byCollection.get(b.collectionId) ?? []), b.address]);
      for (const [collectionId, addresses] of byCollection) {
        for (const part of chunks(addresses, 500)) {
          const rows = await tx
            .selectFrom('chain_balances')
            .select(['address', 'update_history'])
            .where('collection_id', '=', collectionId)
            .where('address', 'in', part)
            .execute();
          for (const r of rows) prev.set(ownerDocId(collectionId, r.address), r.update_history);
        }
      }
      for (const part of chunks(work.balances)) {
        await tx
          .insertInto('chain_balances')
          .values(
            part.map((b) =>
              balanceRow(
                b.collectionId,
                b.address,
                b.store,
                h,
                appendHistory(prev.get(ownerDocId(b.collectionId, b.address)), entry(b.txHash)),
              ),
            ),
          )
          .onConflict((oc) =>
            oc.columns(['collection_id', 'address']).doUpdateSet((eb) => ({
              store_json: eb.ref('excluded.store_json'),
              has_balance: eb.ref('excluded.has_balance'),
              updated_block: eb.ref('excluded.updated_block'),
              update_history: eb.ref('excluded.update_history'),
            })),
          )
          .execute();
      }
    }

    for (const part of chunks(work.activity)) {
      await tx
        .insertInto('chain_activity')
        .values(
          part.map((a) => ({
            doc_id: a.docId,
            collection_id: a.collectionId,
            block: h,
            tx_index: a.txIndex,
            leg_index: a.legIndex,
            doc_json: JSON.stringify(a.doc),
          })),
        )
        .execute();
    }
    const parties = work.activity.flatMap((a) =>
      a.parties.map((address) => ({
        address,
        collection_id: a.collectionId,
        block: h,
        tx_index: a.txIndex,
        leg_index: a.legIndex,
        doc_id: a.docId,
      })),
    );
    for (const part of chunks(parties)) await tx.insertInto('chain_activity_parties').values(part).execute();

    for (const t of work.amountTrackers) {
      const doc_json = JSON.stringify({ _docId: t.docId, ...t.key, ...t.tracker });
      await tx
        .insertInto('chain_amount_trackers')
        .values({
          collection_id: t.key.collectionId,
          doc_id: t.docId,
          approver_address: t.key.approverAddress,
          approved_address: t.key.approvedAddress,
          doc_json,
          updated_block: h,
        })
        .onConflict((oc) => oc.columns(['collection_id', 'doc_id']).doUpdateSet({ doc_json, updated_block: h }))
        .execute();
    }

    for (const c of work.challenges) {
      const prev = await tx
        .selectFrom('chain_challenge_trackers')
        .select('doc_json')
        .where('collection_id', '=', c.key.collectionId)
        .where('doc_id', '=', c.docId)
        .executeTakeFirst();
      const used: { leafIndex: string; usedBy: string }[] = prev
        ? (JSON.parse(prev.doc_json) as { usedLeafIndices: { leafIndex: string; usedBy: string }[] }).usedLeafIndices
        : [];
      for (const leaf of c.leaves)
        if (!used.some((u) => u.leafIndex === leaf.leafIndex && u.usedBy === leaf.usedBy)) used.push(leaf);
      const doc_json = JSON.stringify({ _docId: c.docId, ...c.key, usedLeafIndices: used });
      await tx
        .insertInto('chain_challenge_trackers')
        .values({
          collection_id: c.key.collectionId,
          doc_id: c.docId,
          approver_address: c.key.approverAddress,
          doc_json,
          updated_block: h,
        })
        .onConflict((oc) => oc.columns(['collection_id', 'doc_id']).doUpdateSet({ doc_json, updated_block: h }))
        .execute();
    }
  });
}
