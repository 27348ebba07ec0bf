// Configuration of the chain client and indexer. The REST timeout and the poll interval default to
// the swap settings, which read the same chain.
import { int, type Env } from '../shared/env.ts';
import type { SwapConfig } from '../swap/config.ts';

export interface ChainConfig {
  /** CHAIN_TIMEOUT_MS: timeout of one chain REST call (default SWAP_UPSTREAM_TIMEOUT_MS). */
  timeoutMs: number;
  /** CHAIN_START_HEIGHT: first block the indexer reads when it has no cursor yet. */
  startHeight: number;
  /** CHAIN_POLL_INTERVAL_MS: how often the indexer asks for new blocks once caught up. */
  pollIntervalMs: number;
  /** CHAIN_INDEX_BATCH: blocks read ahead (concurrently) per catch-up batch. */
  batchSize: number;
  /** CHAIN_INDEXER_LEASE_MS: how long the indexing lease lasts without renewal (failover delay). */
  leaseMs: number;
}

export function chainConfig(env: Env, swap: SwapConfig): ChainConfig {
  return {
    timeoutMs: int(env, 'CHAIN_TIMEOUT_MS', swap.upstreamTimeoutMs, 100, 120_000),
    startHeight: int(env, 'CHAIN_START_HEIGHT', 1, 1, Number.MAX_SAFE_INTEGER),
    pollIntervalMs: swap.chainPollIntervalMs,
    batchSize: int(env, 'CHAIN_INDEX_BATCH', 50, 1, 1000),
    leaseMs: int(env, 'CHAIN_INDEXER_LEASE_MS', 15_000, 500, 600_000),
  };
}
