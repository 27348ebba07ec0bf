// The one client of the chain's REST (LCD) API at CHAIN_REST_URL, shared by every capability that
// reads the chain (swap pools and compliance, the indexer, account balances, claim ownership).
//   - undici Agent with keep-alive: the indexer makes thousands of small reads a second;
//   - every call bounded by CHAIN_TIMEOUT_MS (connect, headers and body);
//   - coalescing: concurrent reads of one key (path + pinned height) share one HTTP call;
//   - a small TTL cache, only for reads whose caller accepts staleness (latest height, native
//     balances, unpinned collection documents); pinned and swap reads are never cached here;
//   - failures become ChainError (an ApiError): 503 when the chain cannot be reached, 502 when it
//     answered something other than a success, each naming the chain and the route.
// JSON follows the gateway's rules (reference note §2.1): proto field names, integers as strings.
import { createHash } from 'node:crypto';
import { Agent, request, type Dispatcher } from 'undici';
import type { AppContext } from '../context.ts';
import { ApiError } from '../shared/errors.ts';

const TOKENIZATION = '/bitbadges/bitbadgeschain/tokenization';
const MAX_BODY = 32 * 1024 * 1024;
const MAX_CACHE_ENTRIES = 10_000;
/** CometBFT caps tx search pages at 100. */
const TX_PAGE_LIMIT = 100;

/** How long a cached answer may be served (freshness each reader accepts). */
export const CACHE_TTL_MS = {
  latestBlock: 500,
  nativeBalance: 2_000,
  collection: 2_000,
} as const;

/** The chain could not be read: 503 (unreachable, timeout) or 502 (error answer, malformed answer). */
export class ChainError extends ApiError {
  /** HTTP status the chain answered, null when it did not answer. */
  readonly upstreamStatus: number | null;
  /** The chain's own error text (`message` of its gRPC status body), when it sent one. */
  readonly upstreamMessage: string | null;
  readonly upstreamBody: unknown;
  constructor(
    status: 502 | 503,
    message: string,
    upstreamStatus: number | null = null,
    upstreamMessage: string | null = null,
    upstreamBody: unknown = undefined,
  ) {
    super(status, message);
    this.upstreamStatus = upstreamStatus;
    this.upstreamMessage = upstreamMessage;
    this.upstreamBody = upstreamBody;
  }
}

/** The chain answered that the thing does not exist (collection, balance store of an unknown collection). */
export function isChainNotFound(err: unknown): boolean {
  if (!(err instanceof ChainError) || err.upstreamStatus === null) return false;
  if (err.upstreamStatus === 404) return true;
  return /not found|does not exist|invalid collection id/i.test(err.upstreamMessage ?? '');
}

