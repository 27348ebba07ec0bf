// A real local EVM for the smart-contract wallet tests: Foundry's anvil, from the npm registry
// (`@foundry-rs/anvil` installs the binary of this platform as an optional dependency, with no
// download of its own), on a free loopback port. The service reaches it only over HTTPS through
// the egress rules, so `startRpcProxy` puts the test HTTPS endpoint (test CA) in front of it;
// `proxy.respond(…)` can then make the RPC fail.
//
// The accounts' contracts (accounts.sol beside this file) are compiled with solc-js at test time
// and deployed from anvil's first (unlocked) development account.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import solc from 'solc';
import { createPublicClient, createWalletClient, getAddress, http, type Abi, type Address, type Hex } from 'viem';
import { startHttpsEndpoint, type HttpsEndpoint } from '../https-endpoint.ts';

const here = dirname(fileURLToPath(import.meta.url));

export interface Anvil {
  /** http://127.0.0.1:<port> (for the test's own clients; the service goes through a proxy). */
  url: string;
  chainId: number;
  close(): Promise<void>;
}

/** The anvil binary of this platform, from its registry package. */
function anvilBinary(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  return join(dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`)), 'bin', 'anvil');
}

/** Starts anvil on 127.0.0.1 (port chosen by the system) and waits for its "Listening on" line. */
export async function startAnvil(opts: { chainId?: number } = {}): Promise<Anvil> {
  const chainId = opts.chainId ?? 1;
  const child: ChildProcess = spawn(
    anvilBinary(),
    ['--host', '127.0.0.1', '--port', '0', '--chain-id', String(chainId), '--accounts', '2'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const m = /Listening on (127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        child.stdout!.off('data', onData);
        child.stdout!.resume(); // keep draining: a full pipe would block anvil
        resolve(`http://${m[1]}`);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`anvil exited (${code}) before listening:\n${out}`)));
  });
  return {
    url,
    chainId,
    async close() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** An HTTPS endpoint (test CA) forwarding every JSON-RPC body to anvil, as a hosted RPC provider would. */
export async function startRpcProxy(anvil: Anvil): Promise<HttpsEndpoint & { forward(): void }> {
  const forward = async (req: { rawBody: Buffer }) => {
    const res = await fetch(anvil.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new Uint8Array(req.rawBody),
    });
    return {
      status: res.status,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(await res.arrayBuffer()),
    };
  };
  const endpoint = await startHttpsEndpoint({ handler: forward });
  return Object.assign(endpoint, { forward: () => endpoint.respond(forward) });
}

export interface Compiled {
  abi: Abi;
  bytecode: Hex;
}

let compiled: Record<string, Compiled> | undefined;

/** accounts.sol compiled with solc-js (once per process). */
export function accountContracts(): Record<
  'OwnerAccount' | 'RevertingAccount' | 'WrongMagicAccount' | 'AccountFactory',
  Compiled
> {
  if (!compiled) {
    const input = {
      language: 'Solidity',
      sources: { 'accounts.sol': { content: readFileSync(join(here, 'accounts.sol'), 'utf8') } },
      settings: {
        optimizer: { enabled: true, runs: 200 },
        evmVersion: 'cancun',
        outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
      },
    };
    const out = JSON.parse(solc.compile(JSON.stringify(input))) as {
      errors?: Array<{ severity: string; formattedMessage: string }>;
      contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
    };
    const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
    if (errors.length) throw new Error(`solc: ${errors.map((e) => e.formattedMessage).join('\n')}`);
    compiled = Object.fromEntries(
      Object.entries(out.contracts['accounts.sol']!).map(([name, c]) => [
        name,
        { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` as Hex },
      ]),
    );
  }
  return compiled as ReturnType<typeof accountContracts>;
}

/** Deploys a contract from anvil's first development account; answers its address. */
export async function deploy(anvil: Anvil, contract: Compiled, args: readonly unknown[]): Promise<Address> {
  const transport = http(anvil.url);
  const publicClient = createPublicClient({ transport });
  const [from] = await createWalletClient({ transport }).getAddresses();
  const wallet = createWalletClient({ account: from!, transport });
  const hash = await wallet.deployContract({ abi: contract.abi, bytecode: contract.bytecode, args, chain: null });
  const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (!receipt.contractAddress || receipt.status !== 'success') throw new Error(`deployment failed: ${receipt.status}`);
  return getAddress(receipt.contractAddress);
}

/** The deployed code at an address ('0x' when none). */
export async function codeAt(anvil: Anvil, address: Address): Promise<Hex> {
  return (await createPublicClient({ transport: http(anvil.url) }).getCode({ address })) ?? '0x';
}
