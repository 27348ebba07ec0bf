// Addresses in pasted or uploaded text (a CSV export, a spreadsheet column, a plain list): every
// cell of every line that is a valid address, in either form (0x… or the native bech32 form),
// wherever its column. Used by the whitelist editor of the claim builder and by the store import.
// Both forms of one address name one user, so duplicates are merged across forms; a line with
// text but no valid address is reported by its number (a header row, a typo, a bad checksum).
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { bech32 } from '@scure/base';

export interface AddressScan {
  /** Valid addresses in first-seen order, each in the form it was written (0x or native). */
  addresses: string[];
  /** Cells naming an address already found (in either form), merged away. */
  duplicates: number;
  /** Lines (1-based) holding text but no valid address, with a short reason. */
  badLines: Array<{ line: number; text: string; reason: string }>;
}

const HEX = /^0x[0-9a-fA-F]{40}$/;
const NATIVE = /^[a-zA-Z]{1,20}1[02-9ac-hj-np-zAC-HJ-NP-Z]{6,90}$/;

/** EIP-55: a mixed-case 0x address must carry the right checksum. */
function checksumOk(hex: string): boolean {
  const body = hex.slice(2);
  if (body === body.toLowerCase() || body === body.toUpperCase()) return true;
  const hash = bytesToHex(keccak_256(new TextEncoder().encode(body.toLowerCase())));
  for (let i = 0; i < 40; i++) {
    const c = body[i]!;
    if (/[a-f]/i.test(c) && (Number.parseInt(hash[i]!, 16) >= 8 ? c !== c.toUpperCase() : c !== c.toLowerCase()))
      return false;
  }
  return true;
}

/**
 * The 20 bytes of a cell as lower-case hex (the key both forms share), or a reason it is no
 * address. `prefix`, when known (the console's own address prefix), must match native addresses.
 */
function addressKey(cell: string, prefix?: string): { key: string } | { reason: string } | null {
  if (HEX.test(cell)) return checksumOk(cell) ? { key: cell.slice(2).toLowerCase() } : { reason: 'wrong checksum' };
  if (/^0x[0-9a-fA-F]+$/.test(cell)) return { reason: 'a 0x address has 40 hex digits' };
  if (!NATIVE.test(cell)) return null;
  if (cell !== cell.toLowerCase() && cell !== cell.toUpperCase()) return { reason: 'mixed case' };
  try {
    const decoded = bech32.decode(cell.toLowerCase() as `${string}1${string}`, 90);
    const bytes = bech32.fromWords(decoded.words);
    if (bytes.length !== 20) return { reason: 'not a 20-byte address' };
    if (prefix && decoded.prefix !== prefix) return { reason: `not a ${prefix}1… address` };
    return { key: bytesToHex(bytes) };
  } catch {
    return { reason: 'wrong checksum' };
  }
}

/** Scans `text` line by line; cells are split on commas, semicolons, tabs, spaces and quotes. */
export function scanAddresses(text: string, prefix?: string): AddressScan {
  const seen = new Set<string>();
  const addresses: string[] = [];
  const badLines: AddressScan['badLines'] = [];
  let duplicates = 0;
  const lines = text.split(/\r\n|\r|\n/);
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    let found = false;
    let reason = '';
    for (const cell of line.split(/[\s,;"'`]+/)) {
      if (!cell) continue;
      const r = addressKey(cell, prefix);
      if (r === null) continue;
      if ('reason' in r) {
        reason ||= `${cell.length > 16 ? `${cell.slice(0, 12)}…` : cell}: ${r.reason}`;
        continue;
      }
      found = true;
      if (seen.has(r.key)) duplicates++;
      else {
        seen.add(r.key);
        addresses.push(cell);
      }
    }
    if (!found)
      badLines.push({
        line: i + 1,
        text: line.length > 60 ? `${line.slice(0, 57)}…` : line,
        reason: reason || 'no address in this line',
      });
  });
  return { addresses, duplicates, badLines };
}

/** The address prefix of a native address (`bb` of `bb1…`), to check pasted native addresses. */
export const prefixOf = (address: string): string | undefined => /^([a-z]{1,20})1/.exec(address)?.[1];
