// Wallet signature checks.
// - EVM: EIP-191 personal_sign. keccak256("\x19Ethereum Signed Message:\n" + byteLength + message),
//   recover the public key from the 65-byte r‖s‖v signature, compare the derived 20 bytes.
// - Native: ADR-36 (Keplr signArbitrary). A fixed amino sign doc wrapping the message bytes, serialized
//   as sorted-key JSON; secp256k1 over SHA-256 (Cosmos SDK keys) or Keccak-256 (ethsecp256k1 keys).
//   There is no recovery id, so the public key travels with the signature and must derive the signer.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { hexToBytes } from '@noble/hashes/utils.js';

const equalBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);
import { base64, bech32 } from '@scure/base';

const utf8 = (s: string) => new TextEncoder().encode(s);

export function eip191Hash(message: string): Uint8Array {
  const body = utf8(message);
  const prefix = utf8(`\x19Ethereum Signed Message:\n${body.length}`);
  const all = new Uint8Array(prefix.length + body.length);
  all.set(prefix);
  all.set(body, prefix.length);
  return keccak_256(all);
}

/** Why a high-S signature is refused: its reason as the approve route names it. */
export const HIGH_S_REASON =
  'the signature has a high S value, a malleable form refused as EIP-2 and the Cosmos SDK do (wallets sign with low S)';

/** A compact r‖s that is a valid signature's high-S twin (s above n/2; r and s within the order). */
export function isHighS(compact: Uint8Array): boolean {
  try {
    return secp256k1.Signature.fromBytes(compact.subarray(0, 64), 'compact').hasHighS();
  } catch {
    return false; // not a signature at all: r or s zero or past the order
  }
}

/** Whether a well-formed personal_sign signature (0x + 65 bytes) carries a high S. */
export const isHighSEip191 = (signatureHex: string): boolean =>
  /^0x[0-9a-fA-F]{130}$/.test(signatureHex) && isHighS(hexToBytes(signatureHex.slice(2, 130)));

/** The 20 address bytes that signed `message` with personal_sign, or null for a malformed or invalid signature. */
export function recoverEip191Signer(message: string, signatureHex: string): Uint8Array | null {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signatureHex)) return null;
  const sig = hexToBytes(signatureHex.slice(2));
  const v = sig[64];
  const recovery = v >= 27 ? v - 27 : v;
  if (recovery !== 0 && recovery !== 1) return null;
  try {
    const s = secp256k1.Signature.fromBytes(sig.slice(0, 64), 'compact');
    if (s.hasHighS()) return null; // EIP-2: malleable high-S signatures are refused
    const pub = s.addRecoveryBit(recovery).recoverPublicKey(eip191Hash(message)).toBytes(false);
    return keccak_256(pub.slice(1)).slice(-20);
  } catch {
    return null;
  }
}

/** The amino JSON sign doc Keplr's signArbitrary signs, with keys sorted and Go's HTML escaping. */
export function adr36SignDocBytes(signer: string, data: Uint8Array): Uint8Array {
  const doc = {
    account_number: '0',
    chain_id: '',
    fee: { amount: [], gas: '0' },
    memo: '',
    msgs: [{ type: 'sign/MsgSignData', value: { data: base64.encode(data), signer } }],
    sequence: '0',
  };
  const json = JSON.stringify(sortKeys(doc)).replace(/&/g, '\\u0026').replace(/</g, '\\u003c').replace(/>/g, '\\u003e');
  return utf8(json);
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

/** Cosmos SDK secp256k1 address bytes: RIPEMD-160(SHA-256(compressed public key)). */
export const cosmosAddressBytes = (compressedPubKey: Uint8Array): Uint8Array => ripemd160(sha256(compressedPubKey));

/** Ethermint ethsecp256k1 / EVM address bytes: last 20 bytes of Keccak-256(uncompressed key without 0x04). */
export function ethAddressBytes(compressedPubKey: Uint8Array): Uint8Array {
  const uncompressed = secp256k1.Point.fromBytes(compressedPubKey).toBytes(false);
  return keccak_256(uncompressed.slice(1)).slice(-20);
}

export type Adr36Result = { ok: true; algo: 'secp256k1' | 'ethsecp256k1' } | { ok: false; reason: string };

/**
 * Verifies an ADR-36 signature by `signer` (bech32, any prefix; the prefix is part of the signed
 * bytes) over `data`. `publicKey` is the 33-byte compressed key, `signature` the 64-byte r‖s, both
 * standard base64 as Keplr returns them. High-S signatures are refused, as the Cosmos SDK does.
 */
export function verifyAdr36(input: {
  signer: string;
  data: Uint8Array | string;
  publicKey: string;
  signature: string;
}): Adr36Result {
  let signerBytes: Uint8Array;
  try {
    signerBytes = bech32.decodeToBytes(input.signer).bytes;
  } catch {
    return { ok: false, reason: 'signer is not a bech32 address' };
  }
  let pub: Uint8Array;
  let sig: Uint8Array;
  try {
    pub = base64.decode(input.publicKey);
    sig = base64.decode(input.signature);
  } catch {
    return { ok: false, reason: 'publicKey and signature must be standard base64' };
  }
  if (pub.length !== 33) return { ok: false, reason: 'publicKey must be a 33-byte compressed secp256k1 key' };
  if (sig.length !== 64) return { ok: false, reason: 'signature must be 64 bytes (r‖s)' };
  let algo: 'secp256k1' | 'ethsecp256k1';
  try {
    if (equalBytes(cosmosAddressBytes(pub), signerBytes)) algo = 'secp256k1';
    else if (equalBytes(ethAddressBytes(pub), signerBytes)) algo = 'ethsecp256k1';
    else return { ok: false, reason: 'publicKey does not derive the signer address' };
  } catch {
    return { ok: false, reason: 'publicKey is not a valid secp256k1 point' };
  }
  if (isHighS(sig)) return { ok: false, reason: HIGH_S_REASON };
  const data = typeof input.data === 'string' ? utf8(input.data) : input.data;
  const doc = adr36SignDocBytes(input.signer, data);
  let valid: boolean;
  try {
    valid =
      algo === 'secp256k1'
        ? secp256k1.verify(sig, doc, pub, { prehash: true, lowS: true })
        : secp256k1.verify(sig, keccak_256(doc), pub, { prehash: false, lowS: true });
  } catch {
    valid = false;
  }
  return valid ? { ok: true, algo } : { ok: false, reason: 'signature does not match the message and public key' };
}
