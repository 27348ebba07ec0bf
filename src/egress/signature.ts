// Signed outbound calls (docs/plugins-platform.md): X-Platform-Signature is the lowercase hex HMAC-SHA256,
// keyed with the plugin secret, of `<timestamp>.<exact body bytes>`; X-Platform-Timestamp is
// that timestamp (UNIX ms); X-Platform-Version is 1.
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Platform-Signature';
export const TIMESTAMP_HEADER = 'X-Platform-Timestamp';
export const VERSION_HEADER = 'X-Platform-Version';
export const SIGNATURE_VERSION = '1';

export interface SignatureHeaders {
  'X-Platform-Signature': string;
  'X-Platform-Timestamp': string;
  'X-Platform-Version': string;
}

// a key object per secret, made once: keying an HMAC with one skips the string's conversion (a few
// secrets are in use at once: one per plugin or webhook target; the oldest is dropped beyond this)
const MAX_KEYS = 256;
const keys = new Map<string, KeyObject>();
function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    // the secret is used as the UTF-8 string the owner is given (64 hex characters), as endpoints key it
    key = createSecretKey(secret, 'utf8');
    if (keys.size >= MAX_KEYS) keys.delete(keys.keys().next().value!);
    keys.set(secret, key);
  }
  return key;
}

function mac(secret: string, body: string | Uint8Array, timestamp: string): string {
  const hmac = createHmac('sha256', keyOf(secret));
  // a string body goes in one update with its prefix (one call into OpenSSL instead of two)
  return (
    typeof body === 'string' ? hmac.update(`${timestamp}.${body}`) : hmac.update(`${timestamp}.`).update(body)
  ).digest('hex');
}

/** The three signature headers for one request body (sign the exact bytes that are sent). */
export function signRequest(secret: string, body: string | Uint8Array, timestamp: number): SignatureHeaders {
  const ts = String(timestamp);
  return {
    [SIGNATURE_HEADER]: mac(secret, body, ts),
    [TIMESTAMP_HEADER]: ts,
    [VERSION_HEADER]: SIGNATURE_VERSION,
  } as SignatureHeaders;
}
