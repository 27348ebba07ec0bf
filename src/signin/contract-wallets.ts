// EVM sign-in proofs. An externally owned account signs with ECDSA (EIP-191 personal_sign) and is
// checked here, offline. A smart-contract account (Safe, Coinbase Smart Wallet, any ERC-4337
// account) cannot: its signature is whatever its contract accepts. With EVM_RPC_URL set, a
// signature that is not the address's own ECDSA signature is asked of the chain through viem's
// verifyMessage: ERC-1271 `isValidSignature` on a deployed account, and for an account not
// deployed yet, the ERC-6492 wrapper (the factory call that would deploy it, simulated in the same
// eth_call by viem's deployless validator).
//
// Every JSON-RPC call goes through the egress client (https only, public addresses only, one
// deadline, a size cap, no redirects). viem folds a transport failure into "not valid", so the
// transport records what went wrong and the caller answers a 424 naming the endpoint's host instead
// of a misleading signature error. The URL's path is never shown: providers put API keys there.
//
// A proof the chain accepted is remembered (per process, bounded) until its message expires, so
// presenting it again (a retry, parallel presentations, the console refusing a proof made for
// another app that is then approved) does not call the chain again.
import { createPublicClient, custom, type Hex } from 'viem';
import { verifyMessage } from 'viem/actions';
import type { AppContext } from '../context.ts';
import type { EvmRpcConfig } from './config.ts';
import { EgressError, egressFor, type Egress } from '../egress/index.ts';
import { sha256Hex } from '../shared/crypto.ts';
import { ApiError, badRequest, unauthorized } from '../shared/errors.ts';
import { EVM_CHAIN_ID } from './message.ts';
import { HIGH_S_REASON, isHighSEip191, recoverEip191Signer } from './verify.ts';

/** Largest JSON-RPC answer read (a validator's answer is 32 bytes; a revert's data a few hundred). */
const MAX_RPC_RESPONSE_BYTES = 64 * 1024;
/** Accepted proofs remembered per process; the oldest is dropped beyond this. */
const MAX_REMEMBERED_PROOFS = 10_000;
/** 0x and whole bytes (the approve schemas bound the length). */
const HEX_SIGNATURE = /^0x(?:[0-9a-fA-F]{2})+$/;

export interface EvmProof {
  /** The signing address, 0x form. */
  address: string;
  /** The exact signed text. */
  message: string;
  signature: string;
  /** When the message expires (ms): an accepted proof is not asked of the chain again before then. */
  validUntil: number;
}

/**
 * Checks an EVM sign-in signature: the address's own ECDSA signature (offline), else, with
 * EVM_RPC_URL set, its account contract (ERC-1271, or ERC-6492 before deployment). Throws the
 * approval's errors: 400 malformed, 401 not accepted, 424 the RPC endpoint failed.
 */
export async function verifyEvmSignature(ctx: AppContext, proof: EvmProof, kind = 'sign-in'): Promise<void> {
  const recovered = recoverEip191Signer(proof.message, proof.signature);
  const expected = proof.address.slice(2).toLowerCase();
  if (recovered && Buffer.from(recovered).toString('hex') === expected) return;
  // Refused before any chain call: the validator's ecrecover would accept the malleable twin of the
  // address's own signature, and wallets (an account's owners too) sign with low S.
  if (isHighSEip191(proof.signature)) throw badRequest(`Invalid signature: ${HIGH_S_REASON}.`);
  const rpc = ctx.config.evmRpc;
  if (!rpc) {
    if (!recovered) throw badRequest('Invalid signature: expected a 0x-prefixed 65-byte personal_sign signature.');
    throw unauthorized(`Signature does not match the ${kind} message for ${proof.address}.`);
  }
  if (!HEX_SIGNATURE.test(proof.signature)) {
    throw badRequest(
      "Invalid signature: expected 0x-prefixed hex: a 65-byte personal_sign signature, or a smart-contract account's ERC-1271 or ERC-6492 signature.",
    );
  }
  const outcome = await contractWalletsOf(ctx, rpc).verify(proof, ctx.clock.now());
  if (outcome === 'valid') return;
  const host = rpcHost(rpc);
  throw unauthorized(
    outcome === 'reverted'
      ? `Signature does not match the ${kind} message for ${proof.address}: it is not this address's ECDSA signature, and checking it on chain reverted (the account's ERC-1271 isValidSignature, or the ERC-6492 validator for a malformed signature, through ${host}).`
      : `Signature does not match the ${kind} message for ${proof.address}: it is not this address's ECDSA signature, and no account contract accepted it (ERC-1271 / ERC-6492, through ${host}).`,
  );
}

/** The endpoint as errors and logs name it: its host (and port), never the path that holds a key. */
export const rpcHost = (rpc: EvmRpcConfig): string => new URL(rpc.url).host;

type Outcome = 'valid' | 'invalid' | 'reverted';

/** What one verification's JSON-RPC calls met (viem reports only a boolean). */
interface Probe {
  failure: string | null;
  reverted: boolean;
}

export class ContractWallets {
  private readonly accepted = new Map<string, { until: number; outcome: Promise<Outcome> }>();
  private chainChecked = false;
  private readonly ctx: AppContext;
  private readonly rpc: EvmRpcConfig;
  private readonly egress: Egress;

