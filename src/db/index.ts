// One query layer (Kysely) over two dialects: SQLite (better-sqlite3, WAL) by default, and
// PostgreSQL when DATABASE_URL is set. Both run the same migrations (./migrations).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import {
  CompiledQuery,
  Kysely,
  sql,
  PostgresDialect,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type SchemaMetadata,
  type TableMetadata,
  type QueryResult,
  type Transaction,
} from 'kysely';
import { ensurePrivateDir, ensurePrivateFile } from '../shared/files.ts';
import { startCheckpointer, type Checkpointer } from './checkpointer.ts';
import type { Database } from './schema.ts';

export type { Database } from './schema.ts';

/**
 * Kysely's PostgreSQL introspection lists every table of every schema, and fails when another
 * schema's table is dropped while it reads (`relation "<other>.<table>" does not exist`): processes
 * migrating their own schemas of one database at once (the tests do, with a schema per file)
 * then fail each other's migrations. The migrator only asks whether its own tables exist, so the
 * introspection here lists the tables of the connection's own schema (`search_path`) only.
 */
class SearchPathIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<unknown>;
  constructor(db: Kysely<unknown>) {
    this.#db = db;
  }
  async getSchemas(): Promise<SchemaMetadata[]> {
    const r = await sql<{ name: string }>`select nspname as name from pg_namespace`.execute(this.#db);
    return r.rows;
  }
  async getTables(): Promise<TableMetadata[]> {
    const r = await sql<{ name: string; schema: string; is_view: boolean }>`
      select c.relname as name, n.nspname as schema, c.relkind = 'v' as is_view
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'v', 'p', 'f')`.execute(this.#db);
    return r.rows.map((t) => ({ name: t.name, schema: t.schema, isView: t.is_view, isForeign: false, columns: [] }));
  }
}

class SearchPathPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SearchPathIntrospector(db);
  }
}
export type DB = Kysely<Database>;
export type Tx = Transaction<Database>;
export type DialectName = 'sqlite' | 'postgres';

export interface Storage {
  db: DB;
  dialect: DialectName;
  /** PostgreSQL schema holding the tables, when DATABASE_URL names one. */
  schema?: string;
  /** SQLite: the background WAL checkpointer, when enabled. */
  checkpointer?: Checkpointer;
  /** SQLite: synchronous execution of hot statements, bypassing Kysely when it is idle. */
  sqlite?: SqliteFastPath;
  /** PostgreSQL: the connection pool (its use is exported as metrics). */
  pool?: pg.Pool;
  close(): Promise<void>;
}

export interface StorageOptions {
  /** SQLite: checkpoint the WAL on a worker thread (long-running processes); default true. */
  backgroundCheckpoints?: boolean;
  /**
   * PostgreSQL: an idle pooled connection was lost (a restart, a failover, a network cut). The
   * pool drops it and opens a new one on the next query; without a listener the error would end
   * the process.
   */
  onConnectionError?: (err: Error) => void;
}

// SQLite: write transactions take the write lock up front (BEGIN IMMEDIATE). A deferred BEGIN
// that later upgrades to a writer can fail with SQLITE_BUSY when another process writes first.
// The driver also records whether Kysely holds the one connection (a query or a transaction in
// flight): the synchronous fast path below only runs when it does not.
class ImmediateSqliteDriver extends SqliteDriver {
  held = false;
  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    this.held = true;
    return connection;
  }
  override async releaseConnection(): Promise<void> {
    this.held = false;
  }
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}
function immediateSqliteDialect(
  driver: ImmediateSqliteDriver,
  config: ConstructorParameters<typeof SqliteDialect>[0],
): Dialect {
  const base = new SqliteDialect(config);
  return {
    createDriver: () => driver,
    createQueryCompiler: () => base.createQueryCompiler(),
    createAdapter: () => base.createAdapter(),
    createIntrospector: (db) => base.createIntrospector(db),
  };
}

/**
 * Synchronous SQLite execution for the hottest statements (token endpoint, bearer sessions).
 * better-sqlite3 is synchronous anyway; going through Kysely adds a connection lock, promises and
 * result wrapping that cost about as much as an indexed statement itself. Each method runs only
 * when Kysely does not hold the connection (otherwise the statement could land inside someone
 * else's open transaction) and answers null then, so the caller takes the Kysely path instead.
 */
