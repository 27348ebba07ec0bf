// POST /api/v0/swap/estimate, the domain logic: native swaps over the platform pools, direct IBC
// transfers and swap-then-transfer to registry chains built by the service, everything else
// through the Skip Go–compatible routing API when one is configured.
import { badRequest } from '../shared/errors.ts';
import { PLATFORM_CHAIN_ID, isPlatformChain, minAmountOut } from './denoms.ts';
import { deriveAddress, inboundDenom, outboundDenom, type IbcChain } from './ibc.ts';
import { isTokenizationDenom } from './compliance.ts';
import {
  swapExactAmountInMsg,
  swapWithIbcTransferMsg,
  transferMsg,
  type Affiliate,
  type SkipGoMsg,
} from './messages.ts';
import { reserveOf } from './pools.ts';
import { searchBest } from './ranked.ts';
import { priceImpact, type RouteQuote } from './router.ts';
import type { SwapService } from './service.ts';
import { skipEstimate, type AssetStep } from './skip.ts';
import type { EstimateRequest } from './validate.ts';

/** One block on the platform chain. */
export const BLOCK_SECONDS = 6;
/** ICS-20 timeout of the transfers the service builds. */
export const IBC_TIMEOUT_MS = 5 * 60_000;

export interface Estimate {
  tokenOutAmount: string;
  tokenInAmount: string;
  skipGoMsgs: SkipGoMsg[];
  assetPath: AssetStep[];
  doesSwap: boolean;
  lowLiquidityWarning?: boolean;
  complianceNotPassedWarning?: boolean;
  complianceErrorMessage?: string;
  estimatedTime?: number;
}

export interface EstimateResult {
  success: true;
  estimate: Estimate;
}

interface NativeSwap {
  quote: RouteQuote;
  minOut: bigint;
  affiliates: Affiliate[];
  /** Σ floor(minOut × bps / 10000): what the chain pays the affiliates out of the output (minimumAndFees). */
  affiliateFees: bigint;
  lowLiquidity: boolean;
  compliance: { warning?: boolean; message?: string };
}

function noPoolsHint(svc: SwapService): string {
  if (svc.state.pools.length > 0) return '';
  return svc.source === 'chain'
    ? ' (no pools could be read from CHAIN_REST_URL yet)'
    : ' (no pools are loaded: set CHAIN_REST_URL or run `platform import-pools FILE`)';
}

/** Best native route, exact amounts, minimum, affiliates, warnings. */
async function nativeSwap(svc: SwapService, req: EstimateRequest, tokenOutDenom: string): Promise<NativeSwap> {
  const state = svc.state;
  const { denom, amount } = req.tokenIn;
  const best = searchBest(state, denom, tokenOutDenom, amount, svc.routes);
  if (!best.ok) {
    if (best.reason === 'no-route')
      throw badRequest(`No route from ${denom} to ${tokenOutDenom} through the platform pools${noPoolsHint(svc)}`);
    if (best.reason === 'zero-output')
      throw badRequest(
        `Amount too small: ${amount}${denom} yields no ${tokenOutDenom} on any route after fees and rounding`,
      );
    if (best.reason === 'too-large')
      throw badRequest(`Amount too large: ${amount}${denom} exceeds what the pools on every route can take`);
    throw badRequest(`No route from ${denom} to ${tokenOutDenom} can be quoted with the current pool state`);
  }
  const quote = best.quote;
  const affiliates = req.affiliates.get(PLATFORM_CHAIN_ID) ?? [];
  const { minOut, affiliateFees } = minimumAndFees(quote.amountOut, req.slippage, affiliates);

  const lowLiquidity = lowLiquidityOf(svc, quote);
  const denoms = [denom, ...quote.hops.map((h) => h.tokenOutDenom)];
  const check = await svc.compliance.check({
    sender: req.platformAddress,
    poolIds: quote.hops.map((h) => h.pool.id),
    denoms,
    tokenInDenom: denom,
    tokenInAmount: amount,
    force: req.forceCompliance,
  });
  const compliance = !check.evaluated
    ? {}
    : check.passed
      ? { warning: false }
      : { warning: true, message: check.message };
  return { quote, minOut, affiliates, affiliateFees, lowLiquidity, compliance };
}

/**
 * The message's minimum and the affiliates' fees, from one gross output. The chain checks the
 * swap's gross output against `token_out_min_amount`, then pays each affiliate
 * floor(minimum × bps / 10000) out of it; the user receives the rest (the estimate). Slippage is
 * applied to what the user receives, so the minimum never exceeds the estimate: first the net
 * amount at the plain minimum, then the minimum of that net. A smaller minimum only lowers the fees,
 * so the estimate (gross − fees of the final minimum) stays at or above it.
 */
