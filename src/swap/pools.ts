// Pool state: the chain's pool JSON (the `/osmosis/gamm/v1beta1/pools` REST format) parsed into
// exact bigint values, the taker-fee parameters, and an immutable snapshot indexed for routing.
import { SwapMathError, balancerOutGivenIn, balancerSpotPrice } from './balancer.ts';
import { ONE, parseDec } from './dec.ts';
import { stableswapOutGivenIn, stableswapSpotPrice, type StableswapReserve } from './stableswap.ts';
import { sha256Hex } from '../shared/crypto.ts';

export type PoolType = 'balancer' | 'stableswap';

export interface PoolAsset {
  denom: string;
  amount: bigint;
  /** Balancer weight (stored × 2^30 on chain; only ratios matter). 0 for stableswap. */
  weight: bigint;
  /** Stableswap scaling factor. 0 for balancer. */
  scalingFactor: bigint;
}

export interface Pool {
  /** uint64 pool id as a decimal string. */
  id: string;
  type: PoolType;
  address: string;
  /** Spread factor (`pool_params.swap_fee`), 18-decimal raw. */
  swapFee: bigint;
  exitFee: bigint;
  assets: PoolAsset[];
  /** Position in its PoolState's `pools` (set by buildPoolState; routing bitsets use it). */
  index: number;
  /** Non-zero reserves by denom (routing lookups). */
  reserves: Map<string, bigint>;
  /** The JSON it was parsed from (persisted and fingerprinted as is). */
  source: unknown;
}

export class PoolFormatError extends Error {}

const BALANCER_TYPES = new Set([
  '/gamm.poolmodels.balancer.Pool',
  '/osmosis.gamm.v1beta1.Pool',
  '/gamm.v1beta1.Pool',
  '/osmosis.gamm.poolmodels.balancer.v1beta1.Pool',
]);
const STABLESWAP_TYPES = new Set([
  '/gamm.poolmodels.stableswap.Pool',
  '/gamm.poolmodels.stableswap.v1beta1.Pool',
  '/osmosis.gamm.poolmodels.stableswap.v1beta1.Pool',
]);

/** Cosmos SDK denom rule (sdk.ValidateDenom). */
export const COSMOS_DENOM = /^[a-zA-Z][a-zA-Z0-9/:._-]{2,127}$/;
const UINT = /^\d+$/;
const MAX_INT = (1n << 256n) - 1n;

function obj(v: unknown, where: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new PoolFormatError(`${where} must be an object`);
  return v as Record<string, unknown>;
}
function uint(v: unknown, where: string): bigint {
  if (typeof v !== 'string' || !UINT.test(v) || v.length > 78)
    throw new PoolFormatError(`${where} must be an unsigned integer string`);
  const n = BigInt(v);
  if (n > MAX_INT) throw new PoolFormatError(`${where} is larger than 2^256`);
  return n;
}
function decimal(v: unknown, where: string): bigint {
  const d = typeof v === 'string' ? parseDec(v) : null;
  if (d === null || d < 0n)
    throw new PoolFormatError(`${where} must be a non-negative decimal string with at most 18 decimals`);
  return d;
}
function denom(v: unknown, where: string): string {
  if (typeof v !== 'string' || !COSMOS_DENOM.test(v)) throw new PoolFormatError(`${where} must be a valid denom`);
  return v;
}
function fraction(v: unknown, where: string): bigint {
  const d = decimal(v, where);
  if (d >= ONE) throw new PoolFormatError(`${where} must be below 1`);
  return d;
}

/**
 * Parses one pool from the chain's JSON. Returns null for pool types the service does not quote
 * (concentrated liquidity, CosmWasm); throws PoolFormatError for a malformed balancer/stableswap pool.
 */
