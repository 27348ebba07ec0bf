// What one block's successful transactions touched, from the token module's EVENTS alone (never
// the message bodies: tokens also move inside swaps, IBC hooks, the EVM precompile and contracts,
// and a message may name collection "0"). Reference note §4.3–§4.4:
//   - `usedApprovalDetails`: one transfer leg → an activity document; touches `from` (unless Mint)
//     and `to`;
//   - `indexer` (msg_type, collectionId, sender): user-level messages touch a balance store, other
//     collection messages the collection document;
//   - events carrying `amountTrackerId` / `challengeTrackerId` + `leafIndex`: trackers that moved
//     (matched by attribute, since their event types are dynamic).
// Failed transactions (code ≠ 0) are skipped whole.
import { tryCanonical } from '../shared/addresses.ts';
import type { AmountTrackerKey, ChallengeTrackerKey, EventJson, TxResult } from './client.ts';
import {
  activityDocId,
  amountTrackerDocId,
  amountTrackerKey,
  challengeTrackerDocId,
  challengeTrackerKey,
  type ActivityRecord,
} from './model.ts';

/** `msg_type`s that change one user's balance store (approvals, auto-approve flags), not the collection. */
const USER_LEVEL_MSGS = new Set([
  'update_user_approvals',
  'set_incoming_approval',
  'delete_incoming_approval',
  'set_outgoing_approval',
  'delete_outgoing_approval',
  'purge_approvals',
]);
/** `msg_type`s with a collectionId that change neither the collection nor a balance store by themselves. */
const NO_COLLECTION_STATE_MSGS = new Set(['transfer_tokens', 'cast_vote']);

const attrMap = (e: EventJson): Map<string, string> => new Map(e.attributes.map((a) => [a.key, a.value]));

function parseJsonAttr(value: string | undefined): unknown {
  if (value === undefined || value === '') return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

/** Keeper structs without json tags come capitalised (note §4.2); the documents use camelCase. */
function lowerKeys(list: unknown): unknown[] | undefined {
  if (!Array.isArray(list)) return undefined;
  return list.map((item) =>
    typeof item === 'object' && item !== null
      ? Object.fromEntries(Object.entries(item).map(([k, v]) => [k[0].toLowerCase() + k.slice(1), v]))
      : item,
  );
}

/** What one block's successful transactions touched, from their events alone. */
export interface Touched {
  activity: ActivityRecord[];
  /** `${collectionId}\n${address}` → tx hash of the last tx touching it. */
  balances: Map<string, string>;
  /** collectionId → tx hash, for collections whose document a message changed. */
  collections: Map<string, string>;
  /** Every collection mentioned (new ones get their document read even on a plain transfer). */
  mentioned: Set<string>;
  amountTrackers: Map<string, AmountTrackerKey>;
  challenges: Map<string, { key: ChallengeTrackerKey; leaves: { leafIndex: string; usedBy: string }[] }>;
  failedTxs: number;
}

export function collectTouched(height: number, time: number, results: TxResult[]): Touched {
  const t: Touched = {
    activity: [],
    balances: new Map(),
    collections: new Map(),
    mentioned: new Set(),
    amountTrackers: new Map(),
    challenges: new Map(),
    failedTxs: 0,
  };
  const touchBalance = (collectionId: string, address: string, txHash: string) => {
    const native = tryCanonical(address);
    if (native) t.balances.set(`${collectionId}\n${native}`, txHash); // Mint / Total / foreign forms have no owner document
  };
  for (const r of results) {
    if (r.code !== 0) {
      t.failedTxs++;
      continue;
    }
    let leg = 0;
    for (const e of r.events) {
      const a = attrMap(e);
      const collectionId = a.get('collectionId');
      if (e.type === 'usedApprovalDetails' && collectionId) {
        const from = a.get('from') ?? '';
        const to = a.get('to') ?? '';
        t.mentioned.add(collectionId);
        if (from !== 'Mint') touchBalance(collectionId, from, r.hash);
        touchBalance(collectionId, to, r.hash);
        const parties = [...new Set([from, to].map((x) => tryCanonical(x)).filter((x): x is string => x !== null))];
        const legIndex = leg++;
        const docId = activityDocId(collectionId, height, r.index, legIndex);
        const coinTransfers = lowerKeys(parseJsonAttr(a.get('coinTransfers')));
        const approvalsUsed = lowerKeys(parseJsonAttr(a.get('approvalsUsed')));
        const balances = parseJsonAttr(a.get('balances'));
        t.activity.push({
          docId,
          collectionId,
          txIndex: r.index,
          legIndex,
          parties,
          doc: {
            _docId: docId,
            collectionId,
            from,
            to: [to],
            initiatedBy: a.get('initiatedBy') ?? '',
            balances: Array.isArray(balances) ? balances : [],
            timestamp: String(time),
            block: String(height),
            txHash: r.hash,
            memo: r.memo,
            ...(coinTransfers ? { coinTransfers } : {}),
            ...(approvalsUsed ? { approvalsUsed } : {}),
          },
        });
        continue;
      }
      if (e.type === 'indexer') {
        const msgType = a.get('msg_type') ?? '';
        if (!collectionId) continue; // create_collection: its nested universal_update_collection event names the id
        t.mentioned.add(collectionId);
        if (USER_LEVEL_MSGS.has(msgType)) {
          const msg = parseJsonAttr(a.get('msg')) as { approverAddress?: unknown } | undefined;
          const who =
            typeof msg?.approverAddress === 'string' && msg.approverAddress
              ? msg.approverAddress
              : (a.get('sender') ?? '');
          touchBalance(collectionId, who, r.hash);
        } else if (!NO_COLLECTION_STATE_MSGS.has(msgType)) {
          t.collections.set(collectionId, r.hash);
        }
        continue;
      }
      if (a.has('amountTrackerId') && collectionId) {
        const key = amountTrackerKey(collectionId, (field) => a.get(field));
        t.amountTrackers.set(amountTrackerDocId(key), key);
        continue;
      }
      if (a.has('challengeTrackerId') && a.has('leafIndex') && collectionId) {
        const key = challengeTrackerKey(collectionId, (field) => a.get(field));
        const docId = challengeTrackerDocId(key);
        const entry = t.challenges.get(docId) ?? { key, leaves: [] };
        entry.leaves.push({ leafIndex: a.get('leafIndex') ?? '', usedBy: a.get('creator') ?? '' });
        t.challenges.set(docId, entry);
      }
    }
  }
  return t;
}
