// The route an estimate picks is within 0.1% of the exhaustive optimum, on random small markets
// (fast-check, fixed seed, no timing). The exhaustive optimum is defined as in bench/swap.ts: the
// largest exact output over every simple route of up to 3 hops (no pool and no denom twice), each
// quoted with the chain's math (`bestQuote(allRoutes(state, in, out, 3))`).
// test-run: once (no database: pure code; scripts/test.mjs)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { buildPoolState, parsePool, type Pool } from '../../src/swap/pools.ts';
import { searchBest } from '../../src/swap/ranked.ts';
import { allRoutes, bestQuote, quoteRoute } from '../../src/swap/router.ts';
import { balancerPool, stableswapPool } from './fixtures.ts';

const SEED = Number(process.env.SWAP_ROUTE_SEED ?? 20_261_126);
const RUNS = Number(process.env.SWAP_ROUTE_RUNS ?? 300);
const FEES = ['0', '0.001', '0.002', '0.003', '0.005', '0.01'];
const TAKER = [0n, 10n ** 15n, 2n * 10n ** 15n, 10n ** 16n];

const denom = (i: number) => `tok${i}`;

const poolSpec = (denoms: number) =>
  fc.record({
    a: fc.nat({ max: denoms - 1 }),
    b: fc.nat({ max: denoms - 2 }),
    third: fc.option(fc.nat({ max: denoms - 1 }), { freq: 5 }),
    stable: fc.boolean(),
    // reserves: a price per denom (below) times a depth, with up to ±2% noise
    depth: fc.integer({ min: 4, max: 14 }),
    noiseA: fc.integer({ min: -200, max: 200 }),
    noiseB: fc.integer({ min: -200, max: 200 }),
    wa: fc.integer({ min: 1, max: 6 }),
    wb: fc.integer({ min: 1, max: 6 }),
    fee: fc.constantFrom(...FEES),
  });

const market = fc.integer({ min: 3, max: 7 }).chain((denoms) =>
  fc.record({
    denoms: fc.constant(denoms),
    prices: fc.array(fc.integer({ min: 0, max: 6 }), { minLength: denoms, maxLength: denoms }),
    pools: fc.array(poolSpec(denoms), { minLength: 2, maxLength: 14 }),
    takerFee: fc.constantFrom(...TAKER),
    pairFee: fc.option(fc.tuple(fc.nat({ max: denoms - 1 }), fc.nat({ max: denoms - 1 }), fc.constantFrom(...TAKER))),
    from: fc.nat({ max: denoms - 1 }),
    to: fc.nat({ max: denoms - 2 }),
    // the amount against the input's deepest reserve: 10^-n of it (n ≤ 9), or 0–3 times it
    amountExp: fc.integer({ min: -9, max: 3 }),
  }),
);

type Market = typeof market extends fc.Arbitrary<infer T> ? T : never;

function build(m: Market) {
  const pools: Pool[] = [];
  m.pools.forEach((p, i) => {
    const b = p.b >= p.a ? p.b + 1 : p.b;
    const amount = (d: number, noise: number) =>
      (10n ** BigInt(p.depth + m.prices[d]) * BigInt(10_000 + noise)) / 10_000n + 1000n;
    if (p.stable) {
      pools.push(
        parsePool(
          stableswapPool(
            i + 1,
            [
              [denom(p.a), amount(p.a, p.noiseA)],
              [denom(b), amount(b, p.noiseB)],
            ],
            p.fee,
          ),
        )!,
      );
      return;
    }
    const assets: Array<[string, bigint, number]> = [
      [denom(p.a), amount(p.a, p.noiseA), p.wa],
      [denom(b), amount(b, p.noiseB), p.wb],
    ];
    if (p.third !== null && p.third !== p.a && p.third !== b) assets.push([denom(p.third), amount(p.third, 0), 2]);
    pools.push(parsePool(balancerPool(i + 1, assets, p.fee))!);
  });
  const pairs = new Map<string, bigint>();
  if (m.pairFee) pairs.set(`${denom(m.pairFee[0])}\n${denom(m.pairFee[1])}`, m.pairFee[2]);
  const state = buildPoolState(pools, { defaultFee: m.takerFee, pairs }, 'import', 0);
  const tokenIn = denom(m.from);
  const tokenOut = denom(m.to >= m.from ? m.to + 1 : m.to);
  const deepest = state.byDenom.get(tokenIn)?.[0]?.reserves.get(tokenIn) ?? 10n ** 6n;
  const amountIn =
    m.amountExp >= 0 ? deepest * BigInt(m.amountExp) + 1n : (deepest * 10n ** 6n) / 10n ** BigInt(6 - m.amountExp) + 1n;
  return { state, tokenIn, tokenOut, amountIn };
}

describe(`best route (seed ${SEED}, ${RUNS} markets)`, () => {
  test('the estimate route yields at least 99.9% of the exhaustive 3-hop optimum, and its quote is exact', () => {
    let compared = 0;
    fc.assert(
      fc.property(market, (m) => {
        const { state, tokenIn, tokenOut, amountIn } = build(m);
        const exhaustive = bestQuote(state, allRoutes(state, tokenIn, tokenOut, 3), tokenIn, amountIn);
        const found = searchBest(state, tokenIn, tokenOut, amountIn);
        if (!exhaustive.ok) return;
        compared++;
        assert.ok(found.ok, `no route found, exhaustive has ${exhaustive.quote.amountOut}`);
        // at least 99.9% of the optimum (a 4-hop fallback route may even beat it)
        assert.ok(
          found.quote.amountOut * 1000n >= exhaustive.quote.amountOut * 999n,
          `found ${found.quote.amountOut}, exhaustive optimum ${exhaustive.quote.amountOut}`,
        );
        // the quote is the chain's exact math on that route, not the float estimate
        assert.equal(found.quote.amountOut, quoteRoute(state, found.quote.route, tokenIn, amountIn).amountOut);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    assert.ok(compared > RUNS / 3, `only ${compared} of ${RUNS} markets had a route`);
  });
});
