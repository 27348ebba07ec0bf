// Parsing and validation of the request's building blocks: coin strings, denoms, chain ids,
// slippage. Every failure is a 400 that names the field and says what is wrong.
import { badRequest } from '../shared/errors.ts';
import { COSMOS_DENOM } from './pools.ts';
import { ONE } from './dec.ts';

export const PLATFORM_CHAIN_ID = 'platform-1';
export const EVM_CHAIN_ID = '1';

const MAX_AMOUNT = (1n << 256n) - 1n;
const CHAIN_ID = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,49}$/;

export interface Coin {
  denom: string;
  amount: bigint;
}

/** Why a denom is malformed, or null when it is fine. `chainId` decides EVM token forms. */
export function denomProblem(d: string, chainId: string): string | null {
  if (/^\d+$/.test(chainId)) {
    // EVM chains: an ERC-20 contract or the chain's native-asset name (Skip's convention)
    if (/^0x[0-9a-fA-F]{40}$/.test(d) || /^[a-z0-9-]{1,64}-native$/.test(d)) return null;
    return 'must be an ERC-20 contract address (0x + 40 hex) or a <chain>-native asset on an EVM chain';
  }
  if (d.length === 0) return 'must not be empty';
  if (d.startsWith('ibc/')) {
    if (/^ibc\/[0-9A-F]{64}$/.test(d)) return null;
    return 'must be ibc/ followed by 64 uppercase hex characters';
  }
  if (d.startsWith('badges:') || d.startsWith('badgeslp:')) {
    if (/^(badges|badgeslp):[1-9]\d{0,19}:[a-zA-Z0-9._{}-]{1,100}$/.test(d)) return null;
    return `must be ${d.startsWith('badgeslp:') ? 'badgeslp' : 'badges'}:<collectionId>:<name> with a positive numeric collection id`;
  }
  if (d.startsWith('factory/')) {
    if (/^factory\/[a-z0-9]{1,83}1[02-9ac-hj-np-z]{6,}\/[a-zA-Z0-9/:._-]{1,44}$/.test(d)) return null;
    return 'must be factory/<creator bech32 address>/<subdenom>';
  }
  if (!COSMOS_DENOM.test(d)) return 'must start with a letter and hold 3 to 128 letters, digits or / : . _ -';
  return null;
}

export function parseAmount(s: string, field: string): bigint {
  if (!/^\d+$/.test(s)) throw badRequest(`${field} amount must be a positive integer in base units (got "${s}")`);
  if (s.length > 78 || BigInt(s) > MAX_AMOUNT)
    throw badRequest(`${field} amount is larger than the chain's 256-bit integer limit`);
  const n = BigInt(s);
  if (n === 0n) throw badRequest(`${field} amount must be positive (got 0)`);
  return n;
}

/** `amount:<n>,denom:<denom>` or the Cosmos coin form `<n><denom>`. */
export function parseTokenIn(s: string, chainId: string): Coin {
  const field = 'tokenIn';
  let amount: string;
  let denom: string;
  const kv = /^amount:([^,]*),denom:(.*)$/.exec(s);
  if (kv) {
    [, amount, denom] = kv;
    if (amount === '') throw badRequest('tokenIn amount is missing in "amount:<n>,denom:<denom>"');
    if (denom === '') throw badRequest('tokenIn denom is missing in "amount:<n>,denom:<denom>"');
  } else {
    if (/^-?\d*\.\d/.test(s) || s.startsWith('-'))
      throw badRequest(`tokenIn amount must be a positive integer in base units (got "${s.slice(0, 100)}")`);
    if (/^\d+$/.test(s))
      throw badRequest(
        `tokenIn has no denom: expected "<amount><denom>" or "amount:<n>,denom:<denom>" (got "${s.slice(0, 100)}")`,
      );
    // the denom starts with a letter (Cosmos), or is an ERC-20 address on an EVM chain
    const coin = (isEvmChain(chainId) ? /^(\d+)(0x[0-9a-fA-F]{40})$/.exec(s) : null) ?? /^(\d+)([a-zA-Z]\S*)$/.exec(s);
    if (!coin) {
      throw badRequest(
        `tokenIn must be "<amount><denom>" (e.g. "1000000ubadge") or "amount:<n>,denom:<denom>" (got "${s.slice(0, 200)}")`,
      );
    }
    [, amount, denom] = coin;
  }
  const value = parseAmount(amount, field);
  const problem = denomProblem(denom, chainId);
  if (problem) throw badRequest(`tokenIn denom "${denom.slice(0, 200)}" ${problem}`);
  return { denom, amount: value };
}

export function checkDenom(d: string, field: string, chainId: string): string {
  const problem = denomProblem(d, chainId);
  if (problem) throw badRequest(`${field} "${d.slice(0, 200)}" ${problem}`);
  return d;
}

export function checkChainId(id: string, field: string): string {
  if (!CHAIN_ID.test(id))
    throw badRequest(
      `${field} "${id.slice(0, 100)}" is not a valid chain id (letters, digits, . _ -, at most 50 characters)`,
    );
  return id;
}

export const isPlatformChain = (id: string): boolean => id === PLATFORM_CHAIN_ID;
export const isEvmChain = (id: string): boolean => /^\d+$/.test(id);

/** Expands a JS number's shortest decimal form ("1e-7" → "0.0000001"). */
function numberToDecimal(n: number): string {
  const s = String(n);
  const m = /^(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const digits = m[1] + (m[2] ?? '');
  const point = m[1].length + Number(m[3]);
  if (point <= 0) return '0.' + '0'.repeat(-point) + digits;
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return digits.slice(0, point) + '.' + digits.slice(point);
}

/** Slippage in percent, 0 to 100, string or number; returned as an 18-decimal raw (exact). */
export function parseSlippage(v: unknown): bigint {
  const field = 'slippageTolerancePercent';
  let s: string;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw badRequest(`${field} must be a finite number from 0 to 100`);
    s = numberToDecimal(v);
  } else if (typeof v === 'string') {
    s = v; // a plain decimal, as documented: no surrounding whitespace
  } else {
    throw badRequest(`${field} must be a number or a numeric string from 0 to 100`);
  }
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(s);
  if (!m) throw badRequest(`${field} must be a number from 0 to 100 (got ${JSON.stringify(v)})`);
  if (m[1] === '-') throw badRequest(`${field} must be from 0 to 100 (got ${s})`);
  const frac = (m[3] ?? '').replace(/0+$/, '');
  if (frac.length > 18) throw badRequest(`${field} has more than 18 decimal places (got ${s})`);
  const raw = BigInt(m[2]) * ONE + BigInt(frac.padEnd(18, '0') || '0');
  if (raw > 100n * ONE) throw badRequest(`${field} must be from 0 to 100 (got ${s})`);
  return raw;
}

/**
 * token_out_min_amount = floor(out × (100 − slippage) / 100), in integers. The chain rejects a
 * non-positive minimum, so it never goes below 1 (only reachable at 100%).
 */
export function minAmountOut(out: bigint, slippageRaw: bigint): bigint {
  const hundred = 100n * ONE;
  const min = (out * (hundred - slippageRaw)) / hundred;
  return min < 1n ? 1n : min;
}
