// Amount-aware route search: every simple route of up to 3 hops is ranked by its output at the
// requested amount, estimated in floating point; only the best few are then quoted with the chain's
// exact math. The float pass is a dynamic programme over hop levels that keeps, per denom and
// level, the few largest amounts reached (each hop's output grows with its input, so a smaller
// amount at the same denom can only lose, unless the larger one already used a pool or denom the
// rest of the route needs; keeping RANKED_PER_DENOM of them covers that). The float graph is built
// once per pool state (adjacency by denom index, float reserves, weights and fee multipliers).
import { ONE, dec, quo } from './dec.ts';
import { poolSpotPrice, takerFeeFor, type Pool, type PoolState } from './pools.ts';
import { SwapMathError } from './balancer.ts';
import {
  bestQuote,
  findCandidateRoutes,
  quoteRoute,
  type BestQuote,
  type HopMemo,
  type Route,
  type RouteCache,
} from './router.ts';

/** Longest route the ranked search considers (the exhaustive baseline's depth). */
export const RANKED_MAX_HOPS = 3;
/** How many of the best float-ranked routes may be quoted exactly. */
export const RANKED_EXACT = 8;
/** The same when amounts reach the pools' limits (some of the best-ranked routes then fail exactly). */
const RANKED_EXACT_SATURATED = 64;
/** Amounts kept per denom and level when they reach the pools' limits. */
const RANKED_PER_DENOM_SATURATED = 16;
/**
 * Routes are quoted exactly in the order of their float estimates until the next estimate falls
 * more than this fraction below the best exact output so far (the float estimate is within ~1e-8
 * of the exact output for balancer hops, and an upper bound for stableswap ones).
 */
export const RANKED_TOLERANCE = 1e-4;
/** Amounts kept per denom and hop level during the float pass. */
const RANKED_PER_DENOM = 3;

/** One directed hop through one pool, with what the float estimate needs. */
interface Edge {
  pool: Pool;
  from: number;
  to: number;
  toDenom: string;
  stable: boolean;
  /** (1 − taker fee) × (1 − spread factor): the part of the input the invariant sees. */
  feeMul: number;
  bIn: number;
  bOut: number;
  /** Wi / Wo (balancer). */
  w: number;
  /** The chain refuses y = Bi/(Bi+Ain) < 0.01 for this weight ratio (series). */
  series: boolean;
  /** Fee-free spot price (stableswap: the float estimate is spot × input, an upper bound). */
  spot: number;
}

interface Graph {
  index: Map<string, number>;
  adj: Edge[][];
  /** Edges by from × n + to. */
  pair: Map<number, Edge[]>;
}

const graphs = new WeakMap<PoolState, Graph>();

function graphOf(state: PoolState): Graph {
  let g = graphs.get(state);
  if (g) return g;
  const index = new Map<string, number>();
  for (const d of state.byDenom.keys()) index.set(d, index.size);
  const n = index.size;
  const adj: Edge[][] = Array.from({ length: n }, () => []);
  const pair = new Map<number, Edge[]>();
  for (const pool of state.pools) {
    const fee = 1 - Number(pool.swapFee) / 1e18;
    for (const ai of pool.assets) {
      if (ai.amount === 0n) continue;
      for (const ao of pool.assets) {
        if (ao === ai || ao.amount === 0n || ao.denom === ai.denom) continue;
        const from = index.get(ai.denom)!;
        const to = index.get(ao.denom)!;
        const stable = pool.type === 'stableswap';
        let series = false;
        let w = 1;
        if (!stable && ai.weight > 0n && ao.weight > 0n) {
          const ratio = quo(dec(ai.weight), dec(ao.weight));
          const fraction = ratio % ONE;
          series = fraction !== 0n && fraction !== ONE / 2n;
          w = Number(ai.weight) / Number(ao.weight);
        }
        const e: Edge = {
          pool,
          from,
          to,
          toDenom: ao.denom,
          stable,
          feeMul: (1 - Number(takerFeeFor(state.takerFees, ai.denom, ao.denom)) / 1e18) * fee,
          bIn: Number(ai.amount),
          bOut: Number(ao.amount),
          w,
          series,
          spot: stable ? Number(poolSpotPrice(pool, ai.denom, ao.denom)) / 1e18 : 0,
        };
        adj[from].push(e);
        const k = from * n + to;
        const list = pair.get(k);
        if (list) list.push(e);
        else pair.set(k, [e]);
      }
    }
  }
  g = { index, adj, pair };
  graphs.set(state, g);
  return g;
}

let strained = false;