export function parsePool(raw: unknown, where = 'pool'): Pool | null {
  const p = obj(raw, where);
  const type = typeof p['@type'] === 'string' ? (p['@type'] as string) : null;
  const isBalancer = type ? BALANCER_TYPES.has(type) : Array.isArray(p.pool_assets);
  const isStable = type
    ? STABLESWAP_TYPES.has(type)
    : Array.isArray(p.pool_liquidity) && Array.isArray(p.scaling_factors);
  if (!isBalancer && !isStable) return null;
  const id = uint(p.id, `${where}.id`);
  if (id > 18446744073709551615n) throw new PoolFormatError(`${where}.id must be a uint64`);
  const params = obj(p.pool_params, `${where}.pool_params`);
  const swapFee = fraction(params.swap_fee, `${where}.pool_params.swap_fee`);
  const exitFee = params.exit_fee === undefined ? 0n : fraction(params.exit_fee, `${where}.pool_params.exit_fee`);
  const address = typeof p.address === 'string' ? p.address : '';
  const assets: PoolAsset[] = [];
  if (isBalancer) {
    if (!Array.isArray(p.pool_assets)) throw new PoolFormatError(`${where}.pool_assets must be an array`);
    p.pool_assets.forEach((a, i) => {
      const at = `${where}.pool_assets[${i}]`;
      const asset = obj(a, at);
      const token = obj(asset.token, `${at}.token`);
      const weight = uint(asset.weight, `${at}.weight`);
      if (weight === 0n) throw new PoolFormatError(`${at}.weight must be positive`);
      assets.push({
        denom: denom(token.denom, `${at}.token.denom`),
        amount: uint(token.amount, `${at}.token.amount`),
        weight,
        scalingFactor: 0n,
      });
    });
  } else {
    if (!Array.isArray(p.pool_liquidity) || !Array.isArray(p.scaling_factors))
      throw new PoolFormatError(`${where} needs pool_liquidity and scaling_factors arrays`);
    if (p.scaling_factors.length !== p.pool_liquidity.length)
      throw new PoolFormatError(`${where}.scaling_factors must have one entry per pool_liquidity coin`);
    const factors = p.scaling_factors as unknown[];
    p.pool_liquidity.forEach((c, i) => {
      const at = `${where}.pool_liquidity[${i}]`;
      const coin = obj(c, at);
      const factor = uint(
        typeof factors[i] === 'number' ? String(factors[i]) : factors[i],
        `${where}.scaling_factors[${i}]`,
      );
      if (factor === 0n) throw new PoolFormatError(`${where}.scaling_factors[${i}] must be positive`);
      assets.push({
        denom: denom(coin.denom, `${at}.denom`),
        amount: uint(coin.amount, `${at}.amount`),
        weight: 0n,
        scalingFactor: factor,
      });
    });
  }
  if (assets.length < 2) throw new PoolFormatError(`${where} must hold at least two assets`);
  if (new Set(assets.map((a) => a.denom)).size !== assets.length)
    throw new PoolFormatError(`${where} lists a denom twice`);
  const reserves = new Map(assets.filter((a) => a.amount > 0n).map((a) => [a.denom, a.amount]));
  return {
    id: id.toString(),
    type: isBalancer ? 'balancer' : 'stableswap',
    address,
    swapFee,
    exitFee,
    assets,
    index: -1,
    reserves,
    source: raw,
  };
}

export interface TakerFees {
  /** `default_taker_fee`, 18-decimal raw. */
  defaultFee: bigint;
  /** Directional overrides keyed `tokenIn\ntokenOut`. */
  pairs: Map<string, bigint>;
}

export const pairKey = (tokenIn: string, tokenOut: string): string => `${tokenIn}\n${tokenOut}`;

/** Alias (`badgeslp:`) denoms move as tokenization transfers; the chain takes no taker fee in them. */
export const isAliasDenom = (d: string): boolean => d.startsWith('badgeslp:');

export function takerFeeFor(fees: TakerFees, tokenIn: string, tokenOut: string): bigint {
  if (isAliasDenom(tokenIn)) return 0n;
  return fees.pairs.get(pairKey(tokenIn, tokenOut)) ?? fees.defaultFee;
}

/** Reads `params.taker_fee_params.default_taker_fee` from a poolmanager Params response body. */
export function parseTakerFeeParams(raw: unknown, where = 'params'): bigint {
  const params = obj(raw, where);
  const tfp = obj(params.taker_fee_params, `${where}.taker_fee_params`);
  return fraction(tfp.default_taker_fee, `${where}.taker_fee_params.default_taker_fee`);
}

/** `[{ token_in_denom, token_out_denom, taker_fee }]` (the chain's DenomPairTakerFee JSON). */
export function parsePairTakerFees(raw: unknown, where = 'denom_pair_taker_fees'): Map<string, bigint> {
  if (!Array.isArray(raw)) throw new PoolFormatError(`${where} must be an array`);
  const pairs = new Map<string, bigint>();
  raw.forEach((e, i) => {
    const o = obj(e, `${where}[${i}]`);
    pairs.set(
      pairKey(
        denom(o.token_in_denom, `${where}[${i}].token_in_denom`),
        denom(o.token_out_denom, `${where}[${i}].token_out_denom`),
      ),
      fraction(o.taker_fee, `${where}[${i}].taker_fee`),
    );
  });
  return pairs;
}

