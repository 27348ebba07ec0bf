// The database as Kysely sees it: one interface per table, grouped by the capability that owns
// it. Portable column conventions (same on SQLite and PostgreSQL):
//   - timestamps are UNIX ms in `bigint` columns (read back as numbers);
//   - booleans are integers 0/1;
//   - JSON documents are `text` holding JSON;
//   - amounts and UintRange bounds that may exceed 2^53 are decimal strings in `text`.
import type { AccountTables } from '../accounts/storage.ts';
import type { ApiKeyTable } from '../api-keys/storage.ts';
import type { RateLimitWindowTable } from '../api-keys/rate-limit.ts';
import type { ChainTables } from '../chain/storage.ts';
import type { ClaimTables } from '../claims/storage.ts';
import type { ConnectionTables } from '../connections/storage.ts';
import type { PluginDocumentTables } from '../plugin-documents/storage.ts';
import type { WebhookTables } from '../webhooks/outbox.ts';
import type { SigninTables } from '../signin/storage.ts';
import type { StoreTables } from '../stores/storage.ts';
import type { SwapTables } from '../swap/storage.ts';
import type { ConsoleTables } from '../portal/console-session.ts';
import type { EligibilityTables } from '../eligibility/storage.ts';

export interface Database
  extends SigninTables,
    StoreTables,
    ClaimTables,
    SwapTables,
    ConnectionTables,
    PluginDocumentTables,
    WebhookTables,
    AccountTables,
    ChainTables,
    ConsoleTables,
    EligibilityTables {
  api_keys: ApiKeyTable;
  rate_limit_windows: RateLimitWindowTable;
  /** One row (id 1): a constant sealed with SECRET_KEY (src/ops/secret-key-check.ts). */
  secret_key_check: { id: number; sealed: string };
}
