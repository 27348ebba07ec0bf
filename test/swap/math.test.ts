// The chain's fixed-point math, pinned against the reference vectors: LegacyDec rounding, the
// power approximation, balancer out-given-in, the taker fee, slippage minimums, stableswap.
// test-run: once (no database: pure code; scripts/test.mjs)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ONE,
  approxSqrt,
  formatDec,
  mul,
  mulTrunc,
  parseDec,
  pow,
  power,
  powApprox,
  quo,
  quoTrunc,
  ceilInt,
  truncateInt,
} from '../../src/swap/dec.ts';
import { balancerOutGivenIn, balancerSpotPrice, SwapMathError } from '../../src/swap/balancer.ts';
import { stableswapOutGivenIn } from '../../src/swap/stableswap.ts';
import { minAmountOut, parseSlippage, parseTokenIn } from '../../src/swap/denoms.ts';
import { buildPoolState, parsePool, takerFeeFor } from '../../src/swap/pools.ts';
import { quoteRoute } from '../../src/swap/router.ts';
import { balancerPool } from './fixtures.ts';

const d = (s: string) => parseDec(s)!;

describe('LegacyDec (18 decimals) rounding', () => {
  test('parse and format', () => {
    assert.equal(d('1'), ONE);
    assert.equal(d('0.003'), 3n * 10n ** 15n);
    assert.equal(formatDec(d('0.003')), '0.003000000000000000');
    assert.equal(
      parseDec('0.1234567890123456789'),
      null,
      'more than 18 decimals is rejected, like LegacyNewDecFromStr',
    );
    assert.equal(parseDec('1e5'), null);
  });

  test('multiplication chops with banker’s rounding (half to even)', () => {
    // raw products ending in exactly half a unit
    assert.equal(mul(5n, ONE / 10n), 0n, '0.5 units rounds to even 0');
    assert.equal(mul(15n, ONE / 10n), 2n, '1.5 units rounds to even 2');
    assert.equal(mul(25n, ONE / 10n), 2n, '2.5 units rounds to even 2');
    assert.equal(mul(26n, ONE / 10n), 3n, '2.6 units rounds up');
    assert.equal(mul(-15n, ONE / 10n), -2n, 'negative: symmetric');
    assert.equal(mulTrunc(29n, ONE / 10n), 2n, 'MulTruncate floors');
  });

  test('division: quotient truncated before the banker chop; QuoTruncate floors', () => {
    assert.equal(quo(ONE, 3n * ONE), 333333333333333333n);
    assert.equal(quo(2n * ONE, 3n * ONE), 666666666666666667n);
    assert.equal(quoTrunc(2n * ONE, 3n * ONE), 666666666666666666n);
    assert.throws(() => quo(ONE, 0n));
  });

  test('integer conversions', () => {
    assert.equal(truncateInt(d('2.9')), 2n);
    assert.equal(truncateInt(d('-2.9')), -2n, 'toward zero');
    assert.equal(ceilInt(d('2.1')), 3n);
    assert.equal(ceilInt(d('2')), 2n);
  });

  test('square root (Newton from 1) and integer power (square-and-multiply order)', () => {
    assert.equal(formatDec(approxSqrt(2n * ONE)), '1.414213562373095049');
    assert.equal(formatDec(approxSqrt(d('0.25'))), '0.500000000000000000');
    assert.equal(power(d('1.5'), 3n), d('3.375'));
    assert.equal(power(d('0.999'), 0n), ONE);
    // 1.1^10 with per-step rounding: the chain's value
    assert.equal(formatDec(power(d('1.1'), 10n)), '2.593742460100000000');
  });

  test('pow: exponent 0.5 goes through the square root, other fractions through the series', () => {
    assert.equal(pow(d('0.81'), d('0.5')), approxSqrt(d('0.81')));
    const x = pow(d('0.9'), d('1.5'));
    assert.equal(x, mul(power(d('0.9'), 1n), powApprox(d('0.9'), d('0.5'))));
    const y = Number(pow(d('0.9'), d('0.3'))) / 1e18;
    assert.ok(Math.abs(y - 0.9 ** 0.3) < 1e-8, `0.9^0.3 ≈ ${y}`);
    assert.throws(() => pow(0n, ONE), /greater than 0/);
    assert.throws(() => pow(2n * ONE, ONE), /lesser than two/);
  });
});

describe('balancer out-given-in (reference vectors)', () => {
  const s = d('0.003');
  const B = 1_000_000_000n;
  test('equal weights, 1e9/1e9, 1e6 in, 0.3% → 996006', () => {
    assert.equal(balancerOutGivenIn(1_000_000n, B, 1n, B, 1n, s), 996006n);
  });
  test('weights 4:1 (80/20) → 3978079', () => {
    assert.equal(balancerOutGivenIn(1_000_000n, B, 4n, B, 1n, s), 3978079n);
  });
  test('weights 5:3 → 1659460 (the power series path)', () => {
    assert.equal(balancerOutGivenIn(1_000_000n, B, 5n, B, 3n, s), 1659460n);
  });
  test('mainnet pool 1 snapshot (chain weights × 2^30): 1e9 ubadge → 58 utoken; 1 utoken → 15587814 ubadge', () => {
    const w = 1073741824n;
    assert.equal(balancerOutGivenIn(1_000_000_000n, 12523362993n, w, 800n, w, s), 58n);
    assert.equal(balancerOutGivenIn(1n, 800n, w, 12523362993n, w, s), 15587814n);
  });
  test('a zero output is an error, not a zero quote', () => {
    assert.throws(
      () => balancerOutGivenIn(1n, B, 1n, B, 1n, s),
      (e: unknown) => e instanceof SwapMathError && e.reason === 'zero-output',
    );
  });
  test('spot price is fee-free (Bo/Wo)/(Bi/Wi)', () => {
    assert.equal(balancerSpotPrice(B, 1n, 2n * B, 1n), 2n * ONE);
    assert.equal(balancerSpotPrice(B, 4n, B, 1n), 4n * ONE);
  });
});

