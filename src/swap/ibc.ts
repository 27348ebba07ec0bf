// IBC: the counterparty-chain registry (a JSON configuration file), ICS-20 denom hashing and
// denom-trace arithmetic (what a coin becomes on the other side of a channel), and the
// derivation of a user's address on registry chains from their platform address bytes.
import { readFileSync } from 'node:fs';
import { sha256Hex } from '../shared/crypto.ts';
import { bech32 } from '@scure/base';
import { ConfigError } from '../shared/env.ts';
import { PLATFORM_CHAIN_ID } from './denoms.ts';

export interface IbcChain {
  chainId: string;
  bech32Prefix: string;
  /** The platform chain's channel (port `transfer`) to this chain. */
  channel: string;
  /** This chain's channel (port `transfer`) back to the platform chain. */
  counterpartyChannel: string;
  /** Seconds a transfer to or from this chain usually takes (relaying included). */
  estimatedTransferSeconds: number;
}

export interface IbcRegistry {
  chains: Map<string, IbcChain>;
  /** Full denom paths of IBC vouchers on the platform chain, by their `ibc/…` denom. */
  traces: Map<string, string>;
}

export const emptyRegistry = (): IbcRegistry => ({ chains: new Map(), traces: new Map() });

/** `ibc/` + uppercase hex SHA-256 of the full trace path (`transfer/channel-N/…/base`). */
export function ibcDenom(path: string): string {
  return 'ibc/' + sha256Hex(path).toUpperCase();
}

const CHANNEL = /^channel-\d{1,10}$/;
const HOP = /^transfer\/channel-\d{1,10}\//;
const TRACE = /^(transfer\/channel-\d{1,10}\/)+[a-zA-Z][a-zA-Z0-9/:._-]{0,127}$/;

/** Validates and indexes a registry document; `where` prefixes error messages. */
export function parseRegistry(doc: unknown, where = 'IBC registry'): IbcRegistry {
  const fail = (msg: string): never => {
    throw new Error(`${where}: ${msg}`);
  };
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    fail('must be a JSON object with a "chains" array');
  const root = doc as Record<string, unknown>;
  for (const k of Object.keys(root))
    if (k !== 'chains' && k !== 'denomTraces') fail(`unknown field "${k}" (allowed: chains, denomTraces)`);
  if (!Array.isArray(root.chains)) fail('"chains" must be an array');
  const chains = new Map<string, IbcChain>();
  (root.chains as unknown[]).forEach((c, i) => {
    const at = `chains[${i}]`;
    if (typeof c !== 'object' || c === null || Array.isArray(c)) fail(`${at} must be an object`);
    const e = c as Record<string, unknown>;
    const allowed = ['chainId', 'bech32Prefix', 'channel', 'counterpartyChannel', 'estimatedTransferSeconds'];
    for (const k of Object.keys(e)) if (!allowed.includes(k)) fail(`${at} has unknown field "${k}"`);
    if (typeof e.chainId !== 'string' || !/^[a-zA-Z0-9][a-zA-Z0-9._-]{0,49}$/.test(e.chainId))
      fail(`${at}.chainId must be a chain id`);
    const chainId = e.chainId as string;
    if (chainId === PLATFORM_CHAIN_ID)
      fail(`${at}.chainId must not be ${PLATFORM_CHAIN_ID} (the registry lists counterparties)`);
    if (chains.has(chainId)) fail(`${at}.chainId "${chainId}" appears twice`);
    if (typeof e.bech32Prefix !== 'string' || !/^[a-z][a-z0-9]{0,19}$/.test(e.bech32Prefix))
      fail(`${at}.bech32Prefix must be 1 to 20 lowercase letters or digits`);
    if (typeof e.channel !== 'string' || !CHANNEL.test(e.channel)) fail(`${at}.channel must look like "channel-0"`);
    if (typeof e.counterpartyChannel !== 'string' || !CHANNEL.test(e.counterpartyChannel))
      fail(`${at}.counterpartyChannel must look like "channel-0"`);
    const secs = e.estimatedTransferSeconds ?? 30;
    if (typeof secs !== 'number' || !Number.isInteger(secs) || secs < 1 || secs > 86_400)
      fail(`${at}.estimatedTransferSeconds must be an integer from 1 to 86400`);
    chains.set(chainId, {
      chainId,
      bech32Prefix: e.bech32Prefix as string,
      channel: e.channel as string,
      counterpartyChannel: e.counterpartyChannel as string,
      estimatedTransferSeconds: secs as number,
    });
  });
  const traces = new Map<string, string>();
  if (root.denomTraces !== undefined) {
    if (!Array.isArray(root.denomTraces))
      fail('"denomTraces" must be an array of paths like "transfer/channel-2/uusdc"');
    (root.denomTraces as unknown[]).forEach((t, i) => {
      if (typeof t !== 'string' || !TRACE.test(t))
        fail(`denomTraces[${i}] must be a path like "transfer/channel-2/uusdc"`);
      traces.set(ibcDenom(t as string), t as string);
    });
  }
  return { chains, traces };
}

