// Turns the request body (already shape-checked by the route schema) into a validated request,
// or a 400 naming the field and the problem.
import { bech32 } from '@scure/base';
import { badRequest } from '../shared/errors.ts';
import { parseAddress } from '../shared/addresses.ts';
import {
  EVM_CHAIN_ID,
  PLATFORM_CHAIN_ID,
  checkChainId,
  checkDenom,
  isPlatformChain,
  parseSlippage,
  parseTokenIn,
  type Coin,
} from './denoms.ts';
import type { Affiliate } from './messages.ts';

export interface EstimateBody {
  tokenIn: string;
  tokenInChainId?: string;
  tokenOutDenom: string;
  tokenOutChainId?: string;
  chainIdsToAddresses: Record<string, string>;
  chainIdsToAffiliates?: Record<string, { affiliates: Array<{ address: string; basis_points_fee: string }> }>;
  slippageTolerancePercent: string | number;
  forcefulRecheckCompliance?: boolean;
  isLocalOnly?: boolean;
}

export interface EstimateRequest {
  tokenIn: Coin;
  tokenInChainId: string;
  tokenOutDenom: string;
  tokenOutChainId: string;
  /** Canonical native address on the platform chain. */
  platformAddress: string;
  addressBytes: Uint8Array;
  /** Checksummed address for chain `1`, when given. */
  evmAddress: string | null;
  /** Validated affiliates per chain id. */
  affiliates: Map<string, Affiliate[]>;
  /** 18-decimal raw percent. */
  slippage: bigint;
  /** The slippage as a plain decimal string (for the routing API). */
  slippagePercent: string;
  forceCompliance: boolean;
  localOnly: boolean;
}

const MAX_AFFILIATES = 20;

function validAffiliateAddress(chainId: string, address: string, field: string): string {
  if (isPlatformChain(chainId)) return parseAddress(address, field).platformAddress;
  if (/^0x[0-9a-fA-F]{40}$/.test(address)) return parseAddress(address, field).evmAddress;
  try {
    if (address.length <= 90 && bech32.decode(address as `${string}1${string}`)) return address;
  } catch {
    // falls through to the error
  }
  throw badRequest(
    `Invalid address in ${field}: ${JSON.stringify(address.slice(0, 100))} is neither a 0x address nor a bech32 address`,
  );
}

function formatPercent(raw: bigint): string {
  const whole = raw / 10n ** 18n;
  const frac = (raw % 10n ** 18n).toString().padStart(18, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}

export function validateEstimate(body: EstimateBody): EstimateRequest {
  const tokenInChainId = checkChainId(body.tokenInChainId ?? PLATFORM_CHAIN_ID, 'tokenInChainId');
  const tokenOutChainId = checkChainId(body.tokenOutChainId ?? PLATFORM_CHAIN_ID, 'tokenOutChainId');
  const tokenIn = parseTokenIn(body.tokenIn, tokenInChainId);
  const tokenOutDenom = checkDenom(body.tokenOutDenom, 'tokenOutDenom', tokenOutChainId);
  if (tokenIn.denom === tokenOutDenom && tokenInChainId === tokenOutChainId) {
    throw badRequest(
      `tokenIn and tokenOutDenom are the same denom (${tokenOutDenom} on ${tokenOutChainId}): there is nothing to swap`,
    );
  }

  let platformAddress: string | null = null;
  let addressBytes: Uint8Array | null = null;
  let evmAddress: string | null = null;
  for (const [chainId, address] of Object.entries(body.chainIdsToAddresses)) {
    const field = `chainIdsToAddresses["${chainId}"]`;
    if (chainId === PLATFORM_CHAIN_ID) {
      const parsed = parseAddress(address, field);
      platformAddress = parsed.platformAddress;
      addressBytes = parsed.bytes;
    } else if (chainId === EVM_CHAIN_ID) {
      if (!/^0x[0-9a-fA-F]{40}$/.test(address))
        throw badRequest(`${field} must be an EVM address (0x followed by 40 hex characters)`);
      evmAddress = parseAddress(address, field).evmAddress;
    } else {
      throw badRequest(
        `chainIdsToAddresses has unsupported chain id "${chainId.slice(0, 60)}": only "${PLATFORM_CHAIN_ID}" and "${EVM_CHAIN_ID}" are accepted; addresses on other chains are derived from them`,
      );
    }
  }
  if (!platformAddress || !addressBytes)
    throw badRequest(`chainIdsToAddresses must include "${PLATFORM_CHAIN_ID}" (the sender's native address)`);

  const affiliates = new Map<string, Affiliate[]>();
  for (const [chainId, entry] of Object.entries(body.chainIdsToAffiliates ?? {})) {
    checkChainId(chainId, 'chainIdsToAffiliates key');
    const list = entry.affiliates;
    if (list.length > MAX_AFFILIATES)
      throw badRequest(`chainIdsToAffiliates["${chainId}"].affiliates has more than ${MAX_AFFILIATES} entries`);
    let sum = 0;
    const out: Affiliate[] = [];
    list.forEach((a, i) => {
      const field = `chainIdsToAffiliates["${chainId}"].affiliates[${i}]`;
      if (!/^\d{1,5}$/.test(a.basis_points_fee) || Number(a.basis_points_fee) > 10_000) {
        throw badRequest(
          `${field}.basis_points_fee must be an integer string from 0 to 10000 (got ${JSON.stringify(a.basis_points_fee.slice(0, 30))})`,
        );
      }
      sum += Number(a.basis_points_fee);
      out.push({
        address: validAffiliateAddress(chainId, a.address, `${field}.address`),
        basis_points_fee: String(Number(a.basis_points_fee)),
      });
    });
    if (sum > 10_000)
      throw badRequest(
        `chainIdsToAffiliates["${chainId}"] basis points add up to ${sum}; the total must not exceed 10000`,
      );
    affiliates.set(chainId, out);
  }

  const slippage = parseSlippage(body.slippageTolerancePercent);
  const localOnly = body.isLocalOnly === true;
  if (localOnly && (!isPlatformChain(tokenInChainId) || !isPlatformChain(tokenOutChainId))) {
    throw badRequest(
      `isLocalOnly uses only the platform's own pools, so tokenInChainId and tokenOutChainId must both be ${PLATFORM_CHAIN_ID}`,
    );
  }
  return {
    tokenIn,
    tokenInChainId,
    tokenOutDenom,
    tokenOutChainId,
    platformAddress,
    addressBytes,
    evmAddress,
    affiliates,
    slippage,
    slippagePercent: formatPercent(slippage),
    forceCompliance: body.forcefulRecheckCompliance === true,
    localOnly,
  };
}
