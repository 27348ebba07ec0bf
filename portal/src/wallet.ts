// Wallet sign-in, the same proof as the authorize page: the service builds the EIP-4361 message
// (challenge for the built-in "console" client), the wallet signs it (EVM: personal_sign;
// Keplr-style: signArbitrary, ADR-36), and POST /api/v0/console/session turns it into the cookie.
import { api, call, rememberSession, type SessionInfo } from './api.ts';

const CONSOLE_SCOPES =
  'completeClaims readPrivateClaimData manageClaims manageDynamicStores managePlugins manageDeveloperApps';

interface Eip1193 {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}
interface KeplrLike {
  enable(chainId: string): Promise<void>;
  getKey(chainId: string): Promise<{ bech32Address: string }>;
  signArbitrary(
    chainId: string,
    signer: string,
    data: string,
  ): Promise<{ signature: string; pub_key: { value: string } }>;
}
declare global {
  interface Window {
    ethereum?: Eip1193;
    keplr?: KeplrLike;
  }
}

export type WalletKind = 'evm' | 'keplr';

export const hasWallet = (kind: WalletKind): boolean =>
  kind === 'evm' ? typeof window.ethereum?.request === 'function' : typeof window.keplr?.signArbitrary === 'function';

const toHex = (text: string) =>
  '0x' + Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, '0')).join('');

async function challenge(address: string) {
  return call(api.POST('/api/v0/signin/challenge', { body: { client_id: 'console', scope: CONSOLE_SCOPES, address } }));
}

export async function signInWithWallet(kind: WalletKind, nativeChainId: string): Promise<SessionInfo> {
  if (kind === 'evm') {
    const eth = window.ethereum;
    if (!eth) throw new Error('No EVM wallet found (window.ethereum).');
    const accounts = (await eth.request({ method: 'eth_requestAccounts' })) as string[];
    const account = accounts?.[0];
    if (!account) throw new Error('The wallet returned no account.');
    const ch = await challenge(account);
    const signature = (await eth.request({ method: 'personal_sign', params: [toHex(ch.message), account] })) as string;
    return rememberSession(
      await call(api.POST('/api/v0/console/session', { body: { requestId: ch.requestId, signature } })),
    );
  }
  const k = window.keplr;
  if (!k) throw new Error('No Keplr-style wallet found (window.keplr).');
  await k.enable(nativeChainId);
  const key = await k.getKey(nativeChainId);
  const ch = await challenge(key.bech32Address);
  const sig = await k.signArbitrary(nativeChainId, key.bech32Address, ch.message);
  return rememberSession(
    await call(
      api.POST('/api/v0/console/session', {
        body: { requestId: ch.requestId, signature: sig.signature, publicKey: sig.pub_key.value },
      }),
    ),
  );
}

export async function signOut(): Promise<void> {
  await call(api.DELETE('/api/v0/console/session'));
  rememberSession({
    signedIn: false,
    address: '',
    platformAddress: '',
    chain: '',
    scopes: [],
    expiresAt: '0',
    csrfToken: '',
    nativeChainId: '',
  });
}