export interface UintRangeJson {
  start: string;
  end: string;
}
export interface BalanceJson {
  amount: string;
  tokenIds: UintRangeJson[];
  ownershipTimes: UintRangeJson[];
}
/** `UserBalanceStore` as the chain serialises it (extra fields kept as they are). */
export interface UserBalanceStoreJson {
  balances: BalanceJson[];
  outgoingApprovals: unknown[];
  incomingApprovals: unknown[];
  autoApproveSelfInitiatedOutgoingTransfers: boolean;
  autoApproveSelfInitiatedIncomingTransfers: boolean;
  autoApproveAllIncomingTransfers: boolean;
  userPermissions: Record<string, unknown>;
  [field: string]: unknown;
}
/** `TokenCollection` as the chain serialises it. */
export interface TokenCollectionJson {
  collectionId: string;
  manager: string;
  createdBy: string;
  collectionApprovals: unknown[];
  [field: string]: unknown;
}
export interface ApprovalTrackerJson {
  numTransfers: string;
  amounts: BalanceJson[];
  lastUpdatedAt: string;
}
export interface EventJson {
  type: string;
  attributes: { key: string; value: string; index?: boolean }[];
}
export interface BlockInfo {
  height: number;
  /** Block time, UNIX ms. */
  time: number;
  /** Base64 raw transactions in block order. */
  txs: string[];
}
/** One transaction's result, in block order. */
export interface TxResult {
  index: number;
  hash: string;
  code: number;
  events: EventJson[];
  memo: string;
}
/** Identifies one amount tracker (`get_approvals_tracker` path and `approvalId` query). */
export interface AmountTrackerKey {
  collectionId: string;
  approvalLevel: string;
  approverAddress: string;
  approvalId: string;
  amountTrackerId: string;
  trackerType: string;
  approvedAddress: string;
}
export interface ChallengeTrackerKey {
  collectionId: string;
  approvalLevel: string;
  approverAddress: string;
  approvalId: string;
  challengeTrackerId: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const seg = (s: string) => encodeURIComponent(s);

function malformed(route: string, what: string): ChainError {
  return new ChainError(
    502,
    `The chain REST endpoint (CHAIN_REST_URL) answered ${route} in an unexpected format: ${what}`,
  );
}

function parseHeight(v: unknown, route: string): number {
  if (typeof v !== 'string' || !/^\d{1,15}$/.test(v))
    throw malformed(route, 'the block height is not a decimal string');
  return Number(v);
}

function parseTime(v: unknown, route: string): number {
  const ms = typeof v === 'string' ? Date.parse(v) : NaN;
  if (!Number.isFinite(ms)) throw malformed(route, 'the block time is not an RFC 3339 time');
  return ms;
}

/** Hash of a raw transaction as `txhash` carries it: uppercase hex SHA-256 of the decoded bytes. */
export const txHashOf = (rawBase64: string): string =>
  createHash('sha256').update(Buffer.from(rawBase64, 'base64')).digest('hex').toUpperCase();

export interface ChainClientOptions {
  baseUrl: string;
  timeoutMs: number;
  now?: () => number;
  /** Parallel connections kept to the chain (keep-alive). */
  connections?: number;
}

export class ChainClient {
  readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly now: () => number;
  private readonly agent: Dispatcher;
  private readonly inflight = new Map<string, Promise<unknown>>();
  private readonly cache = new Map<string, { value: unknown; expiresAt: number }>();
  /** HTTP calls made and milliseconds spent waiting on them (the indexer's "waiting on the chain"). */
  readonly stats = { calls: 0, waitMs: 0 };

