// The console's tables: browser sessions (console-session.ts) and the operator's one-time sign-in
// links (console-links.ts).
import type { Chain } from '../shared/addresses.ts';
import type { Tx } from '../db/index.ts';
import { randomHex, sha256Hex } from '../shared/crypto.ts';

export interface ConsoleSessionTable {
  session_id: string;
  token_hash: string;
  address: string;
  platform_address: string;
  chain: Chain;
  /** JSON array of scope ids. */
  scopes: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export interface ConsoleLinkTable {
  link_id: string;
  token_hash: string;
  address: string;
  platform_address: string;
  chain: Chain;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface ConsoleTables {
  console_sessions: ConsoleSessionTable;
  console_links: ConsoleLinkTable;
}

// Its tables join the database's type (db/schema.ts).
declare module '../db/schema.ts' {
  interface Database extends ConsoleTables {}
}

/**
 * Drops the sessions or links that ended more than a day ago. Run when a new one is made rather
 * than in a background loop (an index range delete; nothing accumulates without new ones).
 */
export async function dropEnded(tx: Tx, table: keyof ConsoleTables, now: number): Promise<void> {
  await tx
    .deleteFrom(table)
    .where('expires_at', '<', now - 24 * 60 * 60 * 1000)
    .execute();
}

/**
 * Starts a new session or link for `who`, ending at `expiresAt`: drops the ended ones (above),
 * then draws its id and secret. Only the secret's SHA-256 goes in `columns`, the columns both
 * tables share; the caller inserts them under its own id column.
 */
export async function newCredential(
  tx: Tx,
  table: keyof ConsoleTables,
  who: { address: string; platformAddress: string; chain: Chain },
  now: number,
  expiresAt: number,
) {
  await dropEnded(tx, table, now);
  const secret = randomHex(32);
  return {
    id: randomHex(16),
    secret,
    columns: {
      token_hash: sha256Hex(secret),
      address: who.address,
      platform_address: who.platformAddress,
      chain: who.chain,
      created_at: now,
      expires_at: expiresAt,
    },
  };
}
