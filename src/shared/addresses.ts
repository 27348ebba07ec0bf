// Both address forms name the same 20 bytes: the EVM form (0x + 40 hex, EIP-55 checksummed when
// mixed case) and the native bech32 form (`<prefix>1…`). The native form is the canonical user id
// everywhere in storage and in responses (`platformAddress`).
import { bech32 } from '@scure/base';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { badRequest } from './errors.ts';

export type Chain = 'ETH' | 'Cosmos';

export interface ParsedAddress {
  /** The 20 address bytes. */
  bytes: Uint8Array;
  /** Native bech32 form: the canonical id. */
  platformAddress: string;
  /** EIP-55 checksummed 0x form of the same bytes. */
  evmAddress: string;
  /** The form the caller used. */
  chain: Chain;
}

let prefix = 'bb';

/** Set once at start from ADDRESS_PREFIX. */
export function setAddressPrefix(p: string): void {
  prefix = p;
}
export const addressPrefix = (): string => prefix;

const utf8 = new TextEncoder();

export function toChecksumAddress(bytes: Uint8Array): string {
  const hex = bytesToHex(bytes);
  const hash = keccak_256(utf8.encode(hex));
  let out = '0x';
  // the i-th hex digit of the hash, read from its bytes (high nibble first): 8 or more upper-cases
  for (let i = 0; i < 40; i++) {
    const nibble = i & 1 ? hash[i >> 1]! & 15 : hash[i >> 1]! >> 4;
    out += nibble >= 8 ? hex[i]!.toUpperCase() : hex[i];
  }
  return out;
}

export const toPlatformAddress = (bytes: Uint8Array): string => bech32.encode(prefix, bech32.toWords(bytes));

/**
 * A string shaped like a native address (length, prefix), in lower case: BIP-173 strings may be
 * all upper case (QR codes), never mixed. Null when it cannot be one.
 */
function nativeInLowerCase(input: string): string | null {
  if (input.length > 90) return null;
  if (input.startsWith(prefix + '1')) return input;
  const lower = input.toLowerCase();
  return input === input.toUpperCase() && lower.startsWith(prefix + '1') ? lower : null;
}

/** Parses either form; returns null for anything that is not a valid address. */
export function tryParseAddress(input: unknown): ParsedAddress | null {
  if (typeof input !== 'string') return null;
  if (/^0x[0-9a-fA-F]{40}$/.test(input)) {
    const bytes = hexToBytes(input.slice(2).toLowerCase());
    const evmAddress = toChecksumAddress(bytes);
    const body = input.slice(2);
    const mixedCase = body !== body.toLowerCase() && body !== body.toUpperCase();
    if (mixedCase && input !== evmAddress) return null; // bad EIP-55 checksum
    return { bytes, platformAddress: toPlatformAddress(bytes), evmAddress, chain: 'ETH' };
  }
  const native = nativeInLowerCase(input);
  if (native === null) return null;
  try {
    const decoded = bech32.decodeToBytes(native);
    if (decoded.prefix !== prefix || decoded.bytes.length !== 20) return null;
    const bytes = decoded.bytes;
    return { bytes, platformAddress: toPlatformAddress(bytes), evmAddress: toChecksumAddress(bytes), chain: 'Cosmos' };
  } catch {
    return null;
  }
}

/** Why `input` is not an address: a wrong EIP-55 checksum is told apart from a wrong shape. */
export function invalidAddressMessage(input: unknown, field = 'address'): string {
  const shown =
    typeof input === 'string' && input.length > 100 ? `${JSON.stringify(input.slice(0, 100))}…` : JSON.stringify(input);
  if (typeof input === 'string' && HEX40.test(input)) {
    const expected = toChecksumAddress(hexToBytes(input.slice(2).toLowerCase()));
    return `Invalid address in ${field}: ${shown} has a wrong EIP-55 checksum (mixed case must be exactly ${expected}, or write it all in lower case)`;
  }
  return `Invalid address in ${field}: ${shown} is neither a 0x address nor a ${prefix}1… address`;
}

/** Parses either form or throws a 400 naming the field and the value. */
export function parseAddress(input: unknown, field = 'address'): ParsedAddress {
  const parsed = tryParseAddress(input);
  if (!parsed) throw badRequest(invalidAddressMessage(input, field));
  return parsed;
}

const HEX40 = /^0x[0-9a-fA-F]{40}$/;

/**
 * Canonical (native) form, or null: the same accept/reject rules as `tryParseAddress`, without
 * the work a canonical id does not need (hot in batch edits of 10,000 addresses). A native
 * address that decodes is canonical once in lower case (bech32 refuses mixed case), and the
 * EIP-55 checksum is computed only for a mixed-case 0x address.
 */
export function tryCanonical(input: unknown): string | null {
  if (typeof input !== 'string') return null;
  if (HEX40.test(input)) {
    const body = input.slice(2);
    const lower = body.toLowerCase();
    const bytes = hexToBytes(lower);
    if (body !== lower && body !== body.toUpperCase() && toChecksumAddress(bytes) !== input) return null;
    return toPlatformAddress(bytes);
  }
  const native = nativeInLowerCase(input);
  if (native === null) return null;
  try {
    const decoded = bech32.decodeToBytes(native);
    return decoded.prefix === prefix && decoded.bytes.length === 20 ? native : null;
  } catch {
    return null;
  }
}

/** Canonical (native) form of either address form; throws a 400 naming `field` when invalid. */
export const toCanonical = (input: unknown, field?: string): string =>
  tryCanonical(input) ?? parseAddress(input, field).platformAddress;

/**
 * The EIP-55 0x form of an address already known to be canonical (a stored `platformAddress`):
 * decodes and checksums, without re-validating or re-encoding the native form.
 */
export function evmAddressOf(platformAddress: string): string {
  const decoded = bech32.decodeToBytes(platformAddress);
  return toChecksumAddress(decoded.bytes);
}

/** The native encoding of 20 zero bytes (the anonymous / null address). */
export const nullAddress = (): string => toPlatformAddress(new Uint8Array(20));