  constructor(ctx: AppContext, rpc: EvmRpcConfig, egress: Egress) {
    this.ctx = ctx;
    this.rpc = rpc;
    this.egress = egress;
  }

  async verify(proof: EvmProof, now: number): Promise<Outcome> {
    const key = sha256Hex(`${proof.message}\n${proof.signature}`);
    const known = this.accepted.get(key);
    if (known && now < known.until) return known.outcome;
    if (known) this.accepted.delete(key);
    // parallel presentations of one proof share one check; only an accepted proof stays
    const outcome = this.check(proof);
    if (this.accepted.size >= MAX_REMEMBERED_PROOFS) this.accepted.delete(this.accepted.keys().next().value!);
    this.accepted.set(key, { until: proof.validUntil, outcome });
    const forget = () => {
      if (this.accepted.get(key)?.outcome === outcome) this.accepted.delete(key);
    };
    outcome.then((o) => o !== 'valid' && forget(), forget);
    return outcome;
  }

  private async check(proof: EvmProof): Promise<Outcome> {
    const probe: Probe = { failure: null, reverted: false };
    const client = createPublicClient({
      transport: custom({ request: (req) => this.call(req, probe) }, { retryCount: 0 }),
      ccipRead: false,
    });
    if (!this.chainChecked) {
      // EIP-4361: a contract account is resolved on the chain its message names
      let chainId: number;
      try {
        chainId = await client.getChainId();
      } catch (err) {
        throw this.unavailable(probe.failure ?? `eth_chainId failed (${(err as Error).message.split('\n')[0]})`);
      }
      if (chainId !== EVM_CHAIN_ID) {
        throw this.unavailable(
          `it serves chain ${chainId}, but sign-in messages name chain ${EVM_CHAIN_ID}, where contract accounts must be resolved (set EVM_RPC_URL to an endpoint of chain ${EVM_CHAIN_ID})`,
        );
      }
      this.chainChecked = true;
    }
    let valid: boolean;
    try {
      valid = await verifyMessage(client, {
        address: proof.address as Hex,
        message: proof.message,
        signature: proof.signature as Hex,
      });
    } catch (err) {
      // viem throws only past its own error handling (a transport failure outside the call)
      throw this.unavailable(probe.failure ?? (err as Error).message.split('\n')[0]!);
    }
    if (probe.failure) throw this.unavailable(probe.failure);
    return valid ? 'valid' : probe.reverted ? 'reverted' : 'invalid';
  }

  /** The endpoint could not answer: logged (host only), and answered 424 naming the host. */
  private unavailable(reason: string): ApiError {
    this.ctx.log.warn(
      { rpcHost: rpcHost(this.rpc), reason },
      'EVM JSON-RPC endpoint failed during a smart-contract wallet sign-in',
    );
    return new ApiError(
      424,
      `The EVM JSON-RPC endpoint (${rpcHost(this.rpc)}) could not check this smart-contract wallet signature: ${reason}. Try again later.`,
    );
  }

  /** One JSON-RPC call through egress; what went wrong is noted on the probe before viem sees it. */
  private async call({ method, params }: { method: string; params?: unknown }, probe: Probe): Promise<unknown> {
    const fail = (reason: string): never => {
      probe.failure ??= reason;
      throw new Error(reason);
    };
    let res;
    try {
      res = await this.egress.request({
        url: this.rpc.url,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: params ?? [] }),
        timeoutMs: this.rpc.timeoutMs,
        maxResponseBytes: MAX_RPC_RESPONSE_BYTES,
      });
    } catch (err) {
      if (err instanceof EgressError) return fail(err.reason);
      throw err;
    }
    if (res.status !== 200) return fail(`it answered HTTP ${res.status} to ${method}`);
    let body: unknown;
    try {
      body = JSON.parse(res.body.toString('utf8'));
    } catch {
      return fail(`its answer to ${method} is not JSON`);
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      return fail(`its answer to ${method} is not a JSON-RPC response`);
    const { result, error } = body as {
      result?: unknown;
      error?: { code?: unknown; message?: unknown; data?: unknown };
    };
    if (error !== undefined) {
      const code = typeof error?.code === 'number' ? error.code : null;
      const text = typeof error?.message === 'string' ? error.message.slice(0, 200) : '';
      // a revert is the contract's answer (the signature is not accepted), not a failing endpoint
      if (method === 'eth_call' && (code === 3 || /revert/i.test(text))) {
        probe.reverted = true;
        throw Object.assign(new Error(text || 'execution reverted'), { code: code ?? 3, data: error?.data });
      }
      return fail(`it answered ${method} with JSON-RPC error ${code ?? '(no code)'}${text ? `: ${text}` : ''}`);
    }
    if (!('result' in (body as object))) return fail(`its answer to ${method} has no result`);
    return result;
  }
}

/** The context's contract-wallet checker (`services.contractWallets`), created on first use. */
function contractWalletsOf(ctx: AppContext, rpc: EvmRpcConfig): ContractWallets {
  return (ctx.services.contractWallets ??= new ContractWallets(ctx, rpc, egressFor(ctx)));
}
