// Sign-in's own configuration: the EVM JSON-RPC endpoint that smart-contract wallet signatures
// (ERC-1271, ERC-6492) are checked through. Off when EVM_RPC_URL is unset.
import { ConfigError, int, str, type Env } from '../shared/env.ts';

export interface EvmRpcConfig {
  /** EVM_RPC_URL: https JSON-RPC endpoint of the chain sign-in messages name (Chain ID 1); may hold an API key in its path. */
  url: string;
  /** EVM_RPC_TIMEOUT_MS: deadline of one JSON-RPC call (connection, request and answer). */
  timeoutMs: number;
}

/**
 * EVM_RPC_URL: https only (outbound calls go through the egress rules, which call nothing else),
 * and no user:password (a provider's key belongs in the path, which is never shown).
 */
export function evmRpcConfig(env: Env): EvmRpcConfig | null {
  const v = str(env, 'EVM_RPC_URL');
  if (v === null) return null;
  // the value is not echoed: a provider's URL often holds its API key
  let parsed: URL;
  try {
    parsed = new URL(v);
  } catch {
    throw new ConfigError('EVM_RPC_URL', 'must be a URL');
  }
  if (parsed.protocol !== 'https:')
    throw new ConfigError('EVM_RPC_URL', `must use https (got "${parsed.protocol.replace(':', '')}")`);
  if (parsed.username || parsed.password)
    throw new ConfigError(
      'EVM_RPC_URL',
      `must not hold a user or password before the host (a provider key goes in the path) (host "${parsed.host}")`,
    );
  return { url: v, timeoutMs: int(env, 'EVM_RPC_TIMEOUT_MS', 5000, 100, 60_000) };
}
