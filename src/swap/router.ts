// Route search and quoting, after the Osmosis sidecar router (SQS): a breadth-first candidate
// search over pools ranked by liquidity (at most 4 hops, at most 20 candidates, no pool reused,
// no denom visited twice), candidate shapes cached per denom pair until the pool state changes,
// and every candidate quoted on the current state with the chain's exact math.
import { SwapMathError } from './balancer.ts';
import { DecError, ONE, truncateInt } from './dec.ts';
import { poolOutGivenIn, poolSpotPrice, takerFeeFor, type Pool, type PoolState } from './pools.ts';

export const MAX_HOPS = 4;
export const MAX_CANDIDATE_ROUTES = 20;
/** Minimum pool value, as a fraction of the smaller total liquidity of the two tokens traded. */
export const MIN_LIQUIDITY_FRACTION = 0.01;
const MAX_CACHED_PAIRS = 50_000;

export interface RouteStep {
  pool: Pool;
  tokenOutDenom: string;
  /** Identifies the route prefix ending at this step: the memo key of its amount within one quote. */
  key?: string;
}
export type Route = RouteStep[];

export interface HopQuote {
  pool: Pool;
  tokenInDenom: string;
  tokenOutDenom: string;
  amountIn: bigint;
  /** Taker fee rate charged on this hop (18-decimal raw). */
  takerFee: bigint;
  amountInAfterTakerFee: bigint;
  amountOut: bigint;
}

export interface RouteQuote {
  route: Route;
  amountIn: bigint;
  amountOut: bigint;
  hops: HopQuote[];
}

/** A partial route during the search: a linked list back to the input (cheap to extend). */
interface Partial {
  pool: Pool | null;
  denom: string;
  parent: Partial | null;
  depth: number;
}

function poolOnPath(node: Partial, pool: Pool): boolean {
  for (let n: Partial | null = node; n; n = n.parent) if (n.pool === pool) return true;
  return false;
}

function denomOnPath(node: Partial, denom: string): boolean {
  for (let n: Partial | null = node; n; n = n.parent) if (n.denom === denom) return true;
  return false;
}

function toRoute(node: Partial): Route {
  const route: Route = new Array(node.depth);
  for (let n: Partial | null = node; n?.pool; n = n.parent)
    route[n.depth - 1] = { pool: n.pool, tokenOutDenom: n.denom };
  let key = '';
  for (const step of route) step.key = key = `${key}>${step.pool.id}:${step.tokenOutDenom}`;
  return route;
}

/**
 * Breadth-first candidate routes from `tokenIn` to `tokenOut` (SQS candidate search). Pools worth
 * less than MIN_LIQUIDITY_FRACTION of the smaller of the two tokens' total liquidity are skipped
 * (SQS's dynamic minimum-liquidity filter); when that leaves no route, the search runs again
 * without the filter. `minLiquidity: false` searches without it from the start.
 */
export function findCandidateRoutes(
  state: PoolState,
  tokenIn: string,
  tokenOut: string,
  opts: { minLiquidity?: boolean; maxHops?: number; maxRoutes?: number } = {},
): Route[] {
  const maxHops = opts.maxHops ?? MAX_HOPS;
  const maxRoutes = opts.maxRoutes ?? MAX_CANDIDATE_ROUTES;
  if (tokenIn === tokenOut || !state.byDenom.has(tokenIn) || !state.byDenom.has(tokenOut)) return [];
  if (opts.minLiquidity === false) return search(state, tokenIn, tokenOut, maxHops, maxRoutes, 0);
  const floor =
    Math.min(state.denomLiquidity.get(tokenIn) ?? 0, state.denomLiquidity.get(tokenOut) ?? 0) * MIN_LIQUIDITY_FRACTION;
  const filtered = search(state, tokenIn, tokenOut, maxHops, maxRoutes, floor);
  return filtered.length > 0 || floor === 0 ? filtered : search(state, tokenIn, tokenOut, maxHops, maxRoutes, 0);
}

