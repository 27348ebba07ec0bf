// What the indexer learns from one block, before it is written: the activity of its successful
// transactions and the chain's own state (read at that height) of everything they touched.
import type {
  AmountTrackerKey,
  ApprovalTrackerJson,
  ChallengeTrackerKey,
  TokenCollectionJson,
  UserBalanceStoreJson,
} from './client.ts';

/** One `updateHistory` entry (reference note §6.1). */
export interface UpdateEntry {
  txHash: string;
  block: string;
  blockTimestamp: string;
  timestamp: string;
}

export interface ActivityRecord {
  docId: string;
  collectionId: string;
  txIndex: number;
  legIndex: number;
  /** Native addresses taking part (sender unless Mint, recipients), deduplicated. */
  parties: string[];
  doc: Record<string, unknown>;
}

export interface BalanceRecord {
  collectionId: string;
  address: string;
  store: UserBalanceStoreJson;
  txHash: string;
}

export interface CollectionRecord {
  collectionId: string;
  /** null: the chain no longer has the collection (deleted). */
  doc: TokenCollectionJson | null;
  txHash: string;
}

export interface AmountTrackerRecord {
  key: AmountTrackerKey;
  docId: string;
  tracker: ApprovalTrackerJson;
}

export interface ChallengeRecord {
  key: ChallengeTrackerKey;
  docId: string;
  /** Leaves used in this block, with who used them. */
  leaves: { leafIndex: string; usedBy: string }[];
}

export interface BlockWork {
  height: number;
  /** Block time, UNIX ms. */
  time: number;
  activity: ActivityRecord[];
  balances: BalanceRecord[];
  collections: CollectionRecord[];
  amountTrackers: AmountTrackerRecord[];
  challenges: ChallengeRecord[];
  /** Counts for logs and the benchmark. */
  txs: number;
  failedTxs: number;
}

/** A tracker key's fields after its collectionId, in the order its documents list them. */
export const AMOUNT_TRACKER_FIELDS = [
  'approvalLevel',
  'approverAddress',
  'approvalId',
  'amountTrackerId',
  'trackerType',
  'approvedAddress',
] as const;
export const CHALLENGE_TRACKER_FIELDS = [
  'approvalLevel',
  'approverAddress',
  'approvalId',
  'challengeTrackerId',
] as const;

function trackerKey<F extends string>(
  collectionId: string,
  fields: readonly F[],
  read: (field: F) => unknown,
): { collectionId: string } & Record<F, string> {
  const key: Record<string, string> = { collectionId };
  for (const field of fields) key[field] = String(read(field) ?? '');
  return key as { collectionId: string } & Record<F, string>;
}

/** An amount tracker's key, its fields read by `read` (a snapshot's property, an event attribute); '' when absent. */
export const amountTrackerKey = (collectionId: string, read: (field: string) => unknown): AmountTrackerKey =>
  trackerKey(collectionId, AMOUNT_TRACKER_FIELDS, read);

/** A challenge tracker's key, read as amountTrackerKey's. */
export const challengeTrackerKey = (collectionId: string, read: (field: string) => unknown): ChallengeTrackerKey =>
  trackerKey(collectionId, CHALLENGE_TRACKER_FIELDS, read);

export const amountTrackerDocId = (k: AmountTrackerKey): string =>
  `${k.collectionId}:${k.approvalLevel}-${k.approverAddress}-${k.approvalId}-${k.amountTrackerId}-${k.trackerType}-${k.approvedAddress}`;

export const challengeTrackerDocId = (k: ChallengeTrackerKey): string =>
  `${k.collectionId}:${k.approvalLevel}-${k.approverAddress}-${k.approvalId}-${k.challengeTrackerId}`;

export const activityDocId = (collectionId: string, height: number, txIndex: number, legIndex: number): string =>
  `collection-${collectionId}:${height}-${txIndex}-${legIndex}`;

export const ownerDocId = (collectionId: string, address: string): string => `${collectionId}:${address}`;

/** Whether a balance list holds any non-zero amount (amounts are Uint strings, compared exactly). */
export const holdsSomething = (balances: { amount: string }[]): boolean => balances.some((b) => BigInt(b.amount) > 0n);

/** updateHistory keeps the most recent entries only, so a busy address's document stays small. */
export const UPDATE_HISTORY_LIMIT = 10;

export function appendHistory(existing: string | undefined, entry: UpdateEntry): string {
  const list = existing ? (JSON.parse(existing) as UpdateEntry[]) : [];
  if (list.length && list[list.length - 1].block === entry.block) list[list.length - 1] = entry;
  else list.push(entry);
  return JSON.stringify(list.slice(-UPDATE_HISTORY_LIMIT));
}
