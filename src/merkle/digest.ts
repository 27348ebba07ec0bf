// SHA-256 for merkle trees, on the audited compression function of @noble/hashes. A tree hashes
// millions of short messages of known shape (64-byte node pairs, ~70-byte codes); creating a hash
// object or a Buffer per message, as `sha256(msg)` or node:crypto's `hash()` do, costs more than
// the compression itself. So one long-lived engine pads each message in a reused block buffer and
// runs noble's `process()` over it, writing the digest straight into the layer. Tests check it
// against node:crypto for every message length from 0 to 300 bytes and every tree shape.
import { _SHA256 } from '@noble/hashes/sha2.js';

export const NODE_BYTES = 32;

const HEX_DIGITS = new TextEncoder().encode('0123456789abcdef');
const encoder = new TextEncoder();

/** Writes the decimal digits of the non-negative integer `n` at `buf[off…]`; returns the end offset. */
function writeDecimal(buf: Uint8Array, off: number, n: number): number {
  let end = off;
  for (let rest = n; ; rest = Math.floor(rest / 10)) {
    end++;
    if (rest < 10) break;
  }
  let at = end;
  let rest = n;
  do {
    buf[--at] = 48 + (rest % 10);
    rest = Math.floor(rest / 10);
  } while (rest > 0);
  return end;
}

/** One SHA-256 engine per build: not reentrant, not shared between concurrent builds. */
export class TreeHasher extends _SHA256 {
  private readonly iv: number[] = this.get();
  /** Message buffer, padded in place; grows for long strings. */
  private message = new Uint8Array(256);
  private messageView = new DataView(this.message.buffer);
  /** The second block of every 64-byte message: 0x80, zeros, bit length 512. */
  private readonly pairPadding: DataView;

  constructor() {
    super();
    const padding = new DataView(new ArrayBuffer(64));
    padding.setUint8(0, 0x80);
    padding.setUint32(60, 512);
    this.pairPadding = padding;
  }

  /** above[j] = sha256(below[2j] ‖ below[2j+1]) for j in [from, to). */
  hashPairs(below: Uint8Array, above: Uint8Array, from: number, to: number): void {
    const src = new DataView(below.buffer, below.byteOffset, below.byteLength);
    const dst = new DataView(above.buffer, above.byteOffset, above.byteLength);
    const iv = this.iv;
    for (let j = from; j < to; j++) {
      this.set(iv[0], iv[1], iv[2], iv[3], iv[4], iv[5], iv[6], iv[7]);
      this.process(src, j * 64);
      this.process(this.pairPadding, 0);
      this.writeState(dst, j * NODE_BYTES);
    }
  }

  /** sha256(UTF-8 of `text`) into `dst[off..off+32]`. */
  hashStringInto(text: string, dst: DataView, off: number): void {
    if (text.length * 3 + 72 > this.message.length) this.growMessage(text.length * 3 + 72);
    const { written } = encoder.encodeInto(text, this.message);
    this.hashMessage(written);
    this.writeState(dst, off);
  }

  /**
   * Leaf of code `index` of a claim: sha256(code), code = sha256hex(prefix ‖ index) ‖ "-" ‖ index,
   * where `prefix` is the UTF-8 of "<seed>-" (docs/onchain-claims.md). The code is written as ASCII straight
   * into the message buffer: no intermediate strings.
   */
  hashCodeInto(prefix: Uint8Array, index: number, dst: DataView, off: number): void {
    if (prefix.length + 88 > this.message.length) this.growMessage(prefix.length + 88);
    const msg = this.message;
    msg.set(prefix, 0);
    this.hashMessage(writeDecimal(msg, prefix.length, index));
    // The code: 64 hex digits of that digest, "-", the index.
    const words = [this.A, this.B, this.C, this.D, this.E, this.F, this.G, this.H];
    let at = 0;
    for (let w = 0; w < 8; w++) {
      const word = words[w];
      for (let shift = 28; shift >= 0; shift -= 4) msg[at++] = HEX_DIGITS[(word >>> shift) & 15];
    }
    msg[at++] = 45; // '-'
    this.hashMessage(writeDecimal(msg, at, index));
    this.writeState(dst, off);
  }

  /** Wipes the message buffer and noble's shared message schedule: codes are secrets. */
  wipe(): void {
    this.message.fill(0);
    this.roundClean();
    this.set(0, 0, 0, 0, 0, 0, 0, 0);
  }

  /** Hashes message[0..length) (FIPS 180-4 §5.1.1 padding applied in place); the digest is the state. */
  private hashMessage(length: number): void {
    const padded = Math.ceil((length + 9) / 64) * 64;
    const msg = this.message;
    msg[length] = 0x80;
    msg.fill(0, length + 1, padded - 8);
    const view = this.messageView;
    const bits = length * 8;
    view.setUint32(padded - 8, Math.floor(bits / 2 ** 32));
    view.setUint32(padded - 4, bits >>> 0);
    const iv = this.iv;
    this.set(iv[0], iv[1], iv[2], iv[3], iv[4], iv[5], iv[6], iv[7]);
    for (let block = 0; block < padded; block += 64) this.process(view, block);
  }

  private writeState(dst: DataView, off: number): void {
    dst.setUint32(off, this.A);
    dst.setUint32(off + 4, this.B);
    dst.setUint32(off + 8, this.C);
    dst.setUint32(off + 12, this.D);
    dst.setUint32(off + 16, this.E);
    dst.setUint32(off + 20, this.F);
    dst.setUint32(off + 24, this.G);
    dst.setUint32(off + 28, this.H);
  }

  private growMessage(min: number): void {
    let size = this.message.length;
    while (size < min) size *= 2;
    this.message.fill(0);
    this.message = new Uint8Array(size);
    this.messageView = new DataView(this.message.buffer);
  }
}

/** A DataView over exactly the bytes of `bytes`. */
export function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Lowercase hex of the node at `layer[index]`. */
export function nodeHex(layer: Uint8Array, index: number): string {
  return Buffer.from(layer.buffer, layer.byteOffset + index * NODE_BYTES, NODE_BYTES).toString('hex');
}

/** The 32 bytes of a 64-hex-character digest, or null when it is not one. */
export function hexToNode(hex: string): Uint8Array | null {
  return /^[0-9a-fA-F]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : null;
}
