// Storage of linked wallets: the pending link requests (a nonce each, used once) and the links.
// A link is never deleted: unlinking stamps `unlinked_at`, so that a claim reads the links as they
// stood when it was created (groupAt). At any moment an address is in at most one live link (a
// partial unique index), and links are one level deep: an account's address is never itself
// linked, and a linked address holds no links (checked in the linking transaction).
import type { DB, Tx } from '../db/index.ts';
import type { Chain } from '../shared/addresses.ts';

export interface LinkedWalletRequestTable {
  request_id: string;
  /** The account (canonical address of the session) the wallet is to be linked to. */
  account: string;
  /** The account's address as its session holds it (the message names it). */
  account_address: string;
  /** The wallet to link, as the caller wrote it (0x or native): it signs the message. */
  address: string;
  platform_address: string;
  chain: Chain;
  nonce: string;
  issued_at: number;
  expires_at: number;
  /** When a signature used the request; null until then (each nonce is used once). */
  consumed_at: number | null;
}

export interface LinkedWalletTable {
  link_id: string;
  account: string;
  platform_address: string;
  address: string;
  chain: Chain;
  linked_at: number;
  unlinked_at: number | null;
}

export interface LinkedWalletTables {
  linked_wallet_requests: LinkedWalletRequestTable;
  linked_wallets: LinkedWalletTable;
}
declare module '../db/schema.ts' {
  interface Database extends LinkedWalletTables {}
}

/** The live link of an address (as the linked wallet), or of links held by it (as an account). */
export async function liveLinkOf(db: DB | Tx, platformAddress: string): Promise<LinkedWalletTable | undefined> {
  return db
    .selectFrom('linked_wallets')
    .selectAll()
    .where('platform_address', '=', platformAddress)
    .where('unlinked_at', 'is', null)
    .executeTakeFirst();
}

/** The account's live links, oldest first. */
export async function liveLinksOf(db: DB | Tx, account: string): Promise<LinkedWalletTable[]> {
  return db
    .selectFrom('linked_wallets')
    .selectAll()
    .where('account', '=', account)
    .where('unlinked_at', 'is', null)
    .orderBy('linked_at')
    .orderBy('link_id')
    .execute();
}

/**
 * The addresses whose holdings count for `claimer` under the links as they stood at `at` (a claim's
 * creation): the claimer and the wallets linked to it then, or null when the claimer itself was
 * linked to another account then (its holdings count there, not for itself). A link counts at `at`
 * when it was made at or before `at` and not removed by then.
 */
export async function groupAt(db: DB | Tx, claimer: string, at: number): Promise<string[] | null> {
  const rows = await db
    .selectFrom('linked_wallets')
    .select(['account', 'platform_address'])
    .where((eb) => eb.or([eb('account', '=', claimer), eb('platform_address', '=', claimer)]))
    .where('linked_at', '<=', at)
    .where((eb) => eb.or([eb('unlinked_at', 'is', null), eb('unlinked_at', '>', at)]))
    .execute();
  if (rows.some((r) => r.platform_address === claimer)) return null;
  return [claimer, ...rows.map((r) => r.platform_address).sort()];
}
