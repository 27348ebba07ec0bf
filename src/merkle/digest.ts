// SHA-256 for merkle trees, from node:crypto (OpenSSL): the one-shot `hash()` avoids a Hash
// object per node. Nodes are 32-byte digests stored back to back in one Uint8Array per layer.
import { hash } from 'node:crypto';

export const NODE_BYTES = 32;

/** sha256(data) written at `dst[off..off+32]`. */
export function sha256Into(data: Uint8Array | string, dst: Uint8Array, off: number): void {
  dst.set(hash('sha256', data, 'buffer'), off);
}

/** Parent j of a layer: sha256(below[2j] ‖ below[2j+1]) into above[j]. */
export function hashPair(below: Uint8Array, above: Uint8Array, j: number): void {
  sha256Into(below.subarray(j * 64, j * 64 + 64), above, j * NODE_BYTES);
}

/** Lowercase hex of the node at `layer[index]`. */
export function nodeHex(layer: Uint8Array, index: number): string {
  return Buffer.from(layer.buffer, layer.byteOffset + index * NODE_BYTES, NODE_BYTES).toString('hex');
}

/** The 32 bytes of a 64-hex-character digest, or null when it is not one. */
export function hexToNode(hex: string): Uint8Array | null {
  return /^[0-9a-fA-F]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : null;
}