export function minimumAndFees(
  grossOut: bigint,
  slippage: bigint,
  affiliates: Affiliate[],
): { minOut: bigint; affiliateFees: bigint } {
  const fees = (min: bigint) => affiliates.reduce((sum, a) => sum + (min * BigInt(a.basis_points_fee)) / 10_000n, 0n);
  if (affiliates.length === 0) return { minOut: minAmountOut(grossOut, slippage), affiliateFees: 0n };
  const netAtMinimum = grossOut - fees(minAmountOut(grossOut, slippage));
  const minOut = minAmountOut(netAtMinimum, slippage);
  return { minOut, affiliateFees: fees(minOut) };
}

function lowLiquidityOf(svc: SwapService, quote: RouteQuote): boolean {
  const { priceImpactWarningPercent, minPoolReserve } = svc.settings;
  if (priceImpact(quote) * 100 > priceImpactWarningPercent) return true;
  return quote.hops.some(
    (h) => reserveOf(h.pool, h.tokenInDenom) < minPoolReserve || reserveOf(h.pool, h.tokenOutDenom) < minPoolReserve,
  );
}

function swapPath(req: EstimateRequest, quote: RouteQuote): AssetStep[] {
  return [
    { denom: req.tokenIn.denom, chainId: PLATFORM_CHAIN_ID, how: 'genesis' },
    ...quote.hops.map((h) => ({ denom: h.tokenOutDenom, chainId: PLATFORM_CHAIN_ID, how: 'swap' as const })),
  ];
}

function warnings(
  swap: NativeSwap,
): Pick<Estimate, 'lowLiquidityWarning' | 'complianceNotPassedWarning' | 'complianceErrorMessage'> {
  return {
    lowLiquidityWarning: swap.lowLiquidity,
    ...(swap.compliance.warning !== undefined ? { complianceNotPassedWarning: swap.compliance.warning } : {}),
    ...(swap.compliance.message ? { complianceErrorMessage: swap.compliance.message } : {}),
  };
}

async function estimateNative(svc: SwapService, req: EstimateRequest): Promise<Estimate> {
  const swap = await nativeSwap(svc, req, req.tokenOutDenom);
  return {
    tokenOutAmount: (swap.quote.amountOut - swap.affiliateFees).toString(),
    tokenInAmount: req.tokenIn.amount.toString(),
    skipGoMsgs: [
      swapExactAmountInMsg(
        PLATFORM_CHAIN_ID,
        req.platformAddress,
        req.tokenIn.denom,
        swap.quote,
        swap.minOut,
        swap.affiliates,
      ),
    ],
    assetPath: swapPath(req, swap.quote),
    doesSwap: true,
    ...warnings(swap),
    estimatedTime: BLOCK_SECONDS,
  };
}

const timeoutNs = (svc: SwapService) => BigInt(svc.now() + IBC_TIMEOUT_MS) * 1_000_000n;

/** platform-1 → registry chain: a plain transfer, or a swap whose output leaves in the same transaction. */
async function estimateOutbound(svc: SwapService, req: EstimateRequest, chain: IbcChain): Promise<Estimate | null> {
  const receiver = deriveAddress(req.addressBytes, chain.bech32Prefix);
  const { denom, amount } = req.tokenIn;
  if (!isTokenizationDenom(denom) && outboundDenom(svc.registry, chain, denom) === req.tokenOutDenom) {
    return {
      tokenOutAmount: amount.toString(),
      tokenInAmount: amount.toString(),
      skipGoMsgs: [
        transferMsg({
          chainId: PLATFORM_CHAIN_ID,
          destChainId: chain.chainId,
          sourceChannel: chain.channel,
          denom,
          amount,
          sender: req.platformAddress,
          receiver,
          timeoutTimestampNs: timeoutNs(svc),
        }),
      ],
      assetPath: [
        { denom, chainId: PLATFORM_CHAIN_ID, how: 'genesis' },
        { denom: req.tokenOutDenom, chainId: chain.chainId, how: 'transfer' },
      ],
      doesSwap: false,
      estimatedTime: BLOCK_SECONDS + chain.estimatedTransferSeconds,
    };
  }
  const intermediate = svc.platformDenomArrivingAs(chain.chainId, req.tokenOutDenom);
  // tokenization denoms are not bank coins and cannot leave over ICS-20
  if (!intermediate || intermediate === denom || isTokenizationDenom(intermediate)) return null;
  const swap = await nativeSwap(svc, req, intermediate);
  return {
    tokenOutAmount: (swap.quote.amountOut - swap.affiliateFees).toString(),
    tokenInAmount: amount.toString(),
    skipGoMsgs: [
      swapWithIbcTransferMsg(
        PLATFORM_CHAIN_ID,
        chain.chainId,
        req.platformAddress,
        denom,
        swap.quote,
        swap.minOut,
        { sourceChannel: chain.channel, receiver, timeoutTimestampNs: timeoutNs(svc) },
        swap.affiliates,
      ),
    ],
    assetPath: [...swapPath(req, swap.quote), { denom: req.tokenOutDenom, chainId: chain.chainId, how: 'transfer' }],
    doesSwap: true,
    ...warnings(swap),
    estimatedTime: BLOCK_SECONDS + chain.estimatedTransferSeconds,
  };
}