export function reserveOf(pool: Pool, d: string): bigint {
  return pool.reserves.get(d) ?? 0n;
}

/** One pool hop after the taker fee: the pool's spread factor, then its invariant. */
export function poolOutGivenIn(pool: Pool, amountIn: bigint, denomIn: string, denomOut: string): bigint {
  if (pool.type === 'stableswap') {
    const reserves: StableswapReserve[] = pool.assets.map((a) => ({
      denom: a.denom,
      amount: a.amount,
      scalingFactor: a.scalingFactor,
    }));
    return stableswapOutGivenIn(amountIn, denomIn, denomOut, reserves, pool.swapFee);
  }
  const ain = pool.assets.find((a) => a.denom === denomIn);
  const aout = pool.assets.find((a) => a.denom === denomOut);
  if (!ain || !aout) throw new SwapMathError('invalid', `denom not in pool ${pool.id}`);
  return balancerOutGivenIn(amountIn, ain.amount, ain.weight, aout.amount, aout.weight, pool.swapFee);
}

/** Fee-free spot price (units of out per unit of in) as an 18-decimal raw; 0 when undefined. */
export function poolSpotPrice(pool: Pool, denomIn: string, denomOut: string): bigint {
  if (pool.type === 'stableswap') {
    return stableswapSpotPrice(
      denomIn,
      denomOut,
      pool.assets.map((a) => ({ denom: a.denom, amount: a.amount, scalingFactor: a.scalingFactor })),
    );
  }
  const ain = pool.assets.find((a) => a.denom === denomIn);
  const aout = pool.assets.find((a) => a.denom === denomOut);
  if (!ain || !aout || ain.amount === 0n) return 0n;
  return balancerSpotPrice(ain.amount, ain.weight, aout.amount, aout.weight);
}

/** An immutable view of all quotable pools plus taker fees, indexed for routing. */
export interface PoolState {
  pools: Pool[];
  byId: Map<string, Pool>;
  /** Pools holding each denom, ranked by liquidity (value, deepest first). */
  byDenom: Map<string, Pool[]>;
  /** Relative market value of each pool by `pool.index` (floats: ranking and filtering only). */
  poolValue: Float64Array;
  /** Relative market value of each denom's liquidity summed over its pools. */
  denomLiquidity: Map<string, number>;
  takerFees: TakerFees;
  /** Changes whenever any pool or fee changes; route caches key on it. */
  fingerprint: string;
  /** Where the state came from: `chain`, `import` or `none`. */
  source: 'chain' | 'import' | 'none';
  loadedAt: number;
}

function canonical(pools: Pool[], fees: TakerFees): string {
  const parts: string[] = [`d${fees.defaultFee}`];
  for (const [k, v] of [...fees.pairs].sort((a, b) => (a[0] < b[0] ? -1 : 1))) parts.push(`p${k}=${v}`);
  for (const p of pools) {
    parts.push(
      `${p.type}:${p.id}:${p.swapFee}:${p.assets.map((a) => `${a.denom}=${a.amount}/${a.weight}/${a.scalingFactor}`).join(',')}`,
    );
  }
  return parts.join('|');
}

export function buildPoolState(
  pools: Pool[],
  takerFees: TakerFees,
  source: PoolState['source'],
  now: number,
): PoolState {
  const sorted = [...pools].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : BigInt(a.id) > BigInt(b.id) ? 1 : 0));
  const byId = new Map<string, Pool>();
  for (const p of sorted) byId.set(p.id, p);
  // copies: a pool object may sit in several states (an unchanged pool across refreshes)
  const unique = [...byId.values()].map((p, index) => ({ ...p, index }));
  byId.clear();
  for (const p of unique) byId.set(p.id, p);
  const byDenom = new Map<string, Pool[]>();
  for (const p of unique) {
    for (const a of p.assets) {
      if (a.amount === 0n) continue; // an empty side cannot be routed through
      let list = byDenom.get(a.denom);
      if (!list) byDenom.set(a.denom, (list = []));
      list.push(p);
    }
  }
  for (const [d, list] of byDenom) {
    list.sort((x, y) => {
      const rx = reserveOf(x, d);
      const ry = reserveOf(y, d);
      return rx > ry ? -1 : rx < ry ? 1 : BigInt(x.id) < BigInt(y.id) ? -1 : 1;
    });
  }
  const { poolValue, denomLiquidity } = valuePools(unique, byDenom);
  for (const list of byDenom.values()) {
    list.sort((x, y) => poolValue[y.index] - poolValue[x.index] || (BigInt(x.id) < BigInt(y.id) ? -1 : 1));
  }
  const fingerprint = sha256Hex(canonical(unique, takerFees));
  return { pools: unique, byId, byDenom, poolValue, denomLiquidity, takerFees, fingerprint, source, loadedAt: now };
}

