// Ready-to-sign Cosmos messages in the cross-chain routing API's `multi_chain_msg` shape: `msg` is
// the proto3 JSON of the message (snake_case keys, 64-bit integers as strings).
import type { RouteQuote } from './router.ts';

export const MSG_SWAP_EXACT_AMOUNT_IN = '/gamm.v1beta1.MsgSwapExactAmountIn';
export const MSG_SWAP_WITH_IBC_TRANSFER = '/gamm.v1beta1.MsgSwapExactAmountInWithIBCTransfer';
export const MSG_TRANSFER = '/ibc.applications.transfer.v1.MsgTransfer';

export interface MultiChainMsg {
  chain_id: string;
  path: string[];
  msg: string;
  msg_type_url: string;
}

export interface EvmTx {
  chain_id: string;
  to: string;
  value: string;
  data: string;
  required_erc20_approvals?: Array<{ token: string; spender: string; amount?: string }>;
  signer_address: string;
}

export type SkipGoMsg = { multi_chain_msg: MultiChainMsg } | { evm_tx: EvmTx };

export interface Affiliate {
  address: string;
  basis_points_fee: string;
}

const routes = (quote: RouteQuote) => quote.hops.map((h) => ({ pool_id: h.pool.id, token_out_denom: h.tokenOutDenom }));

/** `msg` for the first chain of `path` to sign, routed along `path`. */
const multiChainMsg = (path: string[], msgTypeUrl: string, msg: object): SkipGoMsg => ({
  multi_chain_msg: { chain_id: path[0], path, msg: JSON.stringify(msg), msg_type_url: msgTypeUrl },
});

/** A gamm swap's fields in proto order: the swap, `more` (the transfer), then `affiliates` if any (field 5). */
const swapMsg = (
  sender: string,
  tokenInDenom: string,
  quote: RouteQuote,
  minOut: bigint,
  affiliates: Affiliate[],
  more: object = {},
) => ({
  sender,
  routes: routes(quote),
  token_in: { denom: tokenInDenom, amount: quote.amountIn.toString() },
  token_out_min_amount: minOut.toString(),
  ...more,
  ...(affiliates.length > 0 ? { affiliates } : {}),
});

/** gamm MsgSwapExactAmountIn; `affiliates` only when there are some (the chain's field 5). */
export function swapExactAmountInMsg(
  chainId: string,
  sender: string,
  tokenInDenom: string,
  quote: RouteQuote,
  minOut: bigint,
  affiliates: Affiliate[],
): SkipGoMsg {
  return multiChainMsg([chainId], MSG_SWAP_EXACT_AMOUNT_IN, swapMsg(sender, tokenInDenom, quote, minOut, affiliates));
}

/** gamm MsgSwapExactAmountInWithIBCTransfer: swap, check the minimum, pay affiliates, send the rest over ICS-20. */
export function swapWithIbcTransferMsg(
  chainId: string,
  destChainId: string,
  sender: string,
  tokenInDenom: string,
  quote: RouteQuote,
  minOut: bigint,
  transfer: { sourceChannel: string; receiver: string; timeoutTimestampNs: bigint },
  affiliates: Affiliate[],
): SkipGoMsg {
  const ibcTransferInfo = {
    source_channel: transfer.sourceChannel,
    receiver: transfer.receiver,
    memo: '',
    timeout_timestamp: transfer.timeoutTimestampNs.toString(),
  };
  return multiChainMsg(
    [chainId, destChainId],
    MSG_SWAP_WITH_IBC_TRANSFER,
    swapMsg(sender, tokenInDenom, quote, minOut, affiliates, { ibc_transfer_info: ibcTransferInfo }),
  );
}

/** ICS-20 MsgTransfer with no height timeout and an absolute timestamp timeout (ns). */
export function transferMsg(args: {
  chainId: string;
  destChainId: string;
  sourceChannel: string;
  denom: string;
  amount: bigint;
  sender: string;
  receiver: string;
  timeoutTimestampNs: bigint;
}): SkipGoMsg {
  const msg = {
    source_port: 'transfer',
    source_channel: args.sourceChannel,
    token: { denom: args.denom, amount: args.amount.toString() },
    sender: args.sender,
    receiver: args.receiver,
    timeout_height: {},
    timeout_timestamp: args.timeoutTimestampNs.toString(),
    memo: '',
  };
  return multiChainMsg([args.chainId, args.destChainId], MSG_TRANSFER, msg);
}