export interface SqliteFastPath {
  run<R>(query: CompiledQuery): QueryResult<R> | null;
  /** `fn` inside BEGIN IMMEDIATE … COMMIT (ROLLBACK if it throws), all synchronous. */
  transaction<T>(fn: (run: <R>(query: CompiledQuery) => QueryResult<R>) => T): { value: T } | null;
}

function sqliteFastPath(
  database: SQLite.Database,
  statements: { prepare(sql: string): SQLite.Statement },
  driver: ImmediateSqliteDriver,
): SqliteFastPath {
  const execute = <R>(query: CompiledQuery): QueryResult<R> => {
    const stmt = statements.prepare(query.sql);
    const params = query.parameters as unknown[];
    if (stmt.reader) return { rows: stmt.all(params) as R[] };
    const { changes } = stmt.run(params);
    return { rows: [], numAffectedRows: BigInt(changes) };
  };
  const begin = database.prepare('begin immediate');
  const commit = database.prepare('commit');
  const rollback = database.prepare('rollback');
  const busy = () => driver.held || database.inTransaction;
  return {
    run: (query) => (busy() ? null : execute(query)),
    transaction(fn) {
      if (busy()) return null;
      begin.run();
      try {
        const value = fn(execute);
        commit.run();
        return { value };
      } catch (err) {
        if (database.inTransaction) rollback.run();
        throw err;
      }
    },
  };
}

// Kysely prepares every query anew; with better-sqlite3 that preparation is a large share of a
// short query's cost. Statements are reused per SQL text (bounded LRU); one still being iterated
// (a streaming read) is never handed out twice: a fresh one is prepared instead.
function withStatementCache(database: SQLite.Database, max = 1000) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => database.close(),
    prepare(sql: string) {
      let stmt = cache.get(sql);
      if (stmt && !stmt.busy) {
        cache.delete(sql); // re-insert: most recently used last
        cache.set(sql, stmt);
        return stmt;
      }
      stmt = database.prepare(sql);
      cache.set(sql, stmt);
      if (cache.size > max) cache.delete(cache.keys().next().value!);
      return stmt;
    },
  };
}

/**
 * Whether a write was refused by a unique index or a primary key, on either dialect (PostgreSQL
 * reports both as 23505; SQLite names them apart).
 */
/** Rows per multi-row INSERT: stays under both dialects' bound-parameter limits. */
export const INSERT_CHUNK = 200;

