// Debian's chromium driven by playwright-core (never a downloaded browser), headless, for the
// browser tests. CHROMIUM_PATH points at another binary.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { privateKeyToAccount } from 'viem/accounts';
import { PATIENCE_MS } from './patience.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Chromium with no wall-clock limit tuned to a fast machine: every context and page it opens waits
 * up to PATIENCE_MS (Playwright's default is 30 s per action, which a loaded machine can reach).
 * `extraArgs`: more Chromium switches, for one test file's needs.
 */
export async function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install Debian's package (apt-get install -y chromium); .ci/run does this.`,
    );
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
    timeout: PATIENCE_MS,
  });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (...args) => {
    const context = await newContext(...args);
    context.setDefaultTimeout(PATIENCE_MS);
    context.setDefaultNavigationTimeout(PATIENCE_MS);
    return context;
  };
  const newPage = browser.newPage.bind(browser);
  browser.newPage = async (...args) => {
    const page = await newPage(...args);
    page.setDefaultTimeout(PATIENCE_MS);
    page.setDefaultNavigationTimeout(PATIENCE_MS);
    return page;
  };
  return browser;
}

/**
 * Installs an EIP-1193 provider (`window.ethereum`) in the page, standing in for a wallet extension:
 * it answers the account of `privateKey` and signs `personal_sign` in Node (viem). Like a real
 * wallet it refuses an EIP-4361 message whose domain is not the requesting page's. Each signed
 * text is pushed to `signed`.
 */
export async function injectEvmWallet(page: Page, privateKey: `0x${string}`, signed: string[] = []): Promise<void> {
  const wallet = privateKeyToAccount(privateKey);
  await page.exposeFunction('__testWalletSign', async (hexMessage: `0x${string}`, origin: string) => {
    const text = Buffer.from(hexMessage.slice(2), 'hex').toString('utf8');
    if (!text.startsWith(`${origin} wants you to sign in with your Ethereum account:\n${wallet.address}\n`))
      throw new Error(`wallet refused: domain mismatch for ${origin}`);
    signed.push(text);
    return wallet.signMessage({ message: { raw: hexMessage } });
  });
  await page.addInitScript((address: string) => {
    // runs in the page (no DOM types in this project's tsconfig)
    const w = globalThis as unknown as {
      ethereum: unknown;
      location: { origin: string };
      __testWalletSign: (m: string, o: string) => Promise<string>;
    };
    w.ethereum = {
      isTestWallet: true,
      async request({ method, params }: { method: string; params?: unknown[] }) {
        if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [address];
        if (method === 'eth_chainId') return '0x1';
        if (method === 'personal_sign') {
          const [message, from] = params as [string, string];
          if (from.toLowerCase() !== address.toLowerCase()) throw new Error('unknown account');
          return w.__testWalletSign(message, w.location.origin);
        }
        throw new Error(`unsupported method ${method}`);
      },
    };
  }, wallet.address);
}
