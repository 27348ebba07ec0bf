// Sign-in: access and refresh tokens become `<authorization_id>.<verifier>` and are found by the
// authorization's primary key (src/signin/tokens.ts). Their hashes no longer need an index, so:
// - `signin_authorizations.access_hash` / `refresh_hash` lose their UNIQUE constraints (and the
//   unique indexes behind them, into which every exchange and refresh wrote two random keys);
// - `signin_rotated_tokens` is keyed by (authorization_id, token_hash) instead of token_hash alone,
//   so a family's rotated tokens are stored together and reuse detection is a primary-key probe.
// Every row is kept. Tokens issued in the old format no longer parse, so their sessions sign in again.
//
// PostgreSQL alters the tables in place (the migrator runs this in a transaction). SQLite cannot drop
// a column's UNIQUE constraint, so there both tables are rebuilt (create, copy, drop, rename,
// re-index) inside one transaction; each rebuild starts by dropping a leftover copy, so the migration
// can also run again if the process died after the rebuild committed but before it was recorded.
import { sql, SqliteAdapter, type Kysely } from 'kysely';

const AUTHORIZATION_COLUMNS = [
  'authorization_id',
  'code_hash',
  'client_id',
  'redirect_uri',
  'scopes',
  'code_challenge',
  'address',
  'platform_address',
  'chain',
  'message',
  'created_at',
  'code_expires_at',
  'code_consumed_at',
  'expires_at',
  'revoked_at',
  'access_hash',
  'access_scopes',
  'access_expires_at',
  'refresh_hash',
  'refresh_expires_at',
];
const ROTATED_COLUMNS = ['token_hash', 'authorization_id', 'rotated_at'];

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    await db.transaction().execute(async (tx) => {
      await rebuildAuthorizations(tx, { uniqueTokenHashes: false });
      await rebuildRotatedTokens(tx, { familyKey: true });
    });
    return;
  }
  // constraint names are PostgreSQL's defaults for the inline UNIQUE / PRIMARY KEY of 0002_signin
  await db.schema.alterTable('signin_authorizations').dropConstraint('signin_authorizations_access_hash_key').execute();
  await db.schema
    .alterTable('signin_authorizations')
    .dropConstraint('signin_authorizations_refresh_hash_key')
    .execute();
  await db.schema.alterTable('signin_rotated_tokens').dropConstraint('signin_rotated_tokens_pkey').execute();
  await db.schema
    .alterTable('signin_rotated_tokens')
    .addPrimaryKeyConstraint('signin_rotated_tokens_pk', ['authorization_id', 'token_hash'])
    .execute();
}

/** Back to 0002_signin's keys (tokens issued since then keep their rows but are unique anyway). */
export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    await db.transaction().execute(async (tx) => {
      await rebuildAuthorizations(tx, { uniqueTokenHashes: true });
      await rebuildRotatedTokens(tx, { familyKey: false });
    });
    return;
  }
  await db.schema.alterTable('signin_rotated_tokens').dropConstraint('signin_rotated_tokens_pk').execute();
  await db.schema
    .alterTable('signin_rotated_tokens')
    .addPrimaryKeyConstraint('signin_rotated_tokens_pkey', ['token_hash'])
    .execute();
  await db.schema
    .alterTable('signin_authorizations')
    .addUniqueConstraint('signin_authorizations_access_hash_key', ['access_hash'])
    .execute();
  await db.schema
    .alterTable('signin_authorizations')
    .addUniqueConstraint('signin_authorizations_refresh_hash_key', ['refresh_hash'])
    .execute();
}

/** SQLite: `signin_authorizations` as in 0002_signin, with or without UNIQUE on the token hashes. */
async function rebuildAuthorizations(db: Kysely<any>, o: { uniqueTokenHashes: boolean }): Promise<void> {
  const next = 'signin_authorizations_0007';
  await db.schema.dropTable(next).ifExists().execute();
  await db.schema
    .createTable(next)
    .addColumn('authorization_id', 'text', (c) => c.primaryKey())
    .addColumn('code_hash', 'text', (c) => c.notNull().unique())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text')
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'text')
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('platform_address', 'text', (c) => c.notNull())
    .addColumn('chain', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('code_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('code_consumed_at', 'bigint')
    .addColumn('expires_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addColumn('access_hash', 'text', (c) => (o.uniqueTokenHashes ? c.unique() : c)) // SHA-256 of the access verifier
    .addColumn('access_scopes', 'text')
    .addColumn('access_expires_at', 'bigint')
    .addColumn('refresh_hash', 'text', (c) => (o.uniqueTokenHashes ? c.unique() : c)) // SHA-256 of the refresh verifier
    .addColumn('refresh_expires_at', 'bigint')
    .execute();
  await copyAndSwap(db, 'signin_authorizations', next, AUTHORIZATION_COLUMNS);
  await db.schema
    .createIndex('signin_authorizations_code_expires_at')
    .on('signin_authorizations')
    .column('code_expires_at')
    .execute();
  await db.schema
    .createIndex('signin_authorizations_client_id')
    .on('signin_authorizations')
    .column('client_id')
    .execute();
}

/**
 * SQLite: `signin_rotated_tokens` keyed by (authorization_id, token_hash), stored as that key alone
 * (WITHOUT ROWID: one B-tree, no rowid table beside it), or by token_hash as in 0002_signin.
 */
async function rebuildRotatedTokens(db: Kysely<any>, o: { familyKey: boolean }): Promise<void> {
  const next = 'signin_rotated_tokens_0007';
  await db.schema.dropTable(next).ifExists().execute();
  let table = db.schema
    .createTable(next)
    .addColumn('token_hash', 'text', (c) => (o.familyKey ? c.notNull() : c.primaryKey()))
    .addColumn('authorization_id', 'text', (c) => c.notNull())
    .addColumn('rotated_at', 'bigint', (c) => c.notNull());
  if (o.familyKey)
    table = table
      .addPrimaryKeyConstraint('signin_rotated_tokens_pk', ['authorization_id', 'token_hash'])
      .modifyEnd(sql`without rowid`);
  await table.execute();
  await copyAndSwap(db, 'signin_rotated_tokens', next, ROTATED_COLUMNS);
}

async function copyAndSwap(db: Kysely<any>, table: string, next: string, columns: string[]): Promise<void> {
  const list = sql.join(columns.map((c) => sql.ref(c)));
  await sql`insert into ${sql.table(next)} (${list}) select ${list} from ${sql.table(table)}`.execute(db);
  await db.schema.dropTable(table).execute();
  await db.schema.alterTable(next).renameTo(table).execute();
}
