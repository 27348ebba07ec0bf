// The one ordered migration set, applied on start and by `platform migrate`, on both dialects.
// Add a capability's migration as its own file and one line here; never edit an applied one.
import Database from 'better-sqlite3';
import { SqliteAdapter, sql, type Kysely } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import * as m0001 from './0001_foundation.ts';
import * as m0003 from './0003_claims.ts';
import * as m0002 from './0002_signin.ts';
import * as m0004 from './0004_stores.ts';
import * as m0006 from './0006_swap.ts';
import * as m0007 from './0007_signin_token_selectors.ts';
import * as m0010 from './0010_chain_read_model.ts';
import * as m0011 from './0011_accounts.ts';
import * as m0015 from './0015_connections.ts';
import * as m0012 from './0012_guess_throttle.ts';
import * as m0013 from './0013_operator.ts';
import * as m0008 from './0008_plugin_documents.ts';
import * as m0009 from './0009_webhook_deliveries.ts';
import * as m0014 from './0014_console_sessions.ts';
import * as m0016 from './0016_hosted_plugin_documents.ts';
import * as m0017 from './0017_claim_queue_order.ts';
import * as m0018 from './0018_secret_key_check.ts';
import * as m0019 from './0019_connection_binding.ts';
import * as m0020 from './0020_guess_buckets.ts';
import * as m0021 from './0021_webhook_delivery_origin.ts';
import * as m0022 from './0022_signin_openid.ts';
import * as m0023 from './0023_social_plugin_documents.ts';
import * as m0024 from './0024_eligibility.ts';
import * as m0025 from './0025_linked_wallets.ts';
import * as m0026 from './0026_claim_refusals.ts';
import * as m0027 from './0027_console_links.ts';
import * as m0028 from './0028_guess_in_flight.ts';
import * as m0029 from './0029_claim_numbers_one_address_index.ts';
import * as m0030 from './0030_signin_authorizations_hot_updates.ts';
import * as m0031 from './0031_claim_queue_partial_index.ts';
import * as m0032 from './0032_claim_numbers_read_through_attempts.ts';

const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0003_claims': m0003,
  '0002_signin': m0002,
  '0004_stores': m0004,
  '0006_swap': m0006,
  '0007_signin_token_selectors': m0007,
  '0010_chain_read_model': m0010,
  '0011_accounts': m0011,
  '0015_connections': m0015,
  '0012_guess_throttle': m0012,
  '0013_operator': m0013,
  '0008_plugin_documents': m0008,
  '0009_webhook_deliveries': m0009,
  '0014_console_sessions': m0014,
  '0016_hosted_plugin_documents': m0016,
  '0017_claim_queue_order': m0017,
  '0018_secret_key_check': m0018,
  '0019_connection_binding': m0019,
  '0020_guess_buckets': m0020,
  '0021_webhook_delivery_origin': m0021,
  '0022_signin_openid': m0022,
  '0023_social_plugin_documents': m0023,
  '0024_eligibility': m0024,
  '0025_linked_wallets': m0025,
  '0026_claim_refusals': m0026,
  '0027_console_links': m0027,
  '0028_guess_in_flight': m0028,
  '0029_claim_numbers_one_address_index': m0029,
  '0030_signin_authorizations_hot_updates': m0030,
  '0031_claim_queue_partial_index': m0031,
  '0032_claim_numbers_read_through_attempts': m0032,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** `schema`: the PostgreSQL schema of DATABASE_URL, so Kysely's bookkeeping tables live beside ours. */
export async function migrateToLatest(db: Kysely<any>, schema?: string): Promise<string[]> {
  return migrateTo(db, undefined, schema);
}

/** Applies (or reverts) migrations up to and including `target` (all: undefined); for tests of a migration. */
export async function migrateTo(db: Kysely<any>, target: string | undefined, schema?: string): Promise<string[]> {
  const migrator = new Migrator({ db, provider, ...(schema ? { migrationTableSchema: schema } : {}) });
  const migrate = async () => {
    const { error, results } =
      target === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(target);
    if (error) throw error instanceof Error ? error : new Error(String(error));
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  };
  return db.getExecutor().adapter instanceof SqliteAdapter ? withSqliteMigrationLock(db, migrate) : migrate();
}

/**
 * PostgreSQL: Kysely serialises migrators with an advisory lock. SQLite: its lock covers one
 * connection, so two processes starting on a new database (serve and worker) both applied the
 * first migrations and one failed. Here a process migrates while holding an exclusive lock on a
 * small lock database beside the real one (its migrations open transactions of their own, so the
 * real one cannot be held); the other waits, then finds nothing left to apply. The operating
 * system drops the lock with a process that dies.
 */
async function withSqliteMigrationLock<T>(db: Kysely<any>, fn: () => Promise<T>): Promise<T> {
  const { rows } = await sql<{ name: string; file: string }>`pragma database_list`.execute(db);
  const file = rows.find((r) => r.name === 'main')?.file;
  if (!file) return fn(); // an in-memory database has no other process
  const lock = new Database(`${file}-migration-lock`);
  try {
    lock.pragma('busy_timeout = 120000');
    lock.exec('begin exclusive');
    return await fn();
  } finally {
    lock.close(); // rolls the empty transaction back and releases the lock
  }
}
