// Everything a capability needs at run time, built once per process and handed to each
// capability's routes and background jobs. Tests build their own (fresh database, manual clock).
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import type { RefusalLog } from './claims/refusals.ts';
import type { EligibilityIndex } from './eligibility/claim-index.ts';
import type { MinBadgeResult } from './plugins/minBadge.ts';
import type { CachedContributors } from './plugins/githubContributions.ts';
import type { Config } from './config.ts';
import { openStorage, type DB, type DialectName, type SqliteFastPath, type Storage } from './db/index.ts';
import { migrateToLatest } from './db/migrations/index.ts';
import { openReplicas, type ReplicaRouter } from './db/replicas.ts';
import { checkSecretKey } from './ops/secret-key-check.ts';
import { setAddressPrefix } from './shared/addresses.ts';
import { systemClock, type Clock } from './shared/clock.ts';
import { createKeyring, type Keyring } from './shared/crypto.ts';
import { noSessions, type SessionResolver } from './shared/session.ts';
import type { CachedClaim } from './claims/model.ts';
import { createWakeHub, type WakeHub } from './claims/queue-wakeup.ts';
import type { PendingInsert } from './claims/attempts.ts';
import type { TakeRequest as RateLimitTake } from './api-keys/rate-limit.ts';
import type { TurnBatcher } from './shared/turn-batcher.ts';
import type { Egress } from './egress/index.ts';
import type { CallThread } from './plugin-documents/call-thread.ts';
import type { CachedDocument } from './plugin-documents/cache.ts';
import type { ChainClient } from './chain/client.ts';
import { ParsedBalanceStores } from './chain/stored-balances.ts';
import type { MerkleService } from './merkle/service.ts';
import type { CachedApp } from './signin/apps.ts';
import type { ContractWallets } from './signin/contract-wallets.ts';
import { createGroupCommit, type GroupCommit } from './signin/group-commit.ts';
import type { KeyCache } from './signin/signing-keys.ts';

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

  // Per-deployment state: one of each per context, never shared between contexts (tests and
  // benchmarks run several apps, each on its own database, in one process). Built here, in full.
  /** Turns a bearer token into its session; the sign-in capability installs its own (none without it). */
  sessionResolver: SessionResolver;
  /** Claims read recently, by id (claims/model.ts). */
  claimCache: Map<string, CachedClaim>;
  /** Plugin documents as the claim engine reads them, by plugin id (plugin-documents/cache.ts). */
  pluginDocumentCache: Map<string, CachedDocument>;
  /** min-badge verdicts kept 10–60 s, by chain, holders and minimum (plugins/minBadge.ts). */
  minBadgeResults: Map<string, MinBadgeResult>;
  /** The read model's balance stores as last parsed, checked against their text on every read (chain/stored-balances.ts). */
  balanceStores: ParsedBalanceStores;
  /** GitHub contributor lists kept 5 minutes, by API and repository (plugins/githubContributions.ts). */
  githubContributors: Map<string, CachedContributors>;
  /** Developer apps' rows as the token endpoint authenticates them, by client id (signin/apps.ts). */
  signinAppCache: Map<string, CachedApp>;
  /** The id_token signing keys read so far and the private keys imported (signin/signing-keys.ts). */
  signingKeys: KeyCache;
  /** Wakes the claim queue's worker when attempts are queued (claims/queue-wakeup.ts). */
  claimQueueWake: WakeHub;
  /** The token endpoint's shared commits on SQLite (signin/group-commit.ts). */
  signinCommits: GroupCommit;
  /** Services that load heavy code or hold threads and sockets: see LazyServices. */
  services: LazyServices;
}

/**
 * Per-deployment services built on first use, each by its owner's accessor (named below), kept
 * here and closed with the context. Built lazily so that a CLI command loads and starts only what
 * it uses: viem, jose and undici cost up to a second to load, and some of these start threads.
 */
export interface LazyServices {
  /** egress/index.ts `egressFor`: the one client for user-supplied URLs. */
  egress?: Egress;
  /** plugin-documents/call-thread.ts `callThreadFor`: the thread that makes custom plugins' calls. */
  callThread?: CallThread;
  /** chain/client.ts `chainClientFor` (only when CHAIN_REST_URL is set). */
  chainClient?: ChainClient;
  /** merkle/service.ts `merkleService`: the leaf signer, the tree cache and the build threads. */
  merkle?: MerkleService;
  /** eligibility/claim-index.ts `eligibilityIndex`: the eligibility index, built by its first answer. */
  eligibility?: EligibilityIndex;
  /** claims/refusals.ts `refusalLog`: the refused-tries log's buffer, flushed on close. */
  refusals?: RefusalLog;
  /** signin/contract-wallets.ts: contract-wallet signature checks (only when EVM_RPC_URL is set). */
  contractWallets?: ContractWallets;
  /** claims/attempts.ts: attempts accepted in one turn, inserted by one statement. */
  attemptInserts?: TurnBatcher<PendingInsert>;
  /** claims/attempts.ts: PostgreSQL, the notifying insert in flight and the attempts waiting for it. */
  notifyingAccept?: { inFlight: boolean; waiting: PendingInsert[] };
  /** api-keys/rate-limit.ts: the rate-limit leases asked for in one turn, taken by one statement. */
  rateLimitTakes?: TurnBatcher<RateLimitTake>;
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
    // stderr through process.stderr (synchronous for files and pipes), so a caller that runs the CLI
    // in-process (the tests) sees these lines where it sees the rest of the command's stderr
    destination === 2 ? process.stderr : undefined,
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
          poolSize: config.databasePoolSize,
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
    sessionResolver: noSessions,
    claimCache: new Map(),
    pluginDocumentCache: new Map(),
    signinAppCache: new Map(),
    minBadgeResults: new Map(),
    githubContributors: new Map(),
    balanceStores: new ParsedBalanceStores(),
    // (signin/signing-keys.ts loads jose: the CLI loads it only for the commands that sign)
    signingKeys: { rows: [], loadedAt: -Infinity, loading: null, imported: new Map(), ready: new Map() },
    claimQueueWake: createWakeHub({ config }),
    signinCommits: createGroupCommit({ db: storage.db, sqlite: storage.sqlite }),
    services: {},
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
