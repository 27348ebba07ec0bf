// Candidate route search (SQS-style BFS): limits, no pool reuse, no cycles, ranking by
// liquidity, agreement with the exhaustive search on small graphs, and the per-pair cache.
// test-run: once (no database: pure code; scripts/test.mjs)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPoolState, parsePool, type PoolState } from '../../src/swap/pools.ts';
import {
  MAX_CANDIDATE_ROUTES,
  MAX_HOPS,
  RouteCache,
  allRoutes,
  bestQuote,
  findCandidateRoutes,
  type Route,
} from '../../src/swap/router.ts';
import { balancerPool, randBig, randInt, randomPools, rng } from './fixtures.ts';

const state = (pools: Record<string, unknown>[]): PoolState =>
  buildPoolState(
    pools.map((p) => parsePool(p)!),
    { defaultFee: 0n, pairs: new Map() },
    'import',
    0,
  );

function assertWellFormed(route: Route, tokenIn: string, tokenOut: string) {
  assert.ok(route.length >= 1 && route.length <= MAX_HOPS, `route has ${route.length} hops`);
  assert.equal(route[route.length - 1].tokenOutDenom, tokenOut);
  const pools = new Set(route.map((s) => s.pool.id));
  assert.equal(pools.size, route.length, 'no pool is used twice');
  const denoms = [tokenIn, ...route.map((s) => s.tokenOutDenom)];
  assert.equal(new Set(denoms).size, denoms.length, 'no denom is visited twice (no cycles)');
  let current = tokenIn;
  for (const s of route) {
    assert.ok(
      s.pool.assets.some((a) => a.denom === current),
      `pool ${s.pool.id} holds ${current}`,
    );
    assert.ok(
      s.pool.assets.some((a) => a.denom === s.tokenOutDenom),
      `pool ${s.pool.id} holds ${s.tokenOutDenom}`,
    );
    current = s.tokenOutDenom;
  }
}

