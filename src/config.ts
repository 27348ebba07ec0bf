// Configuration comes from environment variables only. Every value is validated once, at start;
// a bad value stops the process with a message naming the variable.
import { existsSync, linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { randomHex } from './shared/crypto.ts';
import { ensurePrivateDir } from './shared/files.ts';
import { parseCidrList } from './egress/addresses.ts';
import { join, resolve } from 'node:path';
import { chainConfig, type ChainConfig } from './chain/config.ts';
import { connectionsConfig, type ConnectionsConfig } from './connections/config.ts';
import { evmRpcConfig, type EvmRpcConfig } from './signin/config.ts';
import { bool, ConfigError, int, str, url, type Env } from './shared/env.ts';
import { swapConfig, type SwapConfig } from './swap/config.ts';

/** What loadConfig throws (the CLI and tests catch it from here). */
export { ConfigError };

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  port: number;
  host: string;
  /** postgres://… when set; otherwise SQLite in `dataDir`. */
  databaseUrl: string | null;
  /** DATABASE_POOL_SIZE: connections the PostgreSQL pool (and each replica's) opens at most. */
  databasePoolSize: number;
  /**
   * DATABASE_REPLICA_URL: streaming replicas of the PostgreSQL primary (comma-separated) that serve
   * read-only work (db/replicas.ts); empty when none.
   */
  databaseReplicaUrls: string[];
  /** REPLICA_MAX_LAG_MS: a replica further behind the primary than this serves no reads. */
  replicaMaxLagMs: number;
  dataDir: string;
  logLevel: LogLevel;
  /** 32 bytes; master secret from which encryption and signing keys are derived. */
  secretKey: Buffer;
  /** Human-readable part of native bech32 addresses. */
  addressPrefix: string;
  /** Public base URL of this service (scheme://host[:port]); used in sign-in messages. */
  publicUrl: string;
  /** Largest accepted request body, in bytes. */
  bodyLimit: number;
  /** REQUEST_TIMEOUT_MS: time a client has to send a whole request (headers and body). */
  requestTimeoutMs: number;
  /**
   * TRUST_PROXY: which peers' X-Forwarded-For names the client IP (per-IP limits): false (default),
   * true (any peer), or a comma-separated list of proxy addresses/CIDRs.
   */
  trustProxy: boolean | string[];
  /** Sign-in challenges per minute (signin/challenge-limits.ts); 0 disables a limit. */
  challengeLimits: {
    /** SIGNIN_CHALLENGE_LIMIT_PER_IP: per client IP (IPv6: per /64). */
    perIpPerMinute: number;
    /** SIGNIN_CHALLENGE_LIMIT_PER_CLIENT: per developer app. */
    perClientPerMinute: number;
  };
  /** Wrong password/code answers allowed on a claim in any 60 s (claims/guess-throttle.ts); 0 disables a limit. */
  guessLimits: {
    /** GUESS_LIMIT_PER_MINUTE: per client IP (IPv6: /64); also switches the per-address back-off. */
    perClientPerMinute: number;
    /** GUESS_CLAIM_LIMIT_PER_MINUTE: per claim, all callers together (refuses only participants). */
    perClaimPerMinute: number;
  };
  /** Requests per minute per API key; 0 disables the limiter. */
  rateLimitPerMinute: number;
  /** Requests per minute per client IP on /api/ routes (keyed and public); 0 disables it. */
  rateLimitPerIpPerMinute: number;
  /** Where rate-limit windows are counted: `database` (shared by every process on PostgreSQL) or `memory` (per process). */
  rateLimitStore: 'database' | 'memory';
  /** Bearer token that /metrics requires; null: /metrics only on METRICS_PORT (or off). */
  metricsToken: string | null;
  /** Serve /metrics on its own listener (METRICS_HOST:METRICS_PORT) instead of the API port. */
  metricsPort: number | null;
  metricsHost: string;
  /** How long a verified API key is trusted without a new lookup (revocation delay bound). */
  apiKeyCacheMs: number;
  /** Run the claim queue worker inside the HTTP service process. */
  runWorker: boolean;
  /** Hex secp256k1 private key signing merkle leaves (no 0x); generated into DATA_DIR when unset. */
  leafSignerKey: string;
  /** Chain REST endpoint polled for pool state (swap estimation); null disables polling. */
  chainRestUrl: string | null;
  /** Skip Go–compatible routing API for routes the service cannot build itself. */
  skipApiUrl: string | null;
  /** JSON file with counterparty chains and IBC channels. */
  ibcRegistryFile: string | null;
  /** Swap estimation: polling, timeouts and warning thresholds. */
  swap: SwapConfig;
  /** Chain id the sign-in page asks a Keplr-style wallet to enable (its bech32 prefix must be ADDRESS_PREFIX). */
  signinNativeChainId: string;
  /** Worker threads that build large merkle trees; 0 builds on the main thread. */
  merkleBuildThreads: number;
  /** Chain REST client and the block-following indexer (src/chain). */
  chain: ChainConfig;
  /** Social providers for the connections flow (off when unconfigured). */
  connections: ConnectionsConfig;
  /** SIGNIN_SESSION_MAX_AGE_DAYS: absolute end of a sign-in (token family) from its first grant; null (0, the default) = none, refresh rotation alone renews. */
  signinSessionMaxAgeMs: number | null;
  /** EGRESS_EXTRA_CA_FILE (tests and local development only): PEM of extra CAs trusted by outbound calls. */
  egressExtraCaPem: string | null;
  /** EGRESS_ALLOW_PRIVATE_CIDRS (tests and local development only): private ranges outbound calls may reach. */
  egressAllowPrivateCidrs: string[];
  /** Smart-contract wallet sign-in (ERC-1271, ERC-6492); off when EVM_RPC_URL is unset. */
  evmRpc: EvmRpcConfig | null;
}

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Reads a secret from the environment, or from DATA_DIR (creating it on first start). */
function persistentSecret(
  env: Env,
  name: string,
  dataDir: string,
  file: string,
  validate: (hex: string) => boolean,
  requirement = '64 hex characters (32 bytes)',
): string {
  const fromEnv = str(env, name);
  if (fromEnv !== null) {
    const hex = fromEnv.replace(/^0x/, '');
    if (!validate(hex)) throw new ConfigError(name, `must be ${requirement}`);
    return hex.toLowerCase();
  }
  const path = join(dataDir, file);
  if (existsSync(path)) {
    const hex = readFileSync(path, 'utf8').trim();
    if (!validate(hex)) throw new ConfigError(name, `is unset and ${path} does not hold ${requirement}`);
    return hex;
  }
  ensurePrivateDir(dataDir);
  const hex = randomHex(32);
  // Written whole to a file of our own, then linked into place: a link fails if another process
  // created the file first (then we read theirs, so all processes agree), and no process can ever
  // read a key file that exists but is not yet written.
  const own = `${path}.${process.pid}.${randomHex(4)}.tmp`;
  writeFileSync(own, hex + '\n', { mode: 0o600, flag: 'wx' });
  try {
    linkSync(own, path);
    return hex;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return readFileSync(path, 'utf8').trim();
  } finally {
    unlinkSync(own);
  }
}

