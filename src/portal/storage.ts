// The console's tables: browser sessions (console-session.ts) and the operator's one-time sign-in
// links (console-links.ts).
import type { Chain } from '../shared/addresses.ts';

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
