// The text a user signs: an EIP-4361 (Sign-In with Ethereum) message. A native (bech32) address
// signs the same text through ADR-36, with "Cosmos" as the account word and the bech32 address.
import type { Chain } from '../shared/addresses.ts';

export const EVM_CHAIN_ID = 1;

export interface SigninMessageFields {
  /** `scheme://` is written only when it is not https (EIP-4361 assumes https when absent). */
  scheme: string;
  /** RFC 3986 authority: host[:port] of this service. */
  domain: string;
  address: string;
  chain: Chain;
  statement: string;
  uri: string;
  chainId: number;
  nonce: string;
  issuedAt: number;
  expiresAt: number;
  requestId: string;
}

/** The stored request a wallet signs for (a link of a social account or of a further wallet). */
export interface SignedRequest {
  address: string;
  chain: Chain;
  nonce: string;
  issued_at: number;
  expires_at: number;
  request_id: string;
}

/**
 * The EIP-4361 text of `row`, for this service at `publicUrl`: its page at `path`, and the
 * statement written for the service's domain.
 */
export function requestMessage(
  publicUrl: string,
  path: string,
  statement: (domain: string) => string,
  row: SignedRequest,
): string {
  const u = new URL(publicUrl);
  return buildSigninMessage({
    scheme: u.protocol.slice(0, -1),
    domain: u.host,
    address: row.address,
    chain: row.chain,
    statement: statement(u.host),
    uri: `${u.origin}${path}`,
    chainId: EVM_CHAIN_ID,
    nonce: row.nonce,
    issuedAt: row.issued_at,
    expiresAt: row.expires_at,
    requestId: row.request_id,
  });
}

const iso = (ms: number) => new Date(ms).toISOString();

export function buildSigninMessage(f: SigninMessageFields): string {
  const account = f.chain === 'ETH' ? 'Ethereum' : 'Cosmos';
  const origin = f.scheme === 'https' ? f.domain : `${f.scheme}://${f.domain}`;
  return [
    `${origin} wants you to sign in with your ${account} account:`,
    f.address,
    '',
    f.statement,
    '',
    `URI: ${f.uri}`,
    'Version: 1',
    `Chain ID: ${f.chainId}`,
    `Nonce: ${f.nonce}`,
    `Issued At: ${iso(f.issuedAt)}`,
    `Expiration Time: ${iso(f.expiresAt)}`,
    `Request ID: ${f.requestId}`,
  ].join('\n');
}

/** Parses a message built by buildSigninMessage back into its fields (null when it does not conform). */
export function parseSigninMessage(
  message: string,
): (Omit<SigninMessageFields, 'chainId'> & { chainId: number }) | null {
  const lines = message.split('\n');
  if (lines.length !== 12) return null;
  const head = /^(?:([a-z][a-z0-9+.-]*):\/\/)?(\S+) wants you to sign in with your (Ethereum|Cosmos) account:$/.exec(
    lines[0],
  );
  if (!head || lines[2] !== '' || lines[4] !== '') return null;
  const field = (i: number, name: string) =>
    lines[i].startsWith(`${name}: `) ? lines[i].slice(name.length + 2) : null;
  const uri = field(5, 'URI');
  const version = field(6, 'Version');
  const chainId = field(7, 'Chain ID');
  const nonce = field(8, 'Nonce');
  const issuedAt = field(9, 'Issued At');
  const expiresAt = field(10, 'Expiration Time');
  const requestId = field(11, 'Request ID');
  if (
    uri === null ||
    version !== '1' ||
    chainId === null ||
    !/^\d+$/.test(chainId) ||
    nonce === null ||
    issuedAt === null ||
    expiresAt === null ||
    requestId === null
  )
    return null;
  return {
    scheme: head[1] ?? 'https',
    domain: head[2],
    chain: head[3] === 'Ethereum' ? 'ETH' : 'Cosmos',
    address: lines[1],
    statement: lines[3],
    uri,
    chainId: Number(chainId),
    nonce,
    issuedAt: Date.parse(issuedAt),
    expiresAt: Date.parse(expiresAt),
    requestId,
  };
}