const isHex32 = (hex: string) => /^[0-9a-fA-F]{64}$/.test(hex);

/** secp256k1 group order: a private key is an integer in [1, n). */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const isSecp256k1Key = (hex: string) => isHex32(hex) && BigInt(`0x${hex}`) > 0n && BigInt(`0x${hex}`) < SECP256K1_N;

function signinNativeChainId(env: Env): string {
  const v = str(env, 'SIGNIN_NATIVE_CHAIN_ID') ?? 'platform-1';
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(v))
    throw new ConfigError(
      'SIGNIN_NATIVE_CHAIN_ID',
      `must be 1 to 64 characters from letters, digits, . _ - (got "${v}")`,
    );
  return v;
}

function trustProxy(env: Env): boolean | string[] {
  const v = str(env, 'TRUST_PROXY');
  if (v === null || /^(0|false|no|off)$/i.test(v)) return false;
  if (/^(true|yes|on)$/i.test(v)) return true;
  const list = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!list.every((s) => /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(s))) {
    throw new ConfigError(
      'TRUST_PROXY',
      `must be true, false, or a comma-separated list of IP addresses/CIDRs (got "${v}")`,
    );
  }
  return list;
}

/** Default: counted in the database on PostgreSQL (processes share one budget), in memory on SQLite. */
function rateLimitStore(env: Env, databaseUrl: string | null): 'database' | 'memory' {
  const v = str(env, 'RATE_LIMIT_STORE') ?? (databaseUrl ? 'database' : 'memory');
  if (v !== 'database' && v !== 'memory')
    throw new ConfigError('RATE_LIMIT_STORE', `must be database or memory (got "${v}")`);
  return v;
}

