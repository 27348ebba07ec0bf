// Everything a capability needs at run time, built once per process and handed to each
// capability's routes and background jobs. Tests build their own (fresh database, manual clock).
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import type { Config } from './config.ts';
import { openStorage, type DB, type DialectName, type SqliteFastPath, type Storage } from './db/index.ts';
import { migrateToLatest } from './db/migrations/index.ts';
import { openReplicas, type ReplicaRouter } from './db/replicas.ts';
import { checkSecretKey } from './ops/secret-key-check.ts';
import { setAddressPrefix } from './shared/addresses.ts';
import { systemClock, type Clock } from './shared/clock.ts';
import { createKeyring, type Keyring } from './shared/crypto.ts';

export interface AppContext {
  config: Config;
  db: DB;
  dialect: DialectName;
  /** SQLite only: synchronous execution of hot statements when Kysely is idle (db/index.ts). */
  sqlite?: SqliteFastPath;
  /** PostgreSQL only: the connection pool behind `db` (for metrics). */
  pool?: Storage['pool'];
  /** PostgreSQL with DATABASE_REPLICA_URL: read replicas for read-only work (db/replicas.ts, `forReads`). */
  replicas?: ReplicaRouter;
  clock: Clock;
  keyring: Keyring;
  log: FastifyBaseLogger;
  /** Cleanups registered by capabilities (timers, workers), run on close before the database. */
  onClose: Array<() => Promise<void> | void>;
  close(): Promise<void>;
}

/** Keys, tokens and secrets never reach the logs, wherever they appear. */
export const logRedactPaths = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.client_secret',
  '*.dataSecret',
  '*.password',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.id_token',
  '*.code',
];

/** Query values can carry secrets (`?dataSecret=`, `?code=`): logs keep the names only. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const names = [...new URLSearchParams(url.slice(q + 1)).keys()];
  return `${url.slice(0, q)}?${names.map((n) => `${n}=…`).join('&')}`;
}

/** `destination` 2 sends the log to stderr (the CLI keeps stdout for its JSON). */
export function createLogger(config: Pick<Config, 'logLevel'>, destination: 1 | 2 = 1): FastifyBaseLogger {
  return pino(
    {
      level: config.logLevel,
      redact: { paths: logRedactPaths, censor: '[redacted]' },
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({
          id: req.id,
          method: req.method,
          url: redactUrl(req.url),
        }),
        err: pino.stdSerializers.err,
      },
    },
    destination === 2 ? pino.destination(2) : undefined,
  ) as unknown as FastifyBaseLogger;
}

export async function createContext(
  config: Config,
  opts: {
    clock?: Clock;
    log?: FastifyBaseLogger;
    storage?: Storage;
    migrate?: boolean;
    backgroundCheckpoints?: boolean;
  } = {},
): Promise<AppContext> {
  setAddressPrefix(config.addressPrefix);
  const log = opts.log ?? createLogger(config);
  const storage =
    opts.storage ??
    (await openStorage(config, {
      backgroundCheckpoints: opts.backgroundCheckpoints,
      onConnectionError: (err) =>
        log.warn({ err: err.message }, 'database connection lost; the pool opens a new one on the next query'),
    }));
  const keyring = createKeyring(config.secretKey);
  try {
    if (opts.migrate !== false) await migrateToLatest(storage.db, storage.schema);
    await checkSecretKey(storage.db, keyring);
  } catch (err) {
    if (!opts.storage) await storage.close();
    throw err;
  }
  const replicas =
    storage.pool && config.databaseReplicaUrls.length
      ? openReplicas({
          primary: storage.pool,
          urls: config.databaseReplicaUrls,
          ...(storage.schema ? { schema: storage.schema } : {}),
          maxLagMs: config.replicaMaxLagMs,
          log,
        })
      : undefined;
  let closing: Promise<void> | undefined;
  const ctx: AppContext = {
    config,
    db: storage.db,
    dialect: storage.dialect,
    ...(storage.sqlite ? { sqlite: storage.sqlite } : {}),
    ...(storage.pool ? { pool: storage.pool } : {}),
    ...(replicas ? { replicas } : {}),
    clock: opts.clock ?? systemClock,
    keyring,
    log,
    onClose: [],
    // once: a failed listen closes the context (server.ts) before its owner's own close
    close() {
      closing ??= (async () => {
        for (const fn of ctx.onClose.splice(0).reverse()) await fn();
        await replicas?.close();
        await storage.close();
      })();
      return closing;
    },
  };
  return ctx;
}
