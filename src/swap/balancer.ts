// Balancer (weighted) pool math: out-given-in exactly as the chain's CalcOutAmtGivenIn.
import { ONE, dec, mul, pow, quo, truncateInt } from './dec.ts';

/** y = Bi / (Bi + Ain) below 0.01 (input ≥ 99× the reserve) is refused when the series would run. */
const MIN_SERIES_BASE = ONE / 100n;

export class SwapMathError extends Error {
  readonly reason: 'zero-output' | 'too-large' | 'invalid';
  constructor(reason: 'zero-output' | 'too-large' | 'invalid', message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * Token out for `amountIn` (already net of the taker fee), given the input and output reserves and
 * weights and the pool's spread factor (18-decimal raw).
 *   Ain = amountIn × (1 − s);  y = Bi / (Bi + Ain);  out = Bo × (1 − y^(Wi/Wo)), truncated.
 */
export function balancerOutGivenIn(
  amountIn: bigint,
  balanceIn: bigint,
  weightIn: bigint,
  balanceOut: bigint,
  weightOut: bigint,
  spreadFactor: bigint,
): bigint {
  if (weightIn <= 0n || weightOut <= 0n) throw new SwapMathError('invalid', 'pool has a zero weight');
  if (balanceIn <= 0n || balanceOut <= 0n) throw new SwapMathError('invalid', 'pool has an empty reserve');
  const amountInAfterFee = mul(dec(amountIn), ONE - spreadFactor);
  const balanceInDec = dec(balanceIn);
  const postSwapIn = amountInAfterFee + balanceInDec;
  const weightRatio = quo(dec(weightIn), dec(weightOut));
  const y = quo(balanceInDec, postSwapIn);
  const fraction = weightRatio % ONE;
  if (y < MIN_SERIES_BASE && fraction !== 0n && fraction !== ONE / 2n) {
    // The power series converges ever more slowly as y → 0 (thousands up to 150,000 steps, then
    // the chain itself fails); such an input is ~100× the reserve, a ≥99% price impact.
    throw new SwapMathError('too-large', 'input is more than 99 times the pool reserve');
  }
  let yToWeightRatio: bigint;
  try {
    yToWeightRatio = pow(y, weightRatio);
  } catch {
    // y rounds to 0 when the input dwarfs the reserve; the chain panics and the swap fails
    throw new SwapMathError('too-large', 'input is too large for the pool');
  }
  const out = truncateInt(mul(ONE - yToWeightRatio, dec(balanceOut)));
  if (out <= 0n) throw new SwapMathError('zero-output', 'calculated token out amount must be positive');
  // the chain cannot set a pool balance to zero: a swap taking the whole reserve fails
  if (out >= balanceOut) throw new SwapMathError('too-large', 'the swap would empty the pool');
  return out;
}

/** Spot price: units of `out` per unit of `in`, fee-free ((Bo/Wo) / (Bi/Wi)), as an 18-decimal raw. */
export function balancerSpotPrice(balanceIn: bigint, weightIn: bigint, balanceOut: bigint, weightOut: bigint): bigint {
  const invWeightRatio = quo(dec(weightIn), dec(weightOut));
  const supplyRatio = quo(dec(balanceOut), dec(balanceIn));
  return mul(supplyRatio, invWeightRatio);
}
