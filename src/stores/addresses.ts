// Canonicalisation on the batch path. Same accept/reject rules and output as
// shared/addresses.ts toCanonical (a test checks they agree), minus the work a batch of 10,000
// does not need: a native address that decodes is already canonical (bech32 rejects mixed case,
// and the prefix check rejects upper case), so it is not re-encoded, and the EIP-55 checksum is
// computed only when a 0x address is mixed case.
import { bech32 } from '@scure/base';
import { hexToBytes } from '@noble/hashes/utils.js';
import { addressPrefix, parseAddress, toChecksumAddress, toPlatformAddress } from '../shared/addresses.ts';

const HEX40 = /^0x[0-9a-fA-F]{40}$/;

function tryCanonical(input: string): string | null {
  if (HEX40.test(input)) {
    const body = input.slice(2);
    const lower = body.toLowerCase();
    const bytes = hexToBytes(lower);
    if (body !== lower && body !== body.toUpperCase() && toChecksumAddress(bytes) !== input) return null;
    return toPlatformAddress(bytes);
  }
  const prefix = addressPrefix();
  if (input.length > 90 || !input.startsWith(prefix + '1')) return null;
  try {
    const decoded = bech32.decodeToBytes(input);
    return decoded.prefix === prefix && decoded.bytes.length === 20 ? input : null;
  } catch {
    return null;
  }
}

/** Canonical (native) form of either address form; a 400 naming `field` and the value otherwise. */
export function canonicalAddress(input: unknown, field: string): string {
  const out = typeof input === 'string' ? tryCanonical(input) : null;
  return out ?? parseAddress(input, field).platformAddress; // parseAddress throws the standard 400
}