/** Units of `quote` per unit of `base` at the pool's fee-free spot price, as a float. */
function spotFloat(pool: Pool, base: string, quote: string): number {
  const b = pool.assets.find((a) => a.denom === base)!;
  const q = pool.assets.find((a) => a.denom === quote)!;
  if (pool.type === 'stableswap') return Number(q.scalingFactor) / Number(b.scalingFactor);
  return Number(q.amount) / Number(q.weight) / (Number(b.amount) / Number(b.weight));
}

/**
 * Market values without external prices (the router's stand-in for SQS's USD liquidity): in each
 * connected group of denoms, the denom held by the most pools is the unit; every other denom is
 * priced through the deepest pool that first reaches it from there. A pool's value is the sum of
 * its reserves at those prices; a denom's liquidity is its reserves' value over all its pools.
 */
function valuePools(
  pools: Pool[],
  byDenom: Map<string, Pool[]>,
): { poolValue: Float64Array; denomLiquidity: Map<string, number> } {
  const price = new Map<string, number>();
  const order = [...byDenom.keys()].sort((a, b) => byDenom.get(b)!.length - byDenom.get(a)!.length || (a < b ? -1 : 1));
  for (const hub of order) {
    if (price.has(hub)) continue;
    price.set(hub, 1);
    const queue = [hub];
    for (let i = 0; i < queue.length; i++) {
      const c = queue[i];
      const pc = price.get(c)!;
      for (const pool of byDenom.get(c)!) {
        for (const a of pool.assets) {
          if (a.amount === 0n || price.has(a.denom)) continue;
          const v = pc * spotFloat(pool, a.denom, c);
          price.set(a.denom, Number.isFinite(v) && v > 0 ? v : 0);
          queue.push(a.denom);
        }
      }
    }
  }
  const poolValue = new Float64Array(pools.length);
  const denomLiquidity = new Map<string, number>();
  for (const pool of pools) {
    let v = 0;
    for (const a of pool.assets) {
      const x = Number(a.amount) * (price.get(a.denom) ?? 0);
      v += x;
      denomLiquidity.set(a.denom, (denomLiquidity.get(a.denom) ?? 0) + x);
    }
    poolValue[pool.index] = v;
  }
  return { poolValue, denomLiquidity };
}

export const emptyPoolState = (now = 0): PoolState =>
  buildPoolState([], { defaultFee: 0n, pairs: new Map() }, 'none', now);

/**
 * Reads an import file / REST body: `{ pools: [...] }` (pagination ignored), optionally with
 * `params` (the poolmanager Params body's `params`) and `denom_pair_taker_fees`; or a bare array.
 */
export function parsePoolsDocument(doc: unknown): {
  pools: Pool[];
  skipped: Array<{ id: string; type: string }>;
  takerFees: TakerFees;
} {
  const root = Array.isArray(doc) ? { pools: doc } : obj(doc, 'document');
  if (!Array.isArray(root.pools)) throw new PoolFormatError('document.pools must be an array of pools');
  const pools: Pool[] = [];
  const skipped: Array<{ id: string; type: string }> = [];
  root.pools.forEach((raw, i) => {
    const parsed = parsePool(raw, `pools[${i}]`);
    if (parsed) pools.push(parsed);
    else {
      const r = raw as Record<string, unknown>;
      skipped.push({ id: String(r?.id ?? i), type: String(r?.['@type'] ?? 'unknown') });
    }
  });
  const ids = new Set<string>();
  for (const p of pools) {
    if (ids.has(p.id)) throw new PoolFormatError(`pool id ${p.id} appears twice`);
    ids.add(p.id);
  }
  const defaultFee = root.params === undefined ? 0n : parseTakerFeeParams(root.params, 'params');
  const pairs =
    root.denom_pair_taker_fees === undefined
      ? new Map<string, bigint>()
      : parsePairTakerFees(root.denom_pair_taker_fees);
  return { pools, skipped, takerFees: { defaultFee, pairs } };
}
