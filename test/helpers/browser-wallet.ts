// Browser contexts with a wallet injected like an extension, for the Chromium tests: an EIP-1193
// wallet (`window.ethereum`) and a Keplr-style one (`window.keplr`), both signing in Node. Like a
// real wallet, the EVM one signs an EIP-4361 message only when it names the page's own origin and
// this wallet's account.
import type { Browser, BrowserContext } from 'playwright-core';
import { privateKeyToAccount } from 'viem/accounts';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base64, bech32 } from '@scure/base';

export const DESKTOP = { width: 1280, height: 800 };

/** A browser context whose pages have an EIP-1193 wallet signing in Node (viem), like an extension. */
export async function walletContext(browser: Browser, privateKey: `0x${string}`): Promise<BrowserContext> {
  const account = privateKeyToAccount(privateKey);
  const context = await browser.newContext({ viewport: DESKTOP });
  await context.exposeFunction('__testWalletSign', async (hexMessage: `0x${string}`, origin: string) => {
    const text = Buffer.from(hexMessage.slice(2), 'hex').toString('utf8');
    if (!text.startsWith(`${origin} wants you to sign in with your Ethereum account:\n${account.address}\n`))
      throw new Error('wallet refused: domain mismatch');
    return account.signMessage({ message: { raw: hexMessage } });
  });
  await context.addInitScript((address: string) => {
    const w = globalThis as unknown as {
      ethereum: unknown;
      location: { origin: string };
      __testWalletSign: (m: string, o: string) => Promise<string>;
    };
    w.ethereum = {
      async request({ method, params }: { method: string; params?: unknown[] }) {
        if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [address];
        if (method === 'personal_sign') return w.__testWalletSign((params as string[])[0], w.location.origin);
        throw new Error(`unsupported method ${method}`);
      },
    };
  }, account.address);
  return context;
}

/** A context with a Keplr-style wallet (enable / getKey / signArbitrary) whose ADR-36 signing happens in Node. */
export async function keplrContext(
  browser: Browser,
  chainId: string,
): Promise<{ context: BrowserContext; address: string }> {
  const priv = secp256k1.utils.randomSecretKey();
  const pub = secp256k1.getPublicKey(priv, true);
  const address = bech32.encode('bb', bech32.toWords(ripemd160(sha256(pub))));
  const context = await browser.newContext({ viewport: DESKTOP });
  await context.exposeFunction('__testKeplrSign', async (askedChain: string, signer: string, data: string) => {
    if (askedChain !== chainId || signer !== address) throw new Error('wrong chain or signer');
    const doc = `{"account_number":"0","chain_id":"","fee":{"amount":[],"gas":"0"},"memo":"","msgs":[{"type":"sign/MsgSignData","value":{"data":"${Buffer.from(data, 'utf8').toString('base64')}","signer":"${signer}"}}],"sequence":"0"}`;
    return {
      pub_key: { type: 'tendermint/PubKeySecp256k1', value: base64.encode(pub) },
      signature: base64.encode(secp256k1.sign(new TextEncoder().encode(doc), priv)),
    };
  });
  await context.addInitScript(
    ([addr, chain]: string[]) => {
      const w = globalThis as unknown as {
        keplr: unknown;
        __testKeplrSign: (c: string, s: string, d: string) => Promise<unknown>;
      };
      w.keplr = {
        async enable(c: string) {
          if (c !== chain) throw new Error(`unknown chain ${c}`);
        },
        async getKey() {
          return { bech32Address: addr, algo: 'secp256k1' };
        },
        signArbitrary: (c: string, signer: string, data: string) => w.__testKeplrSign(c, signer, data),
      };
    },
    [address, chainId],
  );
  return { context, address };
}