describe('poolmanager hop: taker fee first, then the pool swap fee', () => {
  test('the taker fee is taken from the input and truncated; badgeslp: inputs pay none', () => {
    const pools = [
      parsePool(
        balancerPool(1, [
          ['ubadge', 1_000_000_000n],
          ['uusdc', 1_000_000_000n],
        ]),
      )!,
    ];
    const state = buildPoolState(pools, { defaultFee: d('0.0015'), pairs: new Map() }, 'import', 0);
    const q = quoteRoute(state, [{ pool: pools[0], tokenOutDenom: 'uusdc' }], 'ubadge', 1_000_333n);
    // (1 − 0.0015) × 1000333 = 998832.5005 → 998832
    assert.equal(q.hops[0].amountInAfterTakerFee, 998832n);
    assert.equal(q.amountOut, balancerOutGivenIn(998832n, 1_000_000_000n, 1n, 1_000_000_000n, 1n, d('0.003')));
    assert.equal(takerFeeFor(state.takerFees, 'badgeslp:1:utoken', 'ubadge'), 0n);
    assert.equal(takerFeeFor(state.takerFees, 'badges:1:utoken', 'ubadge'), d('0.0015'));
  });
});

describe('slippage minimum: floor(out × (100 − slippage) / 100)', () => {
  test('published examples: 1834 → 1815 and 326 → 322 at 1%', () => {
    assert.equal(minAmountOut(1834n, parseSlippage(1)), 1815n);
    assert.equal(minAmountOut(326n, parseSlippage('1')), 322n);
  });
  test('1000000 at 0.5% → 995000; 0% keeps the output; fractions are exact', () => {
    assert.equal(minAmountOut(1_000_000n, parseSlippage('0.5')), 995_000n);
    assert.equal(minAmountOut(1_000_000n, parseSlippage(0)), 1_000_000n);
    assert.equal(minAmountOut(1_000_000n, parseSlippage(0.1)), 999_000n, '0.1 as a JS number is read as exactly 0.1');
    assert.equal(minAmountOut(3n, parseSlippage('33.333333333333333333')), 2n);
  });
  test('100% would give 0, which the chain rejects: the minimum is at least 1', () => {
    assert.equal(minAmountOut(5000n, parseSlippage(100)), 1n);
  });
  test('number forms in exponent notation are read exactly', () => {
    assert.equal(parseSlippage(1e-7), d('0.0000001'));
    assert.equal(parseSlippage(1.5e-10), d('0.00000000015'));
  });
});

describe('coin strings', () => {
  test('both tokenIn forms', () => {
    assert.deepEqual(parseTokenIn('1000000ubadge', 'platform-1'), { denom: 'ubadge', amount: 1_000_000n });
    assert.deepEqual(parseTokenIn('amount:7,denom:badgeslp:64:utoken', 'platform-1'), {
      denom: 'badgeslp:64:utoken',
      amount: 7n,
    });
    assert.deepEqual(parseTokenIn('12factory/bb1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqs7gvmv/coin', 'platform-1'), {
      denom: 'factory/bb1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqs7gvmv/coin',
      amount: 12n,
    });
    assert.deepEqual(parseTokenIn('1000xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', '1'), {
      denom: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
      amount: 100n,
    });
  });
});

describe('stableswap (CFMM x·y·(x² + y²) = k)', () => {
  const r = (a: bigint, b: bigint, fa = 1n, fb = 1n) => [
    { denom: 'a', amount: a, scalingFactor: fa },
    { denom: 'b', amount: b, scalingFactor: fb },
  ];
  test('a balanced pool trades near 1:1, minus the spread factor, always rounding against the trader', () => {
    const out = stableswapOutGivenIn(1_000_000n, 'a', 'b', r(1_000_000_000n, 1_000_000_000n), d('0.003'));
    assert.ok(out < 997_000n && out > 996_900n, `${out}`);
    const noFee = stableswapOutGivenIn(1_000_000n, 'a', 'b', r(1_000_000_000n, 1_000_000_000n), 0n);
    assert.ok(noFee < 1_000_000n && noFee > 999_990n, `${noFee}`);
  });
  test('scaling factors: 6-decimal vs 18-decimal assets trade at the scaled ratio', () => {
    const out = stableswapOutGivenIn(1_000_000n, 'a', 'b', r(1_000_000_000_000n, 10n ** 24n, 1n, 10n ** 12n), 0n);
    assert.ok(out > 999_990n * 10n ** 12n && out < 10n ** 18n, `${out}`);
  });
  test('an input as large as the reserve is refused', () => {
    assert.throws(
      () => stableswapOutGivenIn(2_000_000_000n, 'a', 'b', r(1_000_000_000n, 1_000_000_000n), 0n),
      (e: unknown) => e instanceof SwapMathError && e.reason === 'too-large',
    );
  });
  test('a three-asset pool uses the other reserves as w', () => {
    const two = stableswapOutGivenIn(1_000_000n, 'a', 'b', r(1_000_000_000n, 1_000_000_000n), 0n);
    const three = stableswapOutGivenIn(
      1_000_000n,
      'a',
      'b',
      [...r(1_000_000_000n, 1_000_000_000n), { denom: 'c', amount: 1_000_000_000n, scalingFactor: 1n }],
      0n,
    );
    assert.ok(three > 0n && three !== two);
  });
});
