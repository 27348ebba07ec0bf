// Smart-contract wallet sign-in (ERC-1271, ERC-6492) through the real HTTP flow, against a real
// EVM: anvil (chain 1) behind an HTTPS endpoint of the test CA, with account contracts compiled
// from test/helpers/evm/accounts.sol by solc at test time. The service reaches the RPC only through
// its egress rules (test-only loopback allow-list, as the custom-plugin tests use).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import {
  encodeFunctionData,
  getContractAddress,
  hashMessage,
  keccak256,
  serializeErc6492Signature,
  toHex,
  type Address,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { HIGH_S_REASON } from '../../src/signin/verify.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { accountContracts, codeAt, deploy, startAnvil, startRpcProxy, type Anvil } from '../helpers/evm/anvil.ts';
import type { HttpsEndpoint } from '../helpers/https-endpoint.ts';
import { loopbackEgressEnv } from '../helpers/plugins.ts';
import { codeExchangeBody, testAccount, testClient, type TestClient } from '../helpers/signin.ts';
import { originOf } from '../portal/helpers.ts';

const CHALLENGE = '/api/v0/signin/challenge';
const APPROVE = '/api/v0/signin/approve';
/** A provider-style URL: the key in the path must never show in an answer. */
const RPC_PATH = '/v3/secret-provider-key';

const owner = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());