/** registry chain → platform-1 without a swap: one MsgTransfer signed on the counterparty chain. */
function estimateInbound(svc: SwapService, req: EstimateRequest, chain: IbcChain): Estimate | null {
  const platformDenoms = new Set([...svc.state.byDenom.keys(), ...svc.registry.traces.keys(), req.tokenOutDenom]);
  const arrives = inboundDenom(svc.registry, chain, req.tokenIn.denom, platformDenoms);
  if (arrives !== req.tokenOutDenom) return null;
  const sender = deriveAddress(req.addressBytes, chain.bech32Prefix);
  return {
    tokenOutAmount: req.tokenIn.amount.toString(),
    tokenInAmount: req.tokenIn.amount.toString(),
    skipGoMsgs: [
      transferMsg({
        chainId: chain.chainId,
        destChainId: PLATFORM_CHAIN_ID,
        sourceChannel: chain.counterpartyChannel,
        denom: req.tokenIn.denom,
        amount: req.tokenIn.amount,
        sender,
        receiver: req.platformAddress,
        timeoutTimestampNs: timeoutNs(svc),
      }),
    ],
    assetPath: [
      { denom: req.tokenIn.denom, chainId: chain.chainId, how: 'genesis' },
      { denom: req.tokenOutDenom, chainId: PLATFORM_CHAIN_ID, how: 'transfer' },
    ],
    doesSwap: false,
    estimatedTime: chain.estimatedTransferSeconds,
  };
}

async function estimateViaSkip(svc: SwapService, req: EstimateRequest): Promise<Estimate> {
  const url = svc.skipApiUrl;
  if (!url) {
    throw badRequest(
      `No route from ${req.tokenIn.denom} on ${req.tokenInChainId} to ${req.tokenOutDenom} on ${req.tokenOutChainId}: the service builds swaps on ${PLATFORM_CHAIN_ID} and direct IBC transfers to the chains in its registry; this route needs a routing API and none is configured (SKIP_API_URL is not set)`,
    );
  }
  const addresses: Record<string, string> = { [PLATFORM_CHAIN_ID]: req.platformAddress };
  for (const c of svc.registry.chains.values()) addresses[c.chainId] = deriveAddress(req.addressBytes, c.bech32Prefix);
  if (req.evmAddress) addresses['1'] = req.evmAddress;
  const affiliates: Record<string, { affiliates: Affiliate[] }> = {};
  for (const [chainId, list] of req.affiliates) affiliates[chainId] = { affiliates: list };
  const r = await skipEstimate(
    url,
    {
      sourceDenom: req.tokenIn.denom,
      sourceChainId: req.tokenInChainId,
      destDenom: req.tokenOutDenom,
      destChainId: req.tokenOutChainId,
      amountIn: req.tokenIn.amount,
      chainIdsToAddresses: addresses,
      slippagePercent: req.slippagePercent,
      chainIdsToAffiliates: affiliates,
    },
    svc.settings.upstreamTimeoutMs,
  );
  const impactHigh =
    r.priceImpactPercent !== undefined && Math.abs(r.priceImpactPercent) > svc.settings.priceImpactWarningPercent;
  return {
    tokenOutAmount: r.tokenOutAmount,
    tokenInAmount: req.tokenIn.amount.toString(),
    skipGoMsgs: r.skipGoMsgs,
    assetPath: r.assetPath,
    doesSwap: r.doesSwap,
    lowLiquidityWarning: r.badPriceWarning || impactHigh,
    ...(r.estimatedTime !== undefined ? { estimatedTime: r.estimatedTime } : {}),
  };
}

export async function estimateSwap(svc: SwapService, req: EstimateRequest): Promise<EstimateResult> {
  const inPlatform = isPlatformChain(req.tokenInChainId);
  const outPlatform = isPlatformChain(req.tokenOutChainId);
  let estimate: Estimate | null = null;
  if (inPlatform && outPlatform) {
    estimate = await estimateNative(svc, req);
  } else if (inPlatform) {
    const chain = svc.registry.chains.get(req.tokenOutChainId);
    if (chain) estimate = await estimateOutbound(svc, req, chain);
  } else if (outPlatform) {
    const chain = svc.registry.chains.get(req.tokenInChainId);
    if (chain) estimate = estimateInbound(svc, req, chain);
  }
  if (!estimate) estimate = await estimateViaSkip(svc, req);
  return { success: true, estimate };
}
