// Stableswap (Solidly-style CFMM x·y·(x² + y² + w) = k) out-given-in, as the chain computes it in
// 36-decimal BigDec: reserves scaled down by the pool's scaling factors (rounded down), the spread
// factor taken from the input, the final output reserve found by binary search (rounded up, so the
// output is underestimated), then descaled and truncated.
import { SwapMathError } from './balancer.ts';
import { ONE, ONE36, ceil36, dec36, dec36ToDec, decToDec36, mul36, quo36, truncateInt } from './dec.ts';

const TWO36 = dec36(2n);
const MULTIPLICATIVE_TOLERANCE = 10n ** 24n; // 1e-12 as BigDec
const MAX_ITERATIONS = 256;

export interface StableswapReserve {
  denom: string;
  amount: bigint;
  scalingFactor: bigint;
}

/** x · (x² + y² + w) */
function cfmmNoVY(x: bigint, y: bigint, w: bigint): bigint {
  if (x <= 0n || y <= 0n || w < 0n) throw new SwapMathError('invalid', 'reserves must be positive');
  return mul36(x, mul36(x, x) + mul36(y, y) + w);
}
const cfmmNoV = (x: bigint, y: bigint, w: bigint): bigint => mul36(cfmmNoVY(x, y, w), y);

/** CompareBigDec with a 1e-12 multiplicative tolerance, rounding up. 0 = accept. */
function compare(expected: bigint, actual: bigint): number {
  if (expected > actual) return 1; // rounding up: actual must not be below expected
  const diff = expected > actual ? expected - actual : actual - expected;
  const sign = expected > actual ? 1 : expected < actual ? -1 : 0;
  const absE = expected < 0n ? -expected : expected;
  const absA = actual < 0n ? -actual : actual;
  const min = absE < absA ? absE : absA;
  if (min === 0n) return sign;
  if (quo36(diff, min) > MULTIPLICATIVE_TOLERANCE) return sign;
  return 0;
}

function solveCfmm(xReserve: bigint, yReserve: bigint, w: bigint, yIn: bigint): bigint {
  if (xReserve <= 0n || yReserve <= 0n) throw new SwapMathError('invalid', 'reserves must be positive');
  if ((yIn < 0n ? -yIn : yIn) >= yReserve) throw new SwapMathError('too-large', 'cannot input more than pool reserves');
  const yFinal = yReserve + yIn;
  let lower = xReserve;
  let upper = xReserve;
  const k0 = cfmmNoV(xReserve, yFinal, w);
  const k = cfmmNoV(xReserve, yReserve, w);
  if (k0 === 0n || k === 0n) throw new SwapMathError('invalid', 'k should never be zero');
  const kRatio = quo36(k0, k);
  if (kRatio < ONE36) upper = ceil36(quo36(xReserve, kRatio));
  else if (kRatio > ONE36) lower = 0n;

  // k_target = x0·y0·(x0² + y0² + w)/y_f − x0·(y_f² + w + x0²)
  const targetK =
    quo36(cfmmNoV(xReserve, yReserve, w), yFinal) -
    mul36(mul36(yFinal, yFinal) + w + mul36(xReserve, xReserve), xReserve);
  // k_iter(x_f) = −x_out³ + 3·x0·x_out² − (y_f² + w + 3·x0²)·x_out, with x_out = x0 − x_f (Horner)
  const quadratic = xReserve * 3n;
  const linear = -(mul36(quadratic, xReserve) + w + mul36(yFinal, yFinal));
  const iterK = (xf: bigint): bigint => {
    const xOut = xReserve - xf;
    let res = -xOut;
    res = mul36(res + quadratic, xOut);
    res = mul36(res + linear, xOut);
    return res;
  };

  for (let i = 0; i < MAX_ITERATIONS; i++) {
    const estimate = quo36(lower + upper, TWO36);
    const c = compare(targetK, iterK(estimate));
    if (c < 0) upper = estimate;
    else if (c > 0) lower = estimate;
    else {
      const xOut = xReserve - estimate;
      if ((xOut < 0n ? -xOut : xOut) >= xReserve)
        throw new SwapMathError('too-large', 'output would exceed the pool reserve');
      return xOut;
    }
  }
  throw new SwapMathError('invalid', 'stableswap solver did not converge');
}

/** The output as an 18-decimal Dec before truncation (calcOutAmtGivenIn). */
function stableswapOutDec(
  amountIn: bigint,
  denomIn: string,
  denomOut: string,
  reserves: StableswapReserve[],
  spreadFactor: bigint,
): bigint {
  const rin = reserves.find((r) => r.denom === denomIn);
  const rout = reserves.find((r) => r.denom === denomOut);
  if (!rin || !rout) throw new SwapMathError('invalid', 'denom not in pool');
  for (const r of reserves) if (r.scalingFactor <= 0n) throw new SwapMathError('invalid', 'invalid scaling factor');
  // scaled with QuoInt64: floor(amount × 10^36 / factor)
  const scale = (amount: bigint, factor: bigint) => (amount * ONE36) / factor;
  let w = 0n;
  for (const r of reserves) {
    if (r === rin || r === rout) continue;
    const s = scale(r.amount, r.scalingFactor);
    w += mul36(s, s);
  }
  const ammIn = mul36(scale(amountIn, rin.scalingFactor), decToDec36(ONE - spreadFactor));
  const cfmmOut = solveCfmm(scale(rout.amount, rout.scalingFactor), scale(rin.amount, rin.scalingFactor), w, ammIn);
  return dec36ToDec(cfmmOut * rout.scalingFactor);
}

/** Token out for `amountIn` (net of the taker fee) from `reserves` (all pool assets), spread factor as an 18-decimal raw. */
export function stableswapOutGivenIn(
  amountIn: bigint,
  denomIn: string,
  denomOut: string,
  reserves: StableswapReserve[],
  spreadFactor: bigint,
): bigint {
  const out = truncateInt(stableswapOutDec(amountIn, denomIn, denomOut, reserves, spreadFactor));
  if (out <= 0n) throw new SwapMathError('zero-output', 'calculated token out amount must be positive');
  return out;
}

/** Spot price approximated as the fee-free output for one base unit in, as the chain does. */
export function stableswapSpotPrice(denomIn: string, denomOut: string, reserves: StableswapReserve[]): bigint {
  try {
    return stableswapOutDec(1n, denomIn, denomOut, reserves, 0n);
  } catch {
    return 0n;
  }
}
