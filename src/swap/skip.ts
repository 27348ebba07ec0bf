// Fallback for routes the service cannot build itself: a Skip Go–compatible routing API
// (`POST {SKIP_API_URL}/v2/fungible/msgs_direct`). Its `msgs` become `skipGoMsgs`, its route's
// operations become `assetPath`, `estimated_route_duration_seconds` becomes `estimatedTime`.
import { ApiError, badRequest } from '../shared/errors.ts';
import { fetchJson, UpstreamError } from './http.ts';
import type { SkipGoMsg } from './messages.ts';

export interface AssetStep {
  denom: string;
  chainId: string;
  how: 'genesis' | 'swap' | 'transfer';
}

export interface SkipRequest {
  sourceDenom: string;
  sourceChainId: string;
  destDenom: string;
  destChainId: string;
  amountIn: bigint;
  chainIdsToAddresses: Record<string, string>;
  slippagePercent: string;
  chainIdsToAffiliates: Record<string, { affiliates: Array<{ address: string; basis_points_fee: string }> }>;
}

export interface SkipEstimate {
  tokenOutAmount: string;
  skipGoMsgs: SkipGoMsg[];
  assetPath: AssetStep[];
  doesSwap: boolean;
  estimatedTime?: number;
  /** Skip's own price impact in percent, when it reports one. */
  priceImpactPercent?: number;
  badPriceWarning: boolean;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function mapMsg(m: unknown): SkipGoMsg {
  if (!isObj(m)) throw new UpstreamError('routing API returned a malformed message');
  if (isObj(m.multi_chain_msg)) {
    const c = m.multi_chain_msg;
    if (
      typeof c.chain_id !== 'string' ||
      !Array.isArray(c.path) ||
      typeof c.msg !== 'string' ||
      typeof c.msg_type_url !== 'string'
    ) {
      throw new UpstreamError('routing API returned a malformed multi_chain_msg');
    }
    return {
      multi_chain_msg: { chain_id: c.chain_id, path: c.path.map(String), msg: c.msg, msg_type_url: c.msg_type_url },
    };
  }
  if (isObj(m.evm_tx)) {
    const e = m.evm_tx;
    const approvals = Array.isArray(e.required_erc20_approvals)
      ? e.required_erc20_approvals.filter(isObj).map((a) => ({
          token: String(a.token_contract ?? a.token ?? ''),
          spender: String(a.spender ?? ''),
          ...(a.amount !== undefined ? { amount: String(a.amount) } : {}),
        }))
      : undefined;
    return {
      evm_tx: {
        chain_id: String(e.chain_id ?? ''),
        to: String(e.to ?? ''),
        value: String(e.value ?? ''),
        data: String(e.data ?? ''),
        ...(approvals ? { required_erc20_approvals: approvals } : {}),
        signer_address: String(e.signer_address ?? ''),
      },
    };
  }
  // svm_tx and anything newer: the estimate route supports Cosmos and EVM transactions only
  throw badRequest(
    'The route found needs a transaction type other than Cosmos or EVM (for example Solana), which is not supported',
  );
}

/** assetPath from the route's operations: genesis, then one entry per transfer or swap. */
function mapAssetPath(route: Json, req: SkipRequest): { path: AssetStep[]; doesSwap: boolean } {
  const path: AssetStep[] = [{ denom: req.sourceDenom, chainId: req.sourceChainId, how: 'genesis' }];
  let doesSwap = false;
  let chain = req.sourceChainId;
  const ops = Array.isArray(route.operations) ? route.operations : [];
  for (const op of ops) {
    if (!isObj(op)) continue;
    if (isObj(op.swap)) {
      const s = op.swap;
      const inner = isObj(s.swap_in)
        ? s.swap_in
        : isObj(s.swap_out)
          ? s.swap_out
          : isObj(s.smart_swap_in)
            ? s.smart_swap_in
            : {};
      const swapOps = Array.isArray(inner.swap_operations) ? inner.swap_operations.filter(isObj) : [];
      const venue = isObj(inner.swap_venue) ? inner.swap_venue : {};
      const denomOut = str(s.denom_out) ?? str(swapOps[swapOps.length - 1]?.denom_out);
      chain = str(s.chain_id) ?? str(s.from_chain_id) ?? str(venue.chain_id) ?? chain;
      if (denomOut) path.push({ denom: denomOut, chainId: chain, how: 'swap' });
      doesSwap = true;
      continue;
    }
    if (isObj(op.evm_swap)) {
      const s = op.evm_swap;
      chain = str(s.from_chain_id) ?? chain;
      const denomOut = str(s.denom_out);
      if (denomOut) path.push({ denom: denomOut, chainId: chain, how: 'swap' });
      doesSwap = true;
      continue;
    }
    // every other operation (transfer, axelar_transfer, cctp_transfer, hyperlane_transfer, …) moves the asset
    const body = Object.values(op).find(isObj);
    if (!body) continue;
    const to = str(body.to_chain_id);
    const denomOut = str(body.denom_out) ?? str(body.dest_denom);
    if (to) chain = to;
    if (denomOut) path.push({ denom: denomOut, chainId: chain, how: 'transfer' });
  }
  if (typeof route.does_swap === 'boolean') doesSwap = route.does_swap;
  return { path, doesSwap };
}

export async function skipEstimate(baseUrl: string, req: SkipRequest, timeoutMs: number): Promise<SkipEstimate> {
  const body = {
    source_asset_denom: req.sourceDenom,
    source_asset_chain_id: req.sourceChainId,
    dest_asset_denom: req.destDenom,
    dest_asset_chain_id: req.destChainId,
    amount_in: req.amountIn.toString(),
    chain_ids_to_addresses: req.chainIdsToAddresses,
    slippage_tolerance_percent: req.slippagePercent,
    chain_ids_to_affiliates: req.chainIdsToAffiliates,
    allow_multi_tx: false,
    allow_unsafe: true,
    smart_relay: false,
  };
  let res: unknown;
  try {
    res = await fetchJson(`${baseUrl}/v2/fungible/msgs_direct`, { method: 'POST', body, timeoutMs });
  } catch (err) {
    if (err instanceof UpstreamError && err.status !== null && err.status >= 400 && err.status < 500) {
      const message =
        isObj(err.body) && typeof err.body.message === 'string' ? err.body.message : `status ${err.status}`;
      throw badRequest(`No route: the routing API rejected the request: ${message.slice(0, 500)}`);
    }
    throw new ApiError(502, 'The routing API is unavailable; try again later');
  }
  if (!isObj(res) || !Array.isArray(res.msgs) || !isObj(res.route))
    throw new ApiError(502, 'The routing API returned an unexpected response');
  const route = res.route;
  const amountOut = str(route.estimated_amount_out) ?? str(route.amount_out);
  if (!amountOut || !/^\d+$/.test(amountOut))
    throw new ApiError(502, 'The routing API returned an unexpected response');
  let msgs: SkipGoMsg[];
  try {
    msgs = res.msgs.map(mapMsg);
  } catch (err) {
    if (err instanceof UpstreamError) throw new ApiError(502, 'The routing API returned an unexpected response');
    throw err;
  }
  const { path, doesSwap } = mapAssetPath(route, req);
  const seconds = route.estimated_route_duration_seconds;
  const impact = Number(str(route.swap_price_impact_percent));
  const warning = isObj(route.warning) ? route.warning : null;
  return {
    tokenOutAmount: amountOut,
    skipGoMsgs: msgs,
    assetPath: path,
    doesSwap,
    ...(typeof seconds === 'number' && Number.isFinite(seconds) ? { estimatedTime: seconds } : {}),
    ...(Number.isFinite(impact) ? { priceImpactPercent: impact } : {}),
    badPriceWarning: warning?.type === 'BAD_PRICE_WARNING',
  };
}