function metricsConfig(
  env: Env,
  port: number,
  host: string,
): Pick<Config, 'metricsToken' | 'metricsPort' | 'metricsHost'> {
  const metricsToken = str(env, 'METRICS_TOKEN');
  if (metricsToken !== null && !/^[\x21-\x7e]{16,256}$/.test(metricsToken)) {
    throw new ConfigError('METRICS_TOKEN', 'must be 16 to 256 printable characters without spaces');
  }
  const metricsPort = str(env, 'METRICS_PORT') === null ? null : int(env, 'METRICS_PORT', 0, 1, 65535);
  if (metricsPort !== null && metricsPort === port)
    throw new ConfigError('METRICS_PORT', `must differ from PORT (${port})`);
  return { metricsToken, metricsPort, metricsHost: str(env, 'METRICS_HOST') ?? host };
}

/** EGRESS_EXTRA_CA_FILE: a readable file holding at least one PEM certificate. */
function extraCaPem(env: Env): string | null {
  const path = str(env, 'EGRESS_EXTRA_CA_FILE');
  if (path === null) return null;
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(
      'EGRESS_EXTRA_CA_FILE',
      `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}: ${path})`,
    );
  }
  if (!/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.test(pem))
    throw new ConfigError('EGRESS_EXTRA_CA_FILE', `must hold a PEM certificate (${path})`);
  return pem;
}

/** EGRESS_ALLOW_PRIVATE_CIDRS: comma-separated CIDR ranges (127.0.0.1/32,::1/128). */
function cidrList(env: Env, name: string): string[] {
  const v = str(env, name);
  if (v === null) return [];
  const entries = v
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  try {
    parseCidrList(entries);
  } catch (err) {
    throw new ConfigError(name, `must be comma-separated CIDR ranges: ${(err as Error).message}`);
  }
  return entries;
}

