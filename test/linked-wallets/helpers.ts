// Shared steps of the linked-wallets tests: a challenge for a wallet, its signature (EIP-191 with
// viem for an 0x wallet, Keplr's ADR-36 written out by hand for a native one) and the link.
import assert from 'node:assert/strict';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base64, bech32 } from '@scure/base';
import { privateKeyToAccount } from 'viem/accounts';
import type { TestApp } from '../helpers/app.ts';

export const PATH = '/api/v0/linkedWallets';

export async function challenge(t: TestApp, token: string, address: string) {
  return t.request('POST', `${PATH}/challenge`, { token, body: { address } });
}

export async function challengeOk(t: TestApp, token: string, address: string) {
  const res = await challenge(t, token, address);
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { requestId: string; message: string; expiresAt: string };
}

export const signEvm = (privateKey: `0x${string}`, message: string) =>
  privateKeyToAccount(privateKey).signMessage({ message });

/** A native (Cosmos SDK secp256k1) wallet and Keplr's signArbitrary. */
export function nativeWallet() {
  const priv = secp256k1.utils.randomSecretKey();
  const pub = secp256k1.getPublicKey(priv, true);
  const address = bech32.encode('bb', bech32.toWords(ripemd160(sha256(pub))));
  return {
    address,
    sign(message: string) {
      const data = Buffer.from(message, 'utf8').toString('base64');
      const doc = new TextEncoder().encode(
        `{"account_number":"0","chain_id":"","fee":{"amount":[],"gas":"0"},"memo":"","msgs":[{"type":"sign/MsgSignData","value":{"data":"${data}","signer":"${address}"}}],"sequence":"0"}`,
      );
      return { signature: base64.encode(secp256k1.sign(doc, priv)), publicKey: base64.encode(pub) };
    },
  };
}

export function link(t: TestApp, token: string, body: Record<string, unknown>) {
  return t.request('POST', PATH, { token, body });
}

/** Challenge, EIP-191 signature by `privateKey`, link: answers the link. */
export async function linkEvm(t: TestApp, token: string, wallet: { privateKey: `0x${string}`; address: string }) {
  const { requestId, message } = await challengeOk(t, token, wallet.address);
  const res = await link(t, token, { requestId, signature: await signEvm(wallet.privateKey, message) });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().linkedWallet as { address: string; platformAddress: string; chain: string; linkedAt: string };
}

export async function list(t: TestApp, token: string) {
  const res = await t.request('GET', PATH, { token });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as {
    account: string;
    linkedTo: string | null;
    linkedWallets: Array<{ address: string; platformAddress: string; chain: string; linkedAt: string }>;
  };
}

export function unlinkReq(t: TestApp, token: string, address: string) {
  return t.request('DELETE', `${PATH}/${address}`, { token });
}