/**
 * Float output of one hop, or -1 when it yields nothing or the chain refuses it. Sets `strained`
 * when the amount is at the pool's limits (refused as too large, or capped below the reserve):
 * there a smaller input can succeed where a larger one fails, and the float pass no longer ranks
 * by amount alone.
 */
function hopOut(e: Edge, amount: number): number {
  const ain = amount * e.feeMul;
  let out: number;
  if (e.stable) {
    out = ain * e.spot;
  } else {
    const x = ain / e.bIn;
    if (e.series && x > 99) {
      strained = true;
      return -1;
    }
    // Bo × (1 − (1/(1+x))^w), without cancellation for small x
    out = -e.bOut * Math.expm1(-e.w * Math.log1p(x));
  }
  if (!(out >= 1)) return -1;
  // At most the reserve less one unit: the exact math decides whether the hop can take that much
  // (a float near the reserve cannot tell; the stableswap estimate may even pass it).
  if (out < e.bOut - 1) return out;
  strained = true;
  return e.bOut - 1;
}

interface Entry {
  amount: number;
  edge: Edge | null;
  parent: Entry | null;
  depth: number;
}

function onPath(entry: Entry, pool: Pool, denom: number): boolean {
  for (let n: Entry | null = entry; n?.edge; n = n.parent) {
    if (n.edge.pool === pool || n.edge.from === denom) return true;
  }
  return false;
}

/** Keeps the `max` largest amounts per slot, largest first; true when an amount was dropped. */
function keep(slots: (Entry[] | undefined)[], d: number, entry: Entry, max: number): boolean {
  const list = slots[d];
  if (!list) {
    slots[d] = [entry];
    return false;
  }
  if (list.length === max && list[list.length - 1].amount >= entry.amount) return true;
  let i = list.length;
  while (i > 0 && list[i - 1].amount < entry.amount) i--;
  list.splice(i, 0, entry);
  if (list.length <= max) return false;
  list.pop();
  return true;
}

function toRoute(entry: Entry): Route {
  const route: Route = new Array(entry.depth);
  for (let n: Entry | null = entry; n?.edge; n = n.parent)
    route[n.depth - 1] = { pool: n.edge.pool, tokenOutDenom: n.edge.toDenom };
  let key = '';
  for (const step of route) step.key = key = `${key}>${step.pool.id}:${step.tokenOutDenom}`;
  return route;
}

export interface RankedRoute {
  route: Route;
  /** Float estimate of the output (stableswap hops: spot price × input, an upper bound). */
  estimate: number;
}

/**
 * The routes of up to `maxHops` from `tokenIn` to `tokenOut` with the largest float-estimated
 * output for `amountIn`, best first, at most `limit` of them. No pool or denom appears twice in a
 * route. Empty when no route of that length connects the pair (or none can take the amount).
 */
export function rankedRoutes(
  state: PoolState,
  tokenIn: string,
  tokenOut: string,
  amountIn: bigint,
  opts: { maxHops?: number; limit?: number; perDenom?: number } = {},
): { routes: RankedRoute[]; saturated: boolean } {
  const maxHops = opts.maxHops ?? RANKED_MAX_HOPS;
  const limit = opts.limit ?? RANKED_EXACT;
  const perDenom = opts.perDenom ?? RANKED_PER_DENOM;
  let saturated = false;
  const g = graphOf(state);
  const src = g.index.get(tokenIn);
  const dst = g.index.get(tokenOut);
  if (src === undefined || dst === undefined || src === dst) return { routes: [], saturated };
  const n = g.adj.length;
  // denoms one pool away from the output: the only ones a route one hop short can stand on
  const besideOut = new Uint8Array(n);
  const besideList: number[] = [];
  for (const e of g.adj[dst]) {
    if (besideOut[e.to] === 0) besideList.push(e.to);
    besideOut[e.to] = 1;
  }
  const done: Entry[] = [];
  let level: (Entry[] | undefined)[] = new Array(n);
  level[src] = [{ amount: Number(amountIn), edge: null, parent: null, depth: 0 }];
  let frontier = [src];
  let dropped = new Uint8Array(n);
  for (let depth = 0; depth < maxHops && frontier.length > 0; depth++) {
    const next: (Entry[] | undefined)[] = new Array(n);
    const nextDropped = new Uint8Array(n);
    const nextFrontier: number[] = [];
    const last = depth + 1 === maxHops;
    const penultimate = depth + 2 === maxHops;
    for (const d of frontier) {
      strained = false;
      for (const entry of level[d]!) {
        // finish here
        for (const e of g.pair.get(d * n + dst) ?? []) {
          if (onPath(entry, e.pool, -1)) continue;
          const out = hopOut(e, entry.amount);
          if (out > 0) done.push({ amount: out, edge: e, parent: entry, depth: depth + 1 });
        }
        if (last) continue;
        // or go on, through the fewer of: all this denom's pools, or the pairs with a denom beside the output
        const viaBeside = penultimate && besideList.length < g.adj[d].length;
        const count = viaBeside ? besideList.length : 1;
        for (let i = 0; i < count; i++) {
          const edges = viaBeside ? g.pair.get(d * n + besideList[i]) : g.adj[d];
          if (!edges) continue;
          for (const e of edges) {
            if (e.to === dst || e.to === src || (penultimate && besideOut[e.to] === 0)) continue;
            const out = hopOut(e, entry.amount);
            if (out <= 0) continue;
            const held = next[e.to];
            if (held && held.length === perDenom && held[held.length - 1].amount >= out) {
              nextDropped[e.to] = 1;
              continue;
            }
            if (onPath(entry, e.pool, e.to)) continue;
            if (!held) nextFrontier.push(e.to);
            if (keep(next, e.to, { amount: out, edge: e, parent: entry, depth: depth + 1 }, perDenom))
              nextDropped[e.to] = 1;
          }
        }
      }
      // a smaller amount dropped here might have passed where a kept one hit a pool's limit
      if (strained && dropped[d] === 1) saturated = true;
    }
    level = next;
    frontier = nextFrontier;
    dropped = nextDropped;
  }
  done.sort((a, b) => b.amount - a.amount || a.depth - b.depth);
  const routes = done.slice(0, limit).map((e) => ({ route: toRoute(e), estimate: e.amount }));
  return { routes, saturated };
}