/** DATABASE_REPLICA_URL: one or more postgres:// URLs, comma-separated; only beside a PostgreSQL DATABASE_URL. */
function replicaUrls(env: Env, databaseUrl: string | null): string[] {
  const raw = str(env, 'DATABASE_REPLICA_URL');
  if (raw === null) return [];
  if (databaseUrl === null)
    throw new ConfigError('DATABASE_REPLICA_URL', 'needs DATABASE_URL: replicas are of a PostgreSQL primary');
  const urls = raw
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  urls.forEach((u, i) => {
    if (url({ DATABASE_REPLICA_URL: u }, 'DATABASE_REPLICA_URL', ['postgres:', 'postgresql:']) === null)
      throw new ConfigError('DATABASE_REPLICA_URL', `entry ${i + 1} is empty`);
  });
  return urls;
}

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const host = str(env, 'HOST') ?? '127.0.0.1';
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const dataDir = resolve(str(env, 'DATA_DIR') ?? './data');
  const databaseReplicaUrls = replicaUrls(env, databaseUrl);
  const logLevel = (str(env, 'LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);
  }
  const addressPrefix = str(env, 'ADDRESS_PREFIX') ?? 'bb';
  if (!/^[a-z]{1,16}$/.test(addressPrefix)) {
    throw new ConfigError('ADDRESS_PREFIX', `must be 1 to 16 lowercase letters (got "${addressPrefix}")`);
  }
  const publicUrl =
    url(env, 'PUBLIC_URL', ['http:', 'https:']) ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const secretKey = Buffer.from(persistentSecret(env, 'SECRET_KEY', dataDir, 'secret.key', isHex32), 'hex');
  // Merkle leaf signatures: the approval's `leafSigner` names this key's address, so it must
  // survive restarts; kept beside secret.key when not configured.
  const swap = swapConfig(env);
  const leafSignerKey = persistentSecret(
    env,
    'LEAF_SIGNER_KEY',
    dataDir,
    'leaf-signer.key',
    isSecp256k1Key,
    '64 hex characters (a secp256k1 private key)',
  );
  return {
    port,
    host,
    databaseUrl,
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    databaseReplicaUrls,
    replicaMaxLagMs: int(env, 'REPLICA_MAX_LAG_MS', 5000, 100, 3_600_000),
    dataDir,
    logLevel,
    secretKey,
    addressPrefix,
    publicUrl,
    bodyLimit: int(env, 'BODY_LIMIT', 2 * 1024 * 1024, 1024, 64 * 1024 * 1024),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 30_000, 1000, 600_000),
    trustProxy: trustProxy(env),
    challengeLimits: {
      perIpPerMinute: int(env, 'SIGNIN_CHALLENGE_LIMIT_PER_IP', 60, 0, 10_000_000),
      perClientPerMinute: int(env, 'SIGNIN_CHALLENGE_LIMIT_PER_CLIENT', 6000, 0, 10_000_000),
    },
    guessLimits: {
      perClientPerMinute: int(env, 'GUESS_LIMIT_PER_MINUTE', 1000, 0, 10_000_000),
      perClaimPerMinute: int(env, 'GUESS_CLAIM_LIMIT_PER_MINUTE', 1000, 0, 10_000_000),
    },
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 0, 0, 10_000_000),
    rateLimitPerIpPerMinute: int(env, 'RATE_LIMIT_PER_IP_PER_MINUTE', 0, 0, 10_000_000),
    rateLimitStore: rateLimitStore(env, databaseUrl),
    ...metricsConfig(env, port, host),
    apiKeyCacheMs: int(env, 'API_KEY_CACHE_MS', 1000, 0, 60_000),
    runWorker: bool(env, 'RUN_WORKER', true),
    leafSignerKey,
    chainRestUrl: url(env, 'CHAIN_REST_URL', ['http:', 'https:']),
    skipApiUrl: url(env, 'SKIP_API_URL', ['http:', 'https:']),
    ibcRegistryFile: str(env, 'IBC_REGISTRY_FILE'),
    swap,
    chain: chainConfig(env, swap),
    signinNativeChainId: signinNativeChainId(env),
    merkleBuildThreads: int(env, 'MERKLE_BUILD_THREADS', Math.min(availableParallelism(), 8), 0, 64),
    connections: connectionsConfig(env, publicUrl),
    signinSessionMaxAgeMs: int(env, 'SIGNIN_SESSION_MAX_AGE_DAYS', 0, 0, 36_500) * 86_400_000 || null,
    egressExtraCaPem: extraCaPem(env),
    egressAllowPrivateCidrs: cidrList(env, 'EGRESS_ALLOW_PRIVATE_CIDRS'),
    evmRpc: evmRpcConfig(env),
  };
}

/**
 * Loads `.env` from the working directory into process.env, if there is one. Variables already in
 * the environment win over the file, so `.env` holds defaults a deployment can still override.
 * Returns the file's path when one was loaded.
 */
export function loadDotEnv(dir = process.cwd()): string | null {
  const path = join(dir, '.env');
  if (!existsSync(path)) return null;
  process.loadEnvFile(path);
  return path;
}

/** The database a configuration points at, for people: never a password. */
export function describeDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): string {
  if (!config.databaseUrl) return `SQLite ${join(config.dataDir, 'platform.sqlite')}`;
  return `PostgreSQL ${redactDatabaseUrl(config.databaseUrl)}`;
}

/** DATABASE_URL with its password (if any) replaced, safe to print and log. */
export function redactDatabaseUrl(databaseUrl: string): string {
  try {
    const u = new URL(databaseUrl);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}