  constructor(opts: ChainClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs;
    this.now = opts.now ?? Date.now;
    this.agent = new Agent({
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 300_000,
      connections: opts.connections ?? 32,
      connectTimeout: opts.timeoutMs,
    });
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  /**
   * GET `path` (with its query) as JSON. `height` pins the query to the state at that block
   * (`x-cosmos-block-height`); `ttlMs` lets a recent answer be reused. `fresh` reads the chain now
   * (neither a kept answer nor a read already in flight) and keeps the answer for the others.
   */
  async get(path: string, opts: { height?: number; ttlMs?: number; fresh?: boolean } = {}): Promise<unknown> {
    const key = `${opts.height ?? ''}|${path}`;
    if (opts.ttlMs && !opts.fresh) {
      const hit = this.cache.get(key);
      if (hit && hit.expiresAt > this.now()) return hit.value;
    }
    const flight = opts.fresh ? `fresh|${key}` : key;
    const running = this.inflight.get(flight);
    if (running) return running;
    const call = this.fetch(path, opts.height).then(
      (value) => {
        this.inflight.delete(flight);
        if (opts.ttlMs) {
          if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.clear();
          this.cache.set(key, { value, expiresAt: this.now() + opts.ttlMs });
        }
        return value;
      },
      (err: unknown) => {
        this.inflight.delete(flight);
        throw err;
      },
    );
    this.inflight.set(flight, call);
    return call;
  }

  private async fetch(path: string, height: number | undefined): Promise<unknown> {
    const route = path.split('?')[0];
    const started = performance.now();
    this.stats.calls++;
    try {
      let res: Dispatcher.ResponseData;
      try {
        res = await request(this.baseUrl + path, {
          dispatcher: this.agent,
          method: 'GET',
          headers: {
            accept: 'application/json',
            ...(height !== undefined ? { 'x-cosmos-block-height': String(height) } : {}),
          },
          headersTimeout: this.timeoutMs,
          bodyTimeout: this.timeoutMs,
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (err) {
        const e = err as Error;
        const why =
          e.name === 'TimeoutError' || /timeout/i.test(e.message) ? `no answer within ${this.timeoutMs} ms` : e.message;
        throw new ChainError(503, `The chain REST endpoint (CHAIN_REST_URL) is unreachable: ${route}: ${why}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of res.body) {
          size += (chunk as Buffer).length;
          if (size > MAX_BODY) {
            res.body.destroy();
            throw malformed(route, `the answer is larger than ${MAX_BODY} bytes`);
          }
          chunks.push(chunk as Buffer);
        }
      } catch (err) {
        if (err instanceof ChainError) throw err;
        throw new ChainError(
          503,
          `The chain REST endpoint (CHAIN_REST_URL) is unreachable: ${route}: ${(err as Error).message}`,
        );
      }
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      try {
        body = text === '' ? null : JSON.parse(text);
      } catch {
        if (res.statusCode >= 200 && res.statusCode < 300) throw malformed(route, 'not JSON');
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        const message = isObj(body) && typeof body.message === 'string' ? body.message.slice(0, 300) : null;
        throw new ChainError(
          502,
          `The chain REST endpoint (CHAIN_REST_URL) answered ${res.statusCode} to ${route}${message ? `: ${message}` : ''}`,
          res.statusCode,
          message,
          body,
        );
      }
      return body;
    } finally {
      this.stats.waitMs += performance.now() - started;
    }
  }

  // ---- blocks and transactions -------------------------------------------------------------

  private parseBlock(body: unknown, route: string): BlockInfo {
    const header =
      isObj(body) && isObj(body.sdk_block) && isObj(body.sdk_block.header)
        ? body.sdk_block.header
        : isObj(body) && isObj(body.block) && isObj(body.block.header)
          ? body.block.header
          : null;
    if (!header) throw malformed(route, 'no sdk_block.header');
    const data =
      isObj(body) && isObj(body.sdk_block)
        ? body.sdk_block.data
        : isObj(body) && isObj(body.block)
          ? body.block.data
          : null;
    const txs = isObj(data) && Array.isArray(data.txs) ? data.txs : [];
    if (!txs.every((t) => typeof t === 'string')) throw malformed(route, 'sdk_block.data.txs holds a non-string');
    return { height: parseHeight(header.height, route), time: parseTime(header.time, route), txs: txs as string[] };
  }

  /** The newest block (height and time); reused for up to 500 ms. */
  /** The chain head; `fresh` skips the short cache (the indexer must see a block the moment it exists). */
  async latestBlock(opts: { fresh?: boolean } = {}): Promise<BlockInfo> {
    const route = '/cosmos/base/tendermint/v1beta1/blocks/latest';
    return this.parseBlock(await this.get(route, { ttlMs: CACHE_TTL_MS.latestBlock, fresh: opts.fresh }), route);
  }

  async block(height: number): Promise<BlockInfo> {
    const route = `/cosmos/base/tendermint/v1beta1/blocks/${height}`;
    return this.parseBlock(await this.get(route), route);
  }

  /**
   * Results (code, events, memo) of every transaction of block `height`, in block order: tx search
   * by `tx.height`, page by page, ordered by matching each `txhash` with the hash of the block's
   * raw transactions. `rawTxs` (from `block()`) decides the order and the expected count: a node
   * whose tx index has not caught up answers fewer results, which is an error, not an empty block.
   */
  async blockResults(height: number, rawTxs: string[]): Promise<TxResult[]> {
    if (rawTxs.length === 0) return [];
    const route = '/cosmos/tx/v1beta1/txs';
    const byHash = new Map<string, { code: number; events: EventJson[]; memo: string }>();
    const pages = Math.ceil(rawTxs.length / TX_PAGE_LIMIT);
    for (let page = 1; page <= pages; page++) {
      const qs = `query=${encodeURIComponent(`tx.height=${height}`)}&page=${page}&limit=${TX_PAGE_LIMIT}&order_by=ORDER_BY_ASC`;
      const body = await this.get(`${route}?${qs}`);
      if (!isObj(body) || !Array.isArray(body.tx_responses)) throw malformed(route, 'no tx_responses array');
      const txs = Array.isArray(body.txs) ? body.txs : [];
      body.tx_responses.forEach((r: unknown, i: number) => {
        if (!isObj(r) || typeof r.txhash !== 'string') throw malformed(route, 'a tx_response has no txhash');
        if (typeof r.code !== 'number') throw malformed(route, `tx ${r.txhash} has no numeric code`);
        const events = Array.isArray(r.events) ? (r.events as unknown[]) : [];
        const parsed: EventJson[] = events.map((e) => {
          if (!isObj(e) || typeof e.type !== 'string' || !Array.isArray(e.attributes))
            throw malformed(route, `tx ${r.txhash} has a malformed event`);
          return {
            type: e.type,
            attributes: e.attributes.map((a: unknown) => {
              if (!isObj(a) || typeof a.key !== 'string' || typeof a.value !== 'string')
                throw malformed(route, `tx ${r.txhash} has a malformed event attribute`);
              return { key: a.key, value: a.value };
            }),
          };
        });
        const tx = txs[i];
        const memo = isObj(tx) && isObj(tx.body) && typeof tx.body.memo === 'string' ? tx.body.memo : '';
        byHash.set(r.txhash.toUpperCase(), { code: r.code, events: parsed, memo });
      });
    }
    const out: TxResult[] = [];
    rawTxs.forEach((raw, index) => {
      const hash = txHashOf(raw);
      const r = byHash.get(hash);
      if (!r)
        throw new ChainError(
          502,
          `The chain REST endpoint (CHAIN_REST_URL) has no result for transaction ${hash} of block ${height} (is the node's tx index enabled and caught up?)`,
        );
      out.push({ index, hash, ...r });
    });
    return out;
  }

  // ---- tokenization state --------------------------------------------------------------------

  /** The collection document, or null when the chain says it does not exist. */
  async collection(
    collectionId: string,
    opts: { height?: number; fresh?: boolean } = {},
  ): Promise<TokenCollectionJson | null> {
    const route = `${TOKENIZATION}/get_collection/${seg(collectionId)}`;
    let body: unknown;
    try {
      body = await this.get(route, {
        height: opts.height,
        ttlMs: opts.height === undefined && !opts.fresh ? CACHE_TTL_MS.collection : undefined,
      });
    } catch (err) {
      if (isChainNotFound(err)) return null;
      throw err;
    }
    if (!isObj(body)) throw malformed(route, 'not an object');
    if (body.collection === null || body.collection === undefined) return null;
    const c = body.collection;
    if (!isObj(c) || typeof c.collectionId !== 'string') throw malformed(route, 'collection.collectionId missing');
    return c as TokenCollectionJson;
  }

  /** Who manages a collection and its collection-level approvals (approval managers are checked against these). */
  async collectionManagement(
    collectionId: string,
  ): Promise<{ manager: string; collectionApprovals: unknown[] } | null> {
    const c = await this.collection(collectionId, { fresh: true });
    return c
      ? {
          manager: typeof c.manager === 'string' ? c.manager : '',
          collectionApprovals: Array.isArray(c.collectionApprovals) ? c.collectionApprovals : [],
        }
      : null;
  }

  /** An address's balance store in a collection (the chain applies the collection's defaults). */
  async balance(collectionId: string, address: string, opts: { height?: number } = {}): Promise<UserBalanceStoreJson> {
    const route = `${TOKENIZATION}/get_balance/${seg(collectionId)}/${seg(address)}`;
    const body = await this.get(route, { height: opts.height });
    if (!isObj(body) || !isObj(body.balance)) throw malformed(route, 'no balance object');
    const b = body.balance;
    if (!Array.isArray(b.balances)) throw malformed(route, 'balance.balances is not an array');
    for (const bal of b.balances as unknown[]) {
      if (!isObj(bal) || typeof bal.amount !== 'string' || !/^\d+$/.test(bal.amount))
        throw malformed(route, 'a balance amount is not a decimal string');
    }
    return b as UserBalanceStoreJson;
  }

  /** An amount tracker; null when it was never incremented (the chain then refuses the query). */
  async approvalTracker(k: AmountTrackerKey, opts: { height?: number } = {}): Promise<ApprovalTrackerJson | null> {
    const route = `${TOKENIZATION}/get_approvals_tracker/${[k.collectionId, k.approvalLevel, k.approverAddress, k.amountTrackerId, k.trackerType, k.approvedAddress].map(seg).join('/')}`;
    let body: unknown;
    try {
      body = await this.get(`${route}?approvalId=${seg(k.approvalId)}`, { height: opts.height });
    } catch (err) {
      if (err instanceof ChainError && err.upstreamStatus === 400) return null;
      throw err;
    }
    if (!isObj(body) || !isObj(body.tracker)) throw malformed(route, 'no tracker object');
    const t = body.tracker;
    return {
      numTransfers: String(t.numTransfers ?? '0'),
      amounts: Array.isArray(t.amounts) ? (t.amounts as BalanceJson[]) : [],
      lastUpdatedAt: String(t.lastUpdatedAt ?? '0'),
    };
  }

  /** How many times one merkle leaf of a challenge tracker was used. */
  async challengeTracker(k: ChallengeTrackerKey, leafIndex: string, opts: { height?: number } = {}): Promise<string> {
    const route = `${TOKENIZATION}/get_challenge_tracker/${[k.collectionId, k.approvalLevel, k.approverAddress, k.challengeTrackerId, leafIndex].map(seg).join('/')}`;
    const body = await this.get(`${route}?approvalId=${seg(k.approvalId)}`, { height: opts.height });
    if (!isObj(body) || typeof body.numUsed !== 'string') throw malformed(route, 'no numUsed string');
    return body.numUsed;
  }

  /**
   * The native `ubadge` balance of a bech32 address, as a decimal string (reused for up to 2 s;
   * `fresh`: read now).
   */
  async nativeBalance(address: string, opts: { fresh?: boolean } = {}): Promise<string> {
    const route = `/cosmos/bank/v1beta1/balances/${seg(address)}/by_denom`;
    const body = await this.get(`${route}?denom=ubadge`, { ttlMs: CACHE_TTL_MS.nativeBalance, fresh: opts.fresh });
    const amount = isObj(body) && isObj(body.balance) ? body.balance.amount : undefined;
    if (typeof amount !== 'string' || !/^\d+$/.test(amount))
      throw malformed(route, 'balance.amount is not a decimal string');
    return amount;
  }
}

type Deployment = Pick<AppContext, 'config' | 'services' | 'onClose'>;

/** The context's chain client (`services.chainClient`, closed with it), or null when CHAIN_REST_URL is unset. */
export function chainClientFor(ctx: Deployment): ChainClient | null {
  if (!ctx.config.chainRestUrl) return null;
  let client = ctx.services.chainClient;
  if (!client) {
    const c =
      (ctx.services.chainClient =
      client =
        new ChainClient({
          baseUrl: ctx.config.chainRestUrl,
          timeoutMs: ctx.config.chain.timeoutMs,
        }));
    ctx.onClose.push(() => c.close());
  }
  return client;
}

/** Like chainClientFor, for routes that cannot work without the chain: a 503 naming the variable. */
export function requireChainClient(ctx: Deployment): ChainClient {
  const client = chainClientFor(ctx);
  if (!client) throw new ChainError(503, 'The chain is not configured: CHAIN_REST_URL is not set');
  return client;
}