async function challengeFor(t: TestApp, client: TestClient, address: string) {
  const res = await t.request('POST', CHALLENGE, {
    apiKey: null,
    body: { client_id: client.clientId, redirect_uri: client.redirectUri, scope: 'completeClaims', address },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { requestId: string; message: string };
}

/** What a one-owner contract wallet returns for personal_sign: its owner's raw signature of the EIP-191 hash. */
const ownerSignature = (message: string, signer = owner) => signer.sign({ hash: hashMessage(message) });

/** A port nothing listens on (taken and released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('smart-contract wallets (ERC-1271, ERC-6492) with EVM_RPC_URL', () => {
  let anvil: Anvil;
  let rpc: HttpsEndpoint & { forward(): void };
  let t: TestApp;
  let client: TestClient;
  let host: string;
  let factory: Address;
  let account: Address;
  let reverting: Address;
  let wrongMagic: Address;
  const contracts = accountContracts();

  before(async () => {
    anvil = await startAnvil({ chainId: 1 });
    rpc = await startRpcProxy(anvil);
    host = `127.0.0.1:${rpc.port}`;
    factory = await deploy(anvil, contracts.AccountFactory, []);
    account = await deploy(anvil, contracts.OwnerAccount, [owner.address]);
    reverting = await deploy(anvil, contracts.RevertingAccount, [owner.address]);
    wrongMagic = await deploy(anvil, contracts.WrongMagicAccount, [owner.address]);
    // the longest deadline the configuration takes (the default, 5 s, was reached on a loaded machine)
    t = await startApp({
      env: { ...loopbackEgressEnv(), EVM_RPC_URL: `${rpc.origin}${RPC_PATH}`, EVM_RPC_TIMEOUT_MS: '60000' },
    });
    client = await testClient(t);
  });
  after(async () => {
    await t?.close();
    await rpc?.close();
    await anvil?.close();
  });

  test('a deployed account signs in with its owner signature: the code exchange answers the contract address', async () => {
    const { requestId, message } = await challengeFor(t, client, account);
    const before = rpc.requests.length;
    const approve = await t.request('POST', APPROVE, {
      apiKey: null,
      body: { requestId, signature: await ownerSignature(message) },
    });
    assert.equal(approve.statusCode, 200, approve.body);
    // asked of the chain: eth_call on the endpoint's path (the first verification also asked the chain id)
    const calls = rpc.requests.slice(before);
    assert.ok(
      calls.some((r) => r.json?.method === 'eth_call'),
      JSON.stringify(calls.map((r) => r.json?.method)),
    );
    assert.ok(calls.every((r) => r.path === RPC_PATH && r.method === 'POST'));
    const token = await t.request('POST', '/api/v0/signin/token', {
      body: codeExchangeBody(client, approve.json().code),
    });
    assert.equal(token.statusCode, 200, token.body);
    assert.equal(token.json().address, account);
    assert.equal(token.json().chain, 'ETH');
    assert.deepEqual(token.json().verificationResponse, { success: true });
  });

  test('a deployed account refuses a signature by another key (401), and a malformed one is 400', async () => {
    const { requestId, message } = await challengeFor(t, client, account);
    const wrong = await t.request('POST', APPROVE, {
      apiKey: null,
      body: { requestId, signature: await ownerSignature(message, stranger) },
    });
    assert.equal(wrong.statusCode, 401);
    assert.deepEqual(wrong.json(), {
      errorMessage: `Signature does not match the sign-in message for ${account}: it is not this address's ECDSA signature, and no account contract accepted it (ERC-1271 / ERC-6492, through ${host}).`,
      unauthorized: true,
    });
    // shorter than the ERC-6492 suffix: the validator itself reverts reading it
    const short = await t.request('POST', APPROVE, { apiKey: null, body: { requestId, signature: '0x1234' } });
    assert.equal(short.statusCode, 401);
    assert.match(short.json().errorMessage, /checking it on chain reverted/);
    const odd = await t.request('POST', APPROVE, { apiKey: null, body: { requestId, signature: '0x123' } });
    assert.deepEqual(odd.json(), {
      errorMessage:
        "Invalid signature: expected 0x-prefixed hex: a 65-byte personal_sign signature, or a smart-contract account's ERC-1271 or ERC-6492 signature.",
    });
    assert.equal(odd.statusCode, 400);
    // the request was not used up by the failures: the owner's signature still signs in
    const ok = await t.request('POST', APPROVE, {
      apiKey: null,
      body: { requestId, signature: await ownerSignature(message) },
    });
    assert.equal(ok.statusCode, 200, ok.body);
  });

  test('an EOA still signs in offline, and the high-S twin of its signature is refused: no RPC call either way', async () => {
    const eoa = testAccount();
    const { requestId, message } = await challengeFor(t, client, eoa.address);
    const signature = await privateKeyToAccount(eoa.privateKey).signMessage({ message });
    const before = rpc.requests.length;
    // (r, n - s) with the other recovery bit: the validator's ecrecover on chain would accept it
    const s = secp256k1.Signature.fromBytes(hexToBytes(signature.slice(2, 130)), 'compact');
    const twin = `0x${bytesToHex(new secp256k1.Signature(s.r, secp256k1.Point.CURVE().n - s.s).toBytes('compact'))}${signature.endsWith('1b') ? '1c' : '1b'}`;
    const highS = await t.request('POST', APPROVE, { apiKey: null, body: { requestId, signature: twin } });
    assert.equal(highS.statusCode, 400);
    assert.deepEqual(highS.json(), { errorMessage: `Invalid signature: ${HIGH_S_REASON}.` });
    const approve = await t.request('POST', APPROVE, { apiKey: null, body: { requestId, signature } });
    assert.equal(approve.statusCode, 200, approve.body);
    assert.equal(rpc.requests.length, before);
  });

  test('an account not deployed yet signs in through its ERC-6492 wrapped signature (the factory call is simulated, not sent)', async () => {
    const salt = keccak256(toHex('counterfactual-1'));
    const initCode =
      `${contracts.OwnerAccount.bytecode}${owner.address.slice(2).toLowerCase().padStart(64, '0')}` as Hex;
    const counterfactual = getContractAddress({ opcode: 'CREATE2', from: factory, salt, bytecode: initCode });
    assert.equal(await codeAt(anvil, counterfactual), '0x');
    const factoryData = encodeFunctionData({
      abi: contracts.AccountFactory.abi,
      functionName: 'deploy',
      args: [owner.address, salt],
    });
    const wrap = (signature: Hex) => serializeErc6492Signature({ address: factory, data: factoryData, signature });

    const { requestId, message } = await challengeFor(t, client, counterfactual);
    const wrong = await t.request('POST', APPROVE, {
      apiKey: null,
      body: { requestId, signature: wrap(await ownerSignature(message, stranger)) },
    });
    assert.equal(wrong.statusCode, 401, wrong.body);
    assert.match(wrong.json().errorMessage, /no account contract accepted it \(ERC-1271 \/ ERC-6492/);
    const approve = await t.request('POST', APPROVE, {
      apiKey: null,
      body: { requestId, signature: wrap(await ownerSignature(message)) },
    });
    assert.equal(approve.statusCode, 200, approve.body);
    const token = await t.request('POST', '/api/v0/signin/token', {
      body: codeExchangeBody(client, approve.json().code),
    });
    assert.equal(token.json().address, counterfactual);
    assert.equal(await codeAt(anvil, counterfactual), '0x', 'verification deployed nothing');
  });

  test('a contract whose isValidSignature reverts: 401 naming the revert', async () => {
    const { requestId, message } = await challengeFor(t, client, reverting);
    const res = await t.request('POST', APPROVE, {
      apiKey: null,
      body: { requestId, signature: await ownerSignature(message) },
    });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), {
      errorMessage: `Signature does not match the sign-in message for ${reverting}: it is not this address's ECDSA signature, and checking it on chain reverted (the account's ERC-1271 isValidSignature, or the ERC-6492 validator for a malformed signature, through ${host}).`,
      unauthorized: true,
    });
  });

  test('a contract that answers the wrong magic value for its owner signature: 401', async () => {
    const { requestId, message } = await challengeFor(t, client, wrongMagic);
    const res = await t.request('POST', APPROVE, {
      apiKey: null,
      body: { requestId, signature: await ownerSignature(message) },
    });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), {
      errorMessage: `Signature does not match the sign-in message for ${wrongMagic}: it is not this address's ECDSA signature, and no account contract accepted it (ERC-1271 / ERC-6492, through ${host}).`,
      unauthorized: true,
    });
  });

  test('the RPC failing answers 424 naming its host, never its path; the proof works once it is back', async () => {
    const { requestId, message } = await challengeFor(t, client, account);
    const signature = await ownerSignature(message);
    try {
      rpc.respond(() => ({ status: 503, body: 'upstream unavailable' }));
      const down = await t.request('POST', APPROVE, { apiKey: null, body: { requestId, signature } });
      assert.equal(down.statusCode, 424);
      assert.deepEqual(down.json(), {
        errorMessage: `The EVM JSON-RPC endpoint (${host}) could not check this smart-contract wallet signature: it answered HTTP 503 to eth_call. Try again later.`,
      });
      rpc.respond(() => ({
        status: 200,
        body: { jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'rate limited' } },
      }));
      const limited = await t.request('POST', APPROVE, { apiKey: null, body: { requestId, signature } });
      assert.equal(limited.statusCode, 424);
      assert.deepEqual(limited.json(), {
        errorMessage: `The EVM JSON-RPC endpoint (${host}) could not check this smart-contract wallet signature: it answered eth_call with JSON-RPC error -32005: rate limited. Try again later.`,
      });
      rpc.respond(() => ({ status: 302, headers: { location: 'https://elsewhere.example/rpc' } }));
      const moved = await t.request('POST', APPROVE, { apiKey: null, body: { requestId, signature } });
      assert.deepEqual(moved.json(), {
        errorMessage: `The EVM JSON-RPC endpoint (${host}) could not check this smart-contract wallet signature: the endpoint answered 302 (a redirect to https://elsewhere.example/rpc); redirects are not followed. Try again later.`,
      });
      rpc.respond(() => ({ status: 200, body: 'x'.repeat(70_000) }));
      const huge = await t.request('POST', APPROVE, { apiKey: null, body: { requestId, signature } });
      assert.deepEqual(huge.json(), {
        errorMessage: `The EVM JSON-RPC endpoint (${host}) could not check this smart-contract wallet signature: the response body exceeds 65536 bytes. Try again later.`,
      });
      for (const r of [down, limited, moved, huge]) assert.doesNotMatch(r.body, /secret-provider-key/);
    } finally {
      rpc.forward();
    }
    const back = await t.request('POST', APPROVE, { apiKey: null, body: { requestId, signature } });
    assert.equal(back.statusCode, 200, back.body);
  });

  test('a proof the chain accepted is not asked again for the life of its message', async () => {
    // the console checks the proof fully, then refuses it as made for another app without using it up
    const { requestId, message } = await challengeFor(t, client, account);
    const signature = await ownerSignature(message);
    const consoleTry = await t.request('POST', '/api/v0/console/session', {
      apiKey: null,
      headers: { origin: originOf(t), 'sec-fetch-site': 'same-origin' },
      body: { requestId, signature },
    });
    assert.equal(consoleTry.statusCode, 400, consoleTry.body);
    assert.match(consoleTry.json().errorMessage, /made for another app/);
    const before = rpc.requests.length;
    try {
      rpc.respond(() => ({ status: 503, body: 'down' }));
      const approve = await t.request('POST', APPROVE, { apiKey: null, body: { requestId, signature } });
      assert.equal(approve.statusCode, 200, approve.body);
      assert.equal(rpc.requests.length, before, 'no RPC call');
    } finally {
      rpc.forward();
    }
  });

  test('the console signs a contract account in through the same check', async () => {
    const ch = await t.request('POST', CHALLENGE, { apiKey: null, body: { client_id: 'console', address: account } });
    assert.equal(ch.statusCode, 200, ch.body);
    const { requestId, message } = ch.json();
    const res = await t.request('POST', '/api/v0/console/session', {
      apiKey: null,
      headers: { origin: originOf(t), 'sec-fetch-site': 'same-origin' },
      body: { requestId, signature: await ownerSignature(message) },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().address, account);
    assert.match(String(res.headers['set-cookie']), /HttpOnly/);
  });

  test('an RPC slower than EVM_RPC_TIMEOUT_MS: 424 naming the deadline', async () => {
    const slow = await startApp({
      env: { ...loopbackEgressEnv(), EVM_RPC_URL: `${rpc.origin}${RPC_PATH}`, EVM_RPC_TIMEOUT_MS: '200' },
    });
    try {
      const c = await testClient(slow);
      // one check answered first: the connection to the endpoint is open and kept, so the deadline
      // below can only fall while the answer is awaited, however slowly this machine opens TLS (a
      // busy machine may need more than 200 ms for the first connection: the check is asked again)
      for (let tries = 1; ; tries++) {
        const warm = await challengeFor(slow, c, account);
        const ok = await slow.request('POST', APPROVE, {
          apiKey: null,
          body: { requestId: warm.requestId, signature: await ownerSignature(warm.message) },
        });
        if (ok.statusCode === 200) break;
        assert.equal(ok.statusCode, 424, ok.body);
        assert.ok(tries < 50, ok.body);
      }
      const { requestId, message } = await challengeFor(slow, c, account);
      rpc.respond(() => ({ status: 200, body: { jsonrpc: '2.0', id: 1, result: '0x1' }, delayMs: 20_000 }));
      const res = await slow.request('POST', APPROVE, {
        apiKey: null,
        body: { requestId, signature: await ownerSignature(message) },
      });
      assert.equal(res.statusCode, 424);
      assert.deepEqual(res.json(), {
        errorMessage: `The EVM JSON-RPC endpoint (${host}) could not check this smart-contract wallet signature: no complete response within 200 ms. Try again later.`,
      });
    } finally {
      rpc.forward();
      await slow.close();
    }
  });

  test('RPC unreachable (connection refused): 424 naming the host', async () => {
    const port = await closedPort();
    const down = await startApp({
      env: { ...loopbackEgressEnv(), EVM_RPC_URL: `https://127.0.0.1:${port}${RPC_PATH}` },
    });
    try {
      const c = await testClient(down);
      const { requestId, message } = await challengeFor(down, c, account);
      const res = await down.request('POST', APPROVE, {
        apiKey: null,
        body: { requestId, signature: await ownerSignature(message) },
      });
      assert.equal(res.statusCode, 424);
      assert.deepEqual(res.json(), {
        errorMessage: `The EVM JSON-RPC endpoint (127.0.0.1:${port}) could not check this smart-contract wallet signature: the call failed (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:${port}). Try again later.`,
      });
    } finally {
      await down.close();
    }
  });

  test('the egress rules apply: without the loopback allow-list the RPC is refused (424), nothing is sent', async () => {
    const strict = await startApp({
      env: { EGRESS_EXTRA_CA_FILE: loopbackEgressEnv().EGRESS_EXTRA_CA_FILE!, EVM_RPC_URL: `${rpc.origin}${RPC_PATH}` },
    });
    try {
      const c = await testClient(strict);
      const { requestId, message } = await challengeFor(strict, c, account);
      const before = rpc.requests.length;
      const res = await strict.request('POST', APPROVE, {
        apiKey: null,
        body: { requestId, signature: await ownerSignature(message) },
      });
      assert.equal(res.statusCode, 424);
      assert.match(
        res.json().errorMessage,
        new RegExp(
          `^The EVM JSON-RPC endpoint \\(${host}\\) could not check this smart-contract wallet signature: .*loopback.*\\. Try again later\\.$`,
        ),
      );
      assert.equal(rpc.requests.length, before);
    } finally {
      await strict.close();
    }
  });

  test('an RPC of another chain is refused: contract accounts are resolved on the chain the message names (1)', async () => {
    const other = await startAnvil({ chainId: 31337 });
    const otherRpc = await startRpcProxy(other);
    const app = await startApp({ env: { ...loopbackEgressEnv(), EVM_RPC_URL: otherRpc.url } });
    try {
      const c = await testClient(app);
      const { requestId, message } = await challengeFor(app, c, account);
      const res = await app.request('POST', APPROVE, {
        apiKey: null,
        body: { requestId, signature: await ownerSignature(message) },
      });
      assert.equal(res.statusCode, 424);
      assert.deepEqual(res.json(), {
        errorMessage: `The EVM JSON-RPC endpoint (127.0.0.1:${otherRpc.port}) could not check this smart-contract wallet signature: it serves chain 31337, but sign-in messages name chain 1, where contract accounts must be resolved (set EVM_RPC_URL to an endpoint of chain 1). Try again later.`,
      });
    } finally {
      await app.close();
      await otherRpc.close();
      await other.close();
    }
  });

  test('without EVM_RPC_URL a contract account cannot sign in, and nothing is asked of any chain', async () => {
    const off = await startApp({ env: loopbackEgressEnv() });
    try {
      const c = await testClient(off);
      const { requestId, message } = await challengeFor(off, c, account);
      const before = rpc.requests.length;
      const res = await off.request('POST', APPROVE, {
        apiKey: null,
        body: { requestId, signature: await ownerSignature(message) },
      });
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), {
        errorMessage: `Signature does not match the sign-in message for ${account}.`,
        unauthorized: true,
      });
      const long = await off.request('POST', APPROVE, {
        apiKey: null,
        body: { requestId, signature: `0x${'ab'.repeat(200)}` },
      });
      assert.deepEqual(long.json(), {
        errorMessage: 'Invalid signature: expected a 0x-prefixed 65-byte personal_sign signature.',
      });
      assert.equal(rpc.requests.length, before);
    } finally {
      await off.close();
    }
  });
});

describe('EVM_RPC_URL configuration', () => {
  const load = (env: Record<string, string>) => () =>
    loadConfig({
      DATA_DIR: '/tmp/platform-evm-rpc-config',
      SECRET_KEY: '11'.repeat(32),
      LEAF_SIGNER_KEY: '22'.repeat(32),
      ...env,
    });
  const refused = (variable: string, message: string) => (err: unknown) =>
    err instanceof ConfigError &&
    err.variable === variable &&
    err.message === `Invalid configuration: ${variable} ${message}`;

  test('off by default; https only; no user or password; the value itself is never echoed', () => {
    assert.equal(load({})().evmRpc, null);
    assert.deepEqual(load({ EVM_RPC_URL: 'https://rpc.example/v3/key' })().evmRpc, {
      url: 'https://rpc.example/v3/key',
      timeoutMs: 5000,
    });
    assert.deepEqual(load({ EVM_RPC_URL: 'https://rpc.example', EVM_RPC_TIMEOUT_MS: '2500' })().evmRpc, {
      url: 'https://rpc.example',
      timeoutMs: 2500,
    });
    assert.throws(
      load({ EVM_RPC_URL: 'http://rpc.example/v3/key' }),
      refused('EVM_RPC_URL', 'must use https (got "http")'),
    );
    assert.throws(
      load({ EVM_RPC_URL: 'https://user:pw@rpc.example/' }),
      refused(
        'EVM_RPC_URL',
        'must not hold a user or password before the host (a provider key goes in the path) (host "rpc.example")',
      ),
    );
    assert.throws(load({ EVM_RPC_URL: 'not a url/secret-key' }), refused('EVM_RPC_URL', 'must be a URL'));
    assert.throws(
      load({ EVM_RPC_URL: 'https://rpc.example', EVM_RPC_TIMEOUT_MS: '50' }),
      refused('EVM_RPC_TIMEOUT_MS', 'must be an integer from 100 to 60000 (got "50")'),
    );
  });
});
