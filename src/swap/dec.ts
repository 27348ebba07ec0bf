// Fixed-point decimals exactly as the chain computes them, on bigint raw values.
//
// `Dec` (cosmossdk.io/math LegacyDec, osmomath.Dec): value = raw / 10^18.
// `BigDec` (osmomath.BigDec, used by stableswap): value = raw / 10^36.
// Every operation reproduces the chain's rounding bit for bit: multiplication and division chop
// the extra digits with banker's rounding (half to even), `…Trunc` variants floor toward zero,
// integer conversions truncate. A float anywhere here would change the last unit of an amount.

export const ONE = 10n ** 18n;
export const ONE36 = 10n ** 36n;
const HALF = ONE / 2n;
const ONE_SQUARED = ONE * ONE;
const HALF36 = ONE36 / 2n;

/** LegacyDec panics past 256 + 59 bits; the chain then fails the transaction. */
const MAX_DEC = 1n << 315n;

export class DecError extends Error {}

function checkRange(x: bigint): bigint {
  if (x >= MAX_DEC || -x >= MAX_DEC) throw new DecError('decimal overflow');
  return x;
}

/** Drops `prec` digits with banker's rounding (chopPrecisionAndRound). */
function chop(x: bigint, prec: bigint, half: bigint): bigint {
  if (x < 0n) return -chop(-x, prec, half);
  const q = x / prec;
  const r = x - q * prec;
  if (r < half) return q;
  if (r > half) return q + 1n;
  return (q & 1n) === 0n ? q : q + 1n;
}

// ---- LegacyDec (18 decimals) ----

export const dec = (integer: bigint): bigint => integer * ONE;
export const mul = (a: bigint, b: bigint): bigint => checkRange(chop(a * b, ONE, HALF));
export const mulTrunc = (a: bigint, b: bigint): bigint => checkRange((a * b) / ONE);
export function quo(a: bigint, b: bigint): bigint {
  if (b === 0n) throw new DecError('division by zero');
  return checkRange(chop((a * ONE_SQUARED) / b, ONE, HALF));
}
export function quoTrunc(a: bigint, b: bigint): bigint {
  if (b === 0n) throw new DecError('division by zero');
  return checkRange((a * ONE_SQUARED) / b / ONE);
}
/** TruncateInt: toward zero. */
export const truncateInt = (d: bigint): bigint => d / ONE;
/** Ceil (for any sign), as an integer. */
export function ceilInt(d: bigint): bigint {
  const q = d / ONE;
  return d > 0n && q * ONE !== d ? q + 1n : q;
}

/** Integer power by square-and-multiply, in the chain's multiplication order (Power). */
export function power(d: bigint, n: bigint): bigint {
  if (n === 0n) return ONE;
  let tmp = ONE;
  let base = d;
  for (let i = n; i > 1n; ) {
    if (i % 2n !== 0n) tmp = mul(tmp, base);
    i /= 2n;
    base = mul(base, base);
  }
  return mul(base, tmp);
}

/** Newton square root from guess 1, at most 300 steps, halving by arithmetic shift (ApproxSqrt). */
export function approxSqrt(d: bigint): bigint {
  if (d < 0n) return -approxSqrt(-d);
  if (d === 0n || d === ONE) return d;
  let guess = ONE;
  let delta = ONE;
  for (let iter = 0; (delta < 0n ? -delta : delta) > 1n && iter < 300; iter++) {
    const prev = guess === 0n ? 1n : guess;
    delta = quo(d, prev) - guess;
    delta >>= 1n;
    guess += delta;
  }
  return guess;
}

const POW_PRECISION = 10n ** 10n; // 1e-8
const POW_ITERATION_LIMIT = 150_000;

/**
 * base^exp for 0 <= exp < 1: the binomial series of (1 + x)^exp with x = |base - 1|, summed
 * until a term drops below 1e-8 (that last term is still added), exactly like PowApprox.
 */
export function powApprox(base: bigint, exp: bigint): bigint {
  if (base <= 0n) throw new DecError('base must be greater than 0');
  if (exp === 0n) return ONE;
  if (exp === HALF) return approxSqrt(base);
  const xneg = base < ONE;
  const x = xneg ? ONE - base : base - ONE;
  let term = ONE;
  let sum = ONE;
  let negative = false;
  let bigK = 0n;
  for (let i = 1; term >= POW_PRECISION; i++) {
    const cneg = exp < bigK;
    const c = cneg ? bigK - exp : exp - bigK;
    bigK = BigInt(i) * ONE;
    term = quo(mul(mul(term, c), x), bigK);
    if (term === 0n) break;
    if (xneg) negative = !negative;
    if (cneg) negative = !negative;
    sum = negative ? sum - term : sum + term;
    if (i === POW_ITERATION_LIMIT) throw new DecError('power approximation did not converge');
  }
  return sum;
}

/** base^exp for 0 < base < 2 (osmomath.Pow): integer part by Power, fraction by PowApprox. */
export function pow(base: bigint, exp: bigint): bigint {
  if (base <= 0n) throw new DecError('base must be greater than 0');
  if (base >= 2n * ONE) throw new DecError('base must be lesser than two');
  const integer = exp / ONE;
  const fractional = exp - integer * ONE;
  const integerPow = power(base, integer);
  if (fractional === 0n) return integerPow;
  return mul(integerPow, powApprox(base, fractional));
}

/** LegacyNewDecFromStr: `123`, `0.5`, `1.000000000000000000`; at most 18 decimals. Returns raw or null. */
export function parseDec(s: string): bigint | null {
  const m = /^(-?)(\d+)(?:\.(\d{1,18}))?$/.exec(s);
  if (!m) return null;
  const raw = BigInt(m[2]) * ONE + BigInt((m[3] ?? '').padEnd(18, '0') || '0');
  return m[1] ? -raw : raw;
}

/** The chain's string form of a Dec (always 18 decimals). */
export function formatDec(raw: bigint): string {
  const neg = raw < 0n;
  const abs = neg ? -raw : raw;
  const s = `${abs / ONE}.${(abs % ONE).toString().padStart(18, '0')}`;
  return neg ? '-' + s : s;
}

// ---- BigDec (36 decimals) ----

export const dec36 = (integer: bigint): bigint => integer * ONE36;
/** A Dec widened to a BigDec (exact). */
export const decToDec36 = (d: bigint): bigint => d * ONE;
export const mul36 = (a: bigint, b: bigint): bigint => chop(a * b, ONE36, HALF36);
export function quo36(a: bigint, b: bigint): bigint {
  if (b === 0n) throw new DecError('division by zero');
  return chop((a * ONE36 * ONE36) / b, ONE36, HALF36);
}
export function ceil36(d: bigint): bigint {
  const q = d / ONE36;
  return (d > 0n && q * ONE36 !== d ? q + 1n : q) * ONE36;
}
/** BigDec.Dec(): truncates to 18 decimals. */
export const dec36ToDec = (d: bigint): bigint => d / ONE;