/** Reads IBC_REGISTRY_FILE; a missing or invalid file stops the start with a clear message. */
export function loadRegistryFile(path: string | null): IbcRegistry {
  if (!path) return emptyRegistry();
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(
      'IBC_REGISTRY_FILE',
      `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): ${path}`,
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ConfigError('IBC_REGISTRY_FILE', `is not valid JSON: ${path}`);
  }
  try {
    return parseRegistry(doc, path);
  } catch (err) {
    throw new ConfigError('IBC_REGISTRY_FILE', `is invalid: ${(err as Error).message}`);
  }
}

/** Full trace path of a platform-chain denom: itself when native, the registered path for `ibc/…`, null when unknown. */
export function platformPath(registry: IbcRegistry, denom: string): string | null {
  if (denom.startsWith('ibc/')) return registry.traces.get(denom) ?? null;
  return denom;
}

/** What a coin with full path `path` becomes after crossing to a chain whose receiving channel is `destChannel`, leaving over `srcChannel`. */
export function denomAfterTransfer(path: string, srcChannel: string, destChannel: string): string {
  const unwindPrefix = `transfer/${srcChannel}/`;
  if (path.startsWith(unwindPrefix)) {
    // returning over the channel it arrived on: the prefix comes off
    const rest = path.slice(unwindPrefix.length);
    return HOP.test(rest) ? ibcDenom(rest) : rest;
  }
  return ibcDenom(`transfer/${destChannel}/${path}`);
}

/** The denom `denom` (on the platform chain) arrives as on `chain`, or null when its trace is unknown. */
export function outboundDenom(registry: IbcRegistry, chain: IbcChain, denom: string): string | null {
  const path = platformPath(registry, denom);
  return path === null ? null : denomAfterTransfer(path, chain.channel, chain.counterpartyChannel);
}

/**
 * The platform denom a coin `denom` held on `chain` arrives as. Native coins of that chain get a
 * fresh voucher; `ibc/…` coins are resolved only when they are platform-origin vouchers coming
 * home (checked against `platformDenoms`). Null when it cannot be determined.
 */
export function inboundDenom(
  registry: IbcRegistry,
  chain: IbcChain,
  denom: string,
  platformDenoms: Iterable<string>,
): string | null {
  if (!denom.startsWith('ibc/')) return ibcDenom(`transfer/${chain.channel}/${denom}`);
  for (const p of platformDenoms) {
    const path = platformPath(registry, p);
    if (path !== null && ibcDenom(`transfer/${chain.counterpartyChannel}/${path}`) === denom) return p;
  }
  return null;
}

/** The same 20 address bytes under another chain's bech32 prefix. */
export function deriveAddress(bytes: Uint8Array, prefix: string): string {
  return bech32.encode(prefix, bech32.toWords(bytes));
}