/** `items` cut into consecutive slices of at most `size` (for multi-row writes and `in` lists). */
export function chunks<T>(items: T[], size = INSERT_CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Errors raised by the PostgreSQL driver (a socket error carries no mark of its origin). */
const driverErrors = new WeakSet<object>();

/** A promise's rejection marked as the driver's; callback and cursor forms pass through. */
function marked(result: unknown): never {
  if (!(result instanceof Promise)) return result as never;
  return result.catch((err: unknown) => {
    if (err !== null && typeof err === 'object') driverErrors.add(err);
    throw err;
  }) as never;
}

// PostgreSQL named prepared statements for a few hot statements: each connection parses and plans
// one the first time and then only binds and executes it (no Parse per request). Kysely hands the
// driver a text and values, so the client swaps a registered text for node-postgres's named form.
// Only statements with an explicit result column list are registered: a cached plan whose result
// columns a migration changed would fail ("cached plan must not change result type").
const preparedNames = new Map<string, string>();

/** Registers `text` (exactly as sent) to run as a named prepared statement on PostgreSQL. */
export function preparePostgres(text: string): void {
  if (!preparedNames.has(text)) preparedNames.set(text, `hot_${preparedNames.size}`);
}

/** A hot statement written once as SQL for both dialects: its compiled query for a dialect and parameters. */
export type Statement = (dialect: DialectName, params: readonly unknown[]) => CompiledQuery;

/**
 * `?` placeholders for SQLite; numbered `$n` for PostgreSQL (computed once). `prepared`: it also
 * runs as a named prepared statement on PostgreSQL.
 */
export function statement(text: string, prepared = false): Statement {
  let n = 0;
  const pg = text.replace(/\?/g, () => `$${++n}`);
  if (prepared) preparePostgres(pg);
  return (dialect, params) => CompiledQuery.raw(dialect === 'postgres' ? pg : text, params as unknown[]);
}

/** node-postgres's client and pool, marking what their queries and connects reject with. */
class MarkingClient extends pg.Client {
  override query(...args: unknown[]): never {
    const name = typeof args[0] === 'string' ? preparedNames.get(args[0]) : undefined;
    if (name !== undefined && Array.isArray(args[1]) && args.length === 2)
      args = [{ name, text: args[0], values: args[1] }];
    return marked((pg.Client.prototype.query as (...a: unknown[]) => unknown).apply(this, args));
  }
}
class MarkingPool extends pg.Pool {
  override connect(...args: unknown[]): never {
    return marked((pg.Pool.prototype.connect as (...a: unknown[]) => unknown).apply(this, args));
  }
}

/**
 * Whether a query failed because PostgreSQL was out of reach (a restart, a failover, a cut
 * connection) rather than because of the query: the request may simply be retried.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (err === null || typeof err !== 'object' || !driverErrors.has(err)) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    // class 08: connection exceptions; 57P01-57P03: shutdown, crash shutdown, cannot connect now;
    // E…: the socket's own errors (reset, refused, timed out)
    if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || /^E[A-Z]+$/.test(code))
      return true;
  }
  // node-postgres's own texts for a connection that ended under a query or was already broken
  return typeof message === 'string' && /^Connection terminated|not queryable/.test(message);
}

export function openSqlite(dataDir: string, file = 'platform.sqlite', opts: StorageOptions = {}): Storage {
  ensurePrivateDir(dataDir);
  const path = join(dataDir, file);
  ensurePrivateFile(path);
  // SQLite creates the -wal and -shm files with the database file's mode; older ones are tightened
  for (const f of [`${path}-wal`, `${path}-shm`]) if (existsSync(f)) ensurePrivateFile(f);
  const database = new SQLite(path);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 10000');
  database.pragma('foreign_keys = ON');
  const checkpointer = opts.backgroundCheckpoints === false ? undefined : startCheckpointer(database, path);
  const statements = withStatementCache(database);
  const config = { database: statements };
  const driver = new ImmediateSqliteDriver(config);
  const db = new Kysely<Database>({ dialect: immediateSqliteDialect(driver, config) });
  return {
    db,
    dialect: 'sqlite',
    sqlite: sqliteFastPath(database, statements, driver),
    ...(checkpointer ? { checkpointer } : {}),
    async close() {
      // the thread first, so that the main connection is the last one and checkpoints on close
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

// int8 (bigint) columns hold UNIX ms and counters, all far below 2^53: read them as numbers.
// numeric stays a string so no amount is rounded.
export const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format);
  },
};

/**
 * `DATABASE_URL` may carry `?schema=name`: tables then live in that schema (created when
 * missing), so several deployments (or test runs) can share one database.
 */
export async function openPostgres(databaseUrl: string, poolSize = 10, opts: StorageOptions = {}): Promise<Storage> {
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get('schema');
  url.searchParams.delete('schema');
  if (schema !== null && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(`Invalid configuration: DATABASE_URL schema must match [a-z_][a-z0-9_]* (got "${schema}")`);
  }
  if (schema) {
    const admin = new pg.Client({ connectionString: url.toString() });
    await admin.connect();
    try {
      await admin.query(`create schema if not exists "${schema}"`);
    } catch (err) {
      // two processes creating the same schema at once: the loser sees a unique violation
      if ((err as { code?: string }).code !== '23505') throw err;
    } finally {
      await admin.end();
    }
  }
  const pool = new MarkingPool({
    Client: MarkingClient,
    connectionString: url.toString(),
    max: poolSize,
    types: pgTypes,
    ...(schema ? { options: `-c search_path="${schema}"` } : {}),
  });
  // Every connection gets the listener, not only idle ones (the pool's 'error' event): a connection
  // checked out between two queries emits on itself. The pool's event repeats an idle one's error.
  const lost =
    opts.onConnectionError ?? ((err: Error) => process.emitWarning(`database connection lost: ${err.message}`));
  pool.on('connect', (client) => client.on('error', lost));
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new SearchPathPostgresDialect({ pool }) });
  return { db, dialect: 'postgres', pool, ...(schema ? { schema } : {}), close: () => db.destroy() };
}

export async function openStorage(
  config: { databaseUrl: string | null; dataDir: string; databasePoolSize?: number },
  opts: StorageOptions = {},
): Promise<Storage> {
  return config.databaseUrl
    ? openPostgres(config.databaseUrl, config.databasePoolSize, opts)
    : openSqlite(config.dataDir, undefined, opts);
}
