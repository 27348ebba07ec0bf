// Configuration of swap estimates: pool polling, upstream calls and the low-liquidity warning.
import { ConfigError, int, str, type Env } from '../shared/env.ts';

export interface SwapConfig {
  /** CHAIN_POLL_INTERVAL_MS: how often pool state is read from CHAIN_REST_URL. */
  chainPollIntervalMs: number;
  /** CHAIN_TAKER_FEE_REFRESH_MS: how often per-pair taker fees are re-read (new pairs are read at once). */
  takerFeeRefreshMs: number;
  /** SWAP_IMPORT_POLL_INTERVAL_MS: how often a service checks for pools imported by the CLI. */
  importPollIntervalMs: number;
  /** SWAP_UPSTREAM_TIMEOUT_MS: timeout of every outbound call (chain REST, routing API). */
  upstreamTimeoutMs: number;
  /** SWAP_PRICE_IMPACT_WARNING_PERCENT: price impact above which lowLiquidityWarning is set. */
  priceImpactWarningPercent: number;
  /** SWAP_MIN_POOL_RESERVE: a pool on the route holding less of a traded denom (base units) sets lowLiquidityWarning. */
  minPoolReserve: bigint;
}

export function swapConfig(env: Env): SwapConfig {
  const percent = str(env, 'SWAP_PRICE_IMPACT_WARNING_PERCENT') ?? '5';
  if (!/^\d{1,3}(\.\d{1,6})?$/.test(percent) || Number(percent) > 100) {
    throw new ConfigError('SWAP_PRICE_IMPACT_WARNING_PERCENT', `must be a number from 0 to 100 (got "${percent}")`);
  }
  const reserve = str(env, 'SWAP_MIN_POOL_RESERVE') ?? '1000000';
  if (!/^\d{1,78}$/.test(reserve))
    throw new ConfigError('SWAP_MIN_POOL_RESERVE', `must be a non-negative integer (got "${reserve}")`);
  return {
    chainPollIntervalMs: int(env, 'CHAIN_POLL_INTERVAL_MS', 6000, 100, 3_600_000),
    takerFeeRefreshMs: int(env, 'CHAIN_TAKER_FEE_REFRESH_MS', 600_000, 1000, 86_400_000),
    importPollIntervalMs: int(env, 'SWAP_IMPORT_POLL_INTERVAL_MS', 2000, 50, 3_600_000),
    upstreamTimeoutMs: int(env, 'SWAP_UPSTREAM_TIMEOUT_MS', 10_000, 100, 120_000),
    priceImpactWarningPercent: Number(percent),
    minPoolReserve: BigInt(reserve),
  };
}