function search(
  state: PoolState,
  tokenIn: string,
  tokenOut: string,
  maxHops: number,
  maxRoutes: number,
  minValue: number,
): Route[] {
  const found: Route[] = [];
  // a route one hop short of the limit can only finish in a pool holding tokenOut
  const outPools = state.byDenom.get(tokenOut) ?? [];
  const besideOut = new Set<string>();
  for (const pool of outPools) for (const d of pool.reserves.keys()) besideOut.add(d);
  const visited = new Uint8Array(state.pools.length);
  const queue: Partial[] = [{ pool: null, denom: tokenIn, parent: null, depth: 0 }];
  for (let head = 0; head < queue.length && found.length < maxRoutes; head++) {
    const node = queue[head];
    const own = state.byDenom.get(node.denom) ?? [];
    // On the last hop only pools holding tokenOut matter: walk the shorter of the two ranked
    // lists (both are in the same global value order, so the pools come in the same order).
    const lastHop = node.depth + 1 === maxHops && outPools.length < own.length;
    for (const pool of lastHop ? outPools : own) {
      if (found.length >= maxRoutes) break;
      if (lastHop && !pool.reserves.has(node.denom)) {
        if (state.poolValue[pool.index] < minValue) break;
        continue;
      }
      // pools come ranked by value: past the floor, none of the rest qualifies
      if (state.poolValue[pool.index] < minValue) break;
      if (visited[pool.index] === 1 || poolOnPath(node, pool)) continue;
      const reserves = pool.reserves;
      // no cycle back to the input once under way
      if (node.depth > 0 && reserves.has(tokenIn)) continue;
      if (reserves.has(tokenOut)) {
        // a pool holding the output only ever finishes the route
        found.push(toRoute({ pool, denom: tokenOut, parent: node, depth: node.depth + 1 }));
        continue;
      }
      if (node.depth + 1 >= maxHops) continue;
      for (const asset of pool.assets) {
        const d = asset.denom;
        if (d === node.denom || asset.amount === 0n || denomOnPath(node, d)) continue;
        if (node.depth + 2 === maxHops && !besideOut.has(d)) continue;
        queue.push({ pool, denom: d, parent: node, depth: node.depth + 1 });
      }
    }
    for (let n: Partial | null = node; n?.pool; n = n.parent) visited[n.pool.index] = 1;
  }
  return found;
}

/** Every simple route up to `maxHops` (no pool or denom twice). The exhaustive baseline. */
export function allRoutes(state: PoolState, tokenIn: string, tokenOut: string, maxHops: number): Route[] {
  const out: Route[] = [];
  const usedPools = new Set<Pool>();
  const usedDenoms = new Set<string>([tokenIn]);
  const walk = (current: string, route: Route) => {
    for (const pool of state.byDenom.get(current) ?? []) {
      if (usedPools.has(pool)) continue;
      for (const asset of pool.assets) {
        const d = asset.denom;
        if (d === current || asset.amount === 0n || usedDenoms.has(d)) continue;
        const key = `${route.length ? route[route.length - 1].key : ''}>${pool.id}:${d}`;
        const next = [...route, { pool, tokenOutDenom: d, key }];
        if (d === tokenOut) {
          out.push(next);
          continue;
        }
        if (next.length >= maxHops) continue;
        usedPools.add(pool);
        usedDenoms.add(d);
        walk(d, next);
        usedPools.delete(pool);
        usedDenoms.delete(d);
      }
    }
  };
  if (tokenIn !== tokenOut) walk(tokenIn, []);
  return out;
}

/** Per-request memo of hop results by route prefix (candidates share prefixes). */
export type HopMemo = Map<string, bigint | SwapMathError>;

/** Quotes one route: per hop, the taker fee is taken from the input (truncated), then the pool swaps. */
export function quoteRoute(
  state: PoolState,
  route: Route,
  tokenInDenom: string,
  amountIn: bigint,
  memo?: HopMemo,
): RouteQuote {
  const hops: HopQuote[] = [];
  let denomIn = tokenInDenom;
  let amount = amountIn;
  for (const step of route) {
    const takerFee = takerFeeFor(state.takerFees, denomIn, step.tokenOutDenom);
    // (1 − takerFee) × amount, exact, then truncated
    const afterFee = truncateInt((ONE - takerFee) * amount);
    // within one quote (one input amount) a prefix fixes every amount along it
    const key = memo && step.key;
    let out = key ? memo.get(key) : undefined;
    if (out === undefined) {
      try {
        out = poolOutGivenIn(step.pool, afterFee, denomIn, step.tokenOutDenom);
      } catch (err) {
        // Past the chain's decimal range (an amount near 2^256 as an 18-decimal Dec) the chain
        // panics and the swap fails: for the estimate that is an amount too large for the pool.
        if (err instanceof DecError) out = new SwapMathError('too-large', 'amount is beyond the chain decimal range');
        else if (!(err instanceof SwapMathError)) throw err;
        else out = err;
      }
      if (key) memo.set(key, out);
    }
    if (out instanceof SwapMathError) throw out;
    hops.push({
      pool: step.pool,
      tokenInDenom: denomIn,
      tokenOutDenom: step.tokenOutDenom,
      amountIn: amount,
      takerFee,
      amountInAfterTakerFee: afterFee,
      amountOut: out,
    });
    denomIn = step.tokenOutDenom;
    amount = out;
  }
  return { route, amountIn, amountOut: amount, hops };
}