describe('candidate route search', () => {
  test('a chain of 5 pools: routes of up to 4 hops are found, 5 are not', () => {
    const chain = ['aaa', 'bbb', 'ccc', 'ddd', 'eee', 'fff'];
    const s = state(
      chain.slice(0, -1).map((d, i) =>
        balancerPool(i + 1, [
          [d, 1_000_000n],
          [chain[i + 1], 1_000_000n],
        ]),
      ),
    );
    const four = findCandidateRoutes(s, 'aaa', 'eee');
    assert.equal(four.length, 1);
    assert.deepEqual(
      four[0].map((x) => x.pool.id),
      ['1', '2', '3', '4'],
    );
    assert.deepEqual(findCandidateRoutes(s, 'aaa', 'fff'), [], 'a 5-hop route is beyond the limit');
  });

  test('no cycles back through the input, even when a pool offers it', () => {
    const s = state([
      balancerPool(1, [
        ['inp', 1_000_000n],
        ['mid', 1_000_000n],
      ]),
      balancerPool(2, [
        ['mid', 1_000_000n],
        ['inp', 5_000_000n],
        ['out', 1_000_000n],
      ]),
      balancerPool(3, [
        ['mid', 1_000_000n],
        ['out', 1_000_000n],
      ]),
    ]);
    for (const r of findCandidateRoutes(s, 'inp', 'out')) assertWellFormed(r, 'inp', 'out');
  });

  test('on random graphs every candidate is well formed, at most 20 are returned, and the best candidate is within 1% of the exhaustive 3-hop search', () => {
    const r = rng(7);
    let agree = 0;
    let within1 = 0;
    let compared = 0;
    for (let g = 0; g < 20; g++) {
      const s = state(randomPools(r, 60, 15));
      for (let q = 0; q < 10; q++) {
        const a = `tok${String(randInt(r, 0, 14)).padStart(3, '0')}`;
        const b = `tok${String(randInt(r, 0, 14)).padStart(3, '0')}`;
        if (a === b) continue;
        const cands = findCandidateRoutes(s, a, b);
        assert.ok(cands.length <= MAX_CANDIDATE_ROUTES);
        for (const c of cands) assertWellFormed(c, a, b);
        const amount = randBig(r, 3, 9);
        let fast = bestQuote(s, cands, a, amount);
        // the estimate falls back to the unfiltered candidates when the liquid ones cannot quote
        if (!fast.ok) fast = bestQuote(s, findCandidateRoutes(s, a, b, { minLiquidity: false }), a, amount);
        const exhaustive = bestQuote(s, allRoutes(s, a, b, 3), a, amount);
        if (!exhaustive.ok) continue;
        assert.ok(fast.ok, `candidates exist when the exhaustive search finds a route (${a} → ${b})`);
        compared++;
        // the exhaustive search covers up to 3 hops; candidates may use a 4th
        if (fast.quote.amountOut >= exhaustive.quote.amountOut) agree++;
        if (fast.quote.amountOut * 100n >= exhaustive.quote.amountOut * 99n) within1++;
      }
    }
    assert.ok(compared > 50, `enough comparisons (${compared})`);
    // these small dense graphs are the hard case for a 20-candidate search (see bench/swap.ts for 1,000 pools)
    assert.ok(agree / compared > 0.7, `candidate search finds the best route in ${agree}/${compared} cases`);
    assert.ok(
      within1 / compared > 0.95,
      `candidate search is within 1% of the best route in ${within1}/${compared} cases`,
    );
  });

  test('liquidity: pools are ranked by value; pools under 1% of the smaller token liquidity are skipped unless nothing else connects', () => {
    const s = state([
      balancerPool(1, [
        ['aaa', 50_000_000n],
        ['bbb', 50_000_000n],
      ]),
      balancerPool(2, [
        ['aaa', 900_000_000n],
        ['bbb', 900_000_000n],
      ]),
      balancerPool(3, [
        ['aaa', 5_000n],
        ['bbb', 5_000n],
      ]),
      balancerPool(4, [
        ['aaa', 1_000n],
        ['eee', 1_000n],
      ]),
      balancerPool(5, [
        ['eee', 800_000_000n],
        ['fff', 800_000_000n],
      ]),
    ]);
    assert.deepEqual(
      findCandidateRoutes(s, 'aaa', 'bbb').map((r) => r[0].pool.id),
      ['2', '1'],
      'pool 3 is worth under 1% of the liquidity',
    );
    assert.deepEqual(
      findCandidateRoutes(s, 'aaa', 'bbb', { minLiquidity: false }).map((r) => r[0].pool.id),
      ['2', '1', '3'],
    );
    assert.deepEqual(
      findCandidateRoutes(s, 'aaa', 'fff').map((r) => r.map((x) => x.pool.id)),
      [['4', '5']],
      'the shallow pool 4 is the only way to fff: the search falls back to it',
    );
  });

  test('the exhaustive search never reuses pools or denoms either', () => {
    const s = state(randomPools(rng(3), 40, 8));
    for (const r of allRoutes(s, 'tok000', 'tok001', 3)) assertWellFormed(r, 'tok000', 'tok001');
  });
});

describe('route cache', () => {
  test('candidates are cached per denom pair and dropped when the pool state changes', () => {
    const cache = new RouteCache();
    const s1 = state([
      balancerPool(1, [
        ['aaa', 1000n],
        ['bbb', 1000n],
      ]),
    ]);
    const r1 = cache.candidates(s1, 'aaa', 'bbb');
    assert.equal(cache.candidates(s1, 'aaa', 'bbb'), r1, 'second lookup served from the cache');
    assert.equal(cache.hits, 1);
    cache.candidates(s1, 'bbb', 'aaa');
    assert.equal(cache.size, 2, 'one entry per ordered pair');
    const same = state([
      balancerPool(1, [
        ['aaa', 1000n],
        ['bbb', 1000n],
      ]),
    ]);
    assert.equal(same.fingerprint, s1.fingerprint, 'identical pool state, identical fingerprint');
    const s2 = state([
      balancerPool(1, [
        ['aaa', 1000n],
        ['bbb', 1000n],
      ]),
      balancerPool(2, [
        ['aaa', 5000n],
        ['bbb', 5000n],
      ]),
    ]);
    const r2 = cache.candidates(s2, 'aaa', 'bbb');
    assert.notEqual(r2, r1);
    assert.deepEqual(
      r2.map((r) => r[0].pool.id),
      ['2', '1'],
      'new pool found, deepest first',
    );
    assert.equal(cache.size, 1, 'the old entries were dropped');
    const s3 = state([
      balancerPool(1, [
        ['aaa', 1000n],
        ['bbb', 1001n],
      ]),
      balancerPool(2, [
        ['aaa', 5000n],
        ['bbb', 5000n],
      ]),
    ]);
    assert.notEqual(s3.fingerprint, s2.fingerprint, 'a reserve change is a state change');
  });
});
