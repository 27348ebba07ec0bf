// Pool state from the chain's REST endpoint: all pools (`/osmosis/gamm/v1beta1/pools`, paginated),
// the default taker fee (`/osmosis/poolmanager/v1beta1/Params`) and the directional per-pair
// taker fees (`/osmosis/poolmanager/v1beta1/trading_pair_takerfee`), read for new pairs at once
// and for known pairs every CHAIN_TAKER_FEE_REFRESH_MS.
import type { FastifyBaseLogger } from 'fastify';
import type { ChainClient } from '../chain/client.ts';
import {
  PoolFormatError,
  isAliasDenom,
  pairKey,
  parsePool,
  parseTakerFeeParams,
  type Pool,
  type TakerFees,
} from './pools.ts';
import { parseDec } from './dec.ts';

const PAGE_LIMIT = 500;
const MAX_PAGES = 2_000;
const CONCURRENCY = 8;

export class ChainPoolSource {
  private readonly client: ChainClient;
  private readonly refreshMs: number;
  private readonly now: () => number;
  private readonly log: FastifyBaseLogger;
  private pairFees = new Map<string, { fee: bigint; fetchedAt: number }>();

  constructor(opts: { client: ChainClient; takerFeeRefreshMs: number; now: () => number; log: FastifyBaseLogger }) {
    this.client = opts.client;
    this.refreshMs = opts.takerFeeRefreshMs;
    this.now = opts.now;
    this.log = opts.log;
  }

  private get(path: string): Promise<unknown> {
    return this.client.get(path);
  }

  async fetchPools(): Promise<Pool[]> {
    const pools: Pool[] = [];
    let key: string | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const qs = new URLSearchParams({ 'pagination.limit': String(PAGE_LIMIT) });
      if (key) qs.set('pagination.key', key);
      const body = (await this.get(`/osmosis/gamm/v1beta1/pools?${qs}`)) as {
        pools?: unknown;
        pagination?: { next_key?: unknown };
      } | null;
      if (!body || !Array.isArray(body.pools)) throw new PoolFormatError('the pools response has no "pools" array');
      for (const raw of body.pools) {
        try {
          const p = parsePool(raw);
          if (p) pools.push(p);
        } catch (err) {
          // one malformed pool must not hide all the others
          this.log.warn({ err: (err as Error).message }, 'skipping a pool the service cannot parse');
        }
      }
      const next = body.pagination?.next_key;
      if (typeof next !== 'string' || next === '') return pools;
      key = next;
    }
    throw new PoolFormatError(`pools pagination did not end after ${MAX_PAGES} pages`);
  }

  async fetchDefaultTakerFee(): Promise<bigint> {
    const body = (await this.get('/osmosis/poolmanager/v1beta1/Params')) as { params?: unknown } | null;
    return parseTakerFeeParams(body?.params, 'params');
  }

  private async fetchPairFee(tokenIn: string, tokenOut: string): Promise<bigint> {
    const qs = new URLSearchParams({ denom_0: tokenIn, denom_1: tokenOut });
    const body = (await this.get(`/osmosis/poolmanager/v1beta1/trading_pair_takerfee?${qs}`)) as {
      taker_fee?: unknown;
    } | null;
    const fee = typeof body?.taker_fee === 'string' ? parseDec(body.taker_fee) : null;
    if (fee === null || fee < 0n) throw new PoolFormatError('trading_pair_takerfee answered without a valid taker_fee');
    return fee;
  }

  /** Directional taker fees for every pair the pools can trade; only values that differ from the default are kept. */
  async fetchTakerFees(pools: Pool[], defaultFee: bigint): Promise<TakerFees> {
    const now = this.now();
    const wanted = new Set<string>();
    for (const p of pools) {
      for (const a of p.assets) {
        if (isAliasDenom(a.denom)) continue; // no taker fee is charged in alias denoms
        for (const b of p.assets) if (a !== b) wanted.add(pairKey(a.denom, b.denom));
      }
    }
    const due = [...wanted].filter((k) => {
      const known = this.pairFees.get(k);
      return !known || now - known.fetchedAt >= this.refreshMs;
    });
    let failed = 0;
    for (let i = 0; i < due.length; i += CONCURRENCY) {
      await Promise.all(
        due.slice(i, i + CONCURRENCY).map(async (k) => {
          const [tokenIn, tokenOut] = k.split('\n');
          try {
            this.pairFees.set(k, { fee: await this.fetchPairFee(tokenIn, tokenOut), fetchedAt: now });
          } catch {
            failed++; // the last known value (or the default) stays in use
          }
        }),
      );
    }
    if (failed > 0)
      this.log.warn(
        { failed },
        'some trading-pair taker fees could not be read; using the last known value or the default',
      );
    const pairs = new Map<string, bigint>();
    for (const k of wanted) {
      const known = this.pairFees.get(k);
      if (known && known.fee !== defaultFee) pairs.set(k, known.fee);
    }
    return { defaultFee, pairs };
  }

  async fetchAll(): Promise<{ pools: Pool[]; takerFees: TakerFees }> {
    const [pools, defaultFee] = await Promise.all([this.fetchPools(), this.fetchDefaultTakerFee()]);
    return { pools, takerFees: await this.fetchTakerFees(pools, defaultFee) };
  }
}