export type BestQuote =
  | { ok: true; quote: RouteQuote; candidates: number }
  | { ok: false; reason: 'no-route' | 'zero-output' | 'too-large' | 'invalid'; candidates: number };

/** Picks the largest output; ties go to fewer hops, then to lower pool ids. `memo` must be for this amount. */
export function bestQuote(
  state: PoolState,
  routes: Route[],
  tokenInDenom: string,
  amountIn: bigint,
  memo: HopMemo = new Map(),
): BestQuote {
  if (routes.length === 0) return { ok: false, reason: 'no-route', candidates: 0 };
  let best: RouteQuote | null = null;
  const failures = new Set<SwapMathError['reason']>();
  for (const route of routes) {
    let q: RouteQuote;
    try {
      q = quoteRoute(state, route, tokenInDenom, amountIn, memo);
    } catch (err) {
      if (err instanceof SwapMathError) {
        failures.add(err.reason);
        continue;
      }
      throw err;
    }
    if (!best || q.amountOut > best.amountOut || (q.amountOut === best.amountOut && preferred(q.route, best.route)))
      best = q;
  }
  if (best) return { ok: true, quote: best, candidates: routes.length };
  const reason = failures.has('zero-output') ? 'zero-output' : failures.has('too-large') ? 'too-large' : 'invalid';
  return { ok: false, reason, candidates: routes.length };
}

function preferred(a: Route, b: Route): boolean {
  if (a.length !== b.length) return a.length < b.length;
  for (let i = 0; i < a.length; i++) {
    const x = BigInt(a[i].pool.id);
    const y = BigInt(b[i].pool.id);
    if (x !== y) return x < y;
  }
  return false;
}

/**
 * Price impact of a quoted route, as a fraction (0.05 = 5%): how far the output falls short of the
 * fee-free spot value of the input after fees. Floating point: it only drives a warning.
 */
export function priceImpact(quote: RouteQuote): number {
  let ratio = 1;
  for (const h of quote.hops) {
    const spot = Number(poolSpotPrice(h.pool, h.tokenInDenom, h.tokenOutDenom)) / 1e18;
    const ideal = Number(h.amountInAfterTakerFee) * (1 - Number(h.pool.swapFee) / 1e18) * spot;
    if (!(ideal > 0)) return 1;
    ratio *= Number(h.amountOut) / ideal;
  }
  return Math.max(0, 1 - ratio);
}

/** Candidate routes per denom pair, dropped whenever the pool state changes. Quotes are never cached. */
export class RouteCache {
  private fingerprint = '';
  private cache = new Map<string, Route[]>();
  hits = 0;
  misses = 0;

  candidates(state: PoolState, tokenIn: string, tokenOut: string, minLiquidity = true): Route[] {
    if (state.fingerprint !== this.fingerprint) {
      this.cache.clear();
      this.fingerprint = state.fingerprint;
    }
    const key = `${tokenIn}\n${tokenOut}\n${minLiquidity ? 1 : 0}`;
    const cached = this.cache.get(key);
    if (cached) {
      this.hits++;
      return cached;
    }
    this.misses++;
    const routes = findCandidateRoutes(state, tokenIn, tokenOut, { minLiquidity });
    if (this.cache.size >= MAX_CACHED_PAIRS) this.cache.clear();
    this.cache.set(key, routes);
    return routes;
  }

  get size(): number {
    return this.cache.size;
  }
}