/**
 * Quotes ranked routes exactly in estimate order, until the estimates fall clearly below the best
 * exact output; `failed` when one of them could not be quoted.
 */
function quoteRanked(
  state: PoolState,
  ranked: RankedRoute[],
  tokenIn: string,
  amountIn: bigint,
  memo: HopMemo,
): { best: BestQuote; failed: boolean } {
  const quoted: Route[] = [];
  let bestOut = 0;
  let failed = false;
  for (const r of ranked) {
    if (bestOut > 0 && r.estimate < bestOut * (1 - RANKED_TOLERANCE)) break;
    quoted.push(r.route);
    try {
      const out = Number(quoteRoute(state, r.route, tokenIn, amountIn, memo).amountOut);
      if (out > bestOut) bestOut = out;
    } catch (err) {
      if (!(err instanceof SwapMathError)) throw err;
      // an amount too small for a route yields too little on the others as well
      if (err.reason !== 'zero-output') failed = true;
    }
  }
  // the same routes again, from the memo: the tie-break and the failure reasons of bestQuote
  return { best: bestQuote(state, quoted, tokenIn, amountIn, memo), failed };
}

/**
 * The route an estimate uses: the exact best of the float-ranked routes (up to 3 hops). When none
 * of them can be quoted (no route that short, or every one refused by the exact math), the SQS
 * candidate search (up to 4 hops, liquid pools first, then all pools) decides, as before.
 */
export function searchBest(
  state: PoolState,
  tokenIn: string,
  tokenOut: string,
  amountIn: bigint,
  cache?: RouteCache,
): BestQuote {
  const memo: HopMemo = new Map();
  const first = rankedRoutes(state, tokenIn, tokenOut, amountIn);
  let ranked = first.saturated ? null : quoteRanked(state, first.routes, tokenIn, amountIn, memo);
  // Amounts at the pools' limits (a kept route hit one while a smaller amount was dropped, or a
  // ranked route failed in the exact math): rank every route instead. Rare: inputs near a
  // pool's reserve.
  if (!ranked || ranked.failed) {
    const all = rankedRoutes(state, tokenIn, tokenOut, amountIn, {
      perDenom: RANKED_PER_DENOM_SATURATED,
      limit: RANKED_EXACT_SATURATED,
    });
    ranked = quoteRanked(state, all.routes, tokenIn, amountIn, memo);
  }
  if (ranked.best.ok) return ranked.best;
  const candidates = (minLiquidity: boolean) =>
    cache
      ? cache.candidates(state, tokenIn, tokenOut, minLiquidity)
      : findCandidateRoutes(state, tokenIn, tokenOut, { minLiquidity });
  let best = bestQuote(state, candidates(true), tokenIn, amountIn);
  // the liquid candidates could not quote this amount: try the shallow pools too
  if (!best.ok && best.reason !== 'no-route') {
    const all = bestQuote(state, candidates(false), tokenIn, amountIn);
    if (all.ok) best = all;
  }
  return best;
}
