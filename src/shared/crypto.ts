// Small, audited primitives used across capabilities: hashing of secrets, random tokens,
// constant-time comparison, and AES-256-GCM for data encrypted at rest.
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  hash,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

// one-shot `hash` avoids the Hash object that createHash allocates: it is on every request's path
export const sha256Hex = (data: string | Uint8Array): string => hash('sha256', data, 'hex');

export const randomHex = (bytes = 32): string => randomBytes(bytes).toString('hex');

/** Constant-time string equality (length is not secret). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab); // keep the timing of a mismatch close to that of a comparison
    return false;
  }
  return timingSafeEqual(ab, bb);
}

/** Keys derived from the one master secret, each for one purpose. */
export interface Keyring {
  /** Encrypts a UTF-8 string; output is `v1.<iv>.<tag>.<ciphertext>` in base64url. */
  encrypt(plaintext: string): string;
  decrypt(sealed: string): string;
  /** HMAC-SHA256 (base64url) for tamper-evident tokens such as pagination bookmarks. */
  sign(data: string): string;
  verify(data: string, signature: string): boolean;
}

export function createKeyring(master: Buffer): Keyring {
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), info, 32));
  // a KeyObject, made once: given a Buffer, every createCipheriv prepares a new key object
  // (measured: ~4x the cost of the whole AES-GCM call on a short plaintext)
  const encKey = createSecretKey(derive('platform/encryption/v1'));
  const macKey = derive('platform/signing/v1');
  const sign = (data: string) => createHmac('sha256', macKey).update(data).digest('base64url');
  return {
    encrypt(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', encKey, iv);
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join(
        '.',
      );
    },
    decrypt(sealed) {
      const [v, iv, tag, ct] = sealed.split('.');
      if (v !== 'v1' || iv === undefined || tag === undefined || ct === undefined)
        throw new Error('Unsupported ciphertext format');
      const decipher = createDecipheriv('aes-256-gcm', encKey, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    },
    sign,
    verify: (data, signature) => safeEqual(sign(data), signature),
  };
}
