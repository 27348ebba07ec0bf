// Signed outbound calls (docs/plugins-platform.md): X-Platform-Signature is the lowercase hex HMAC-SHA256,
// keyed with the plugin secret, of `<timestamp>.<exact body bytes>`; X-Platform-Timestamp is
// that timestamp (UNIX ms); X-Platform-Version is 1.
import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Platform-Signature';
export const TIMESTAMP_HEADER = 'X-Platform-Timestamp';
export const VERSION_HEADER = 'X-Platform-Version';
export const SIGNATURE_VERSION = '1';

export interface SignatureHeaders {
  'X-Platform-Signature': string;
  'X-Platform-Timestamp': string;
  'X-Platform-Version': string;
}

function mac(secret: string, body: string | Uint8Array, timestamp: string): Buffer {
  // the secret is used as the UTF-8 string the owner is given (64 hex characters), as endpoints key it
  const hmac = createHmac('sha256', secret);
  // a string body goes in one update with its prefix (one call into OpenSSL instead of two)
  return (
    typeof body === 'string' ? hmac.update(`${timestamp}.${body}`) : hmac.update(`${timestamp}.`).update(body)
  ).digest();
}

/** The three signature headers for one request body (sign the exact bytes that are sent). */
export function signRequest(secret: string, body: string | Uint8Array, timestamp: number): SignatureHeaders {
  const ts = String(timestamp);
  return {
    [SIGNATURE_HEADER]: mac(secret, body, ts).toString('hex'),
    [TIMESTAMP_HEADER]: ts,
    [VERSION_HEADER]: SIGNATURE_VERSION,
  } as SignatureHeaders;
}
