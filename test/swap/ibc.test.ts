// IBC: denom hashing (reference vectors), the registry file, and the routes the service builds
// itself: a plain transfer out, an unwinding transfer, a swap-then-transfer, transfers in.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, startApp, type TestApp } from '../helpers/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { buildApp } from '../../src/server.ts';
import { parseAddress } from '../../src/shared/addresses.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { balancerOutGivenIn } from '../../src/swap/balancer.ts';
import { parseDec } from '../../src/swap/dec.ts';
import {
  denomAfterTransfer,
  deriveAddress,
  ibcDenom,
  inboundDenom,
  outboundDenom,
  parseRegistry,
} from '../../src/swap/ibc.ts';
import { balancerPool, startChainServer, type LocalServer } from './fixtures.ts';

describe('ICS-20 denom hashing (reference vectors)', () => {
  test('ibc/ + uppercase hex SHA-256 of the trace path', () => {
    assert.equal(
      ibcDenom('transfer/channel-0/uatom'),
      'ibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2',
    );
    assert.equal(
      ibcDenom('transfer/channel-750/uusdc'),
      'ibc/498A0751C798A0D9A389AA3691123DADA57DAA4FE165D5C75894505B876BA6E4',
    );
    assert.equal(
      ibcDenom('transfer/channel-2/uusdc'),
      'ibc/F082B65C88E4B6D5EF1DB243CDA1D331D002759E938A0F5CD3FFDC5D53B3E349',
    );
    assert.equal(
      ibcDenom('transfer/channel-208/uusdc'),
      'ibc/D189335C6E4A68B513C10AB227BF1C1D38C746766278BA3EEB4FB14124F1D858',
    );
    assert.match(ibcDenom('transfer/channel-3/uatom'), /^ibc\/A4DB47A9.*C2B701$/);
    assert.match(ibcDenom('transfer/channel-0/uosmo'), /^ibc\/ED07A339.*716B8518$/);
  });

  test('crossing a channel prepends the receiving side; returning over the arrival channel unwinds', () => {
    assert.equal(denomAfterTransfer('ubadge', 'channel-5', 'channel-750'), ibcDenom('transfer/channel-750/ubadge'));
    assert.equal(denomAfterTransfer('transfer/channel-2/uusdc', 'channel-2', 'channel-40'), 'uusdc');
    assert.equal(
      denomAfterTransfer('transfer/channel-2/transfer/channel-9/uatom', 'channel-2', 'channel-40'),
      ibcDenom('transfer/channel-9/uatom'),
    );
    assert.equal(
      denomAfterTransfer('transfer/channel-2/uusdc', 'channel-5', 'channel-750'),
      ibcDenom('transfer/channel-750/transfer/channel-2/uusdc'),
    );
  });

  test('registry: validated, with clear messages', () => {
    const reg = parseRegistry({
      chains: [{ chainId: 'noble-1', bech32Prefix: 'noble', channel: 'channel-2', counterpartyChannel: 'channel-40' }],
      denomTraces: ['transfer/channel-2/uusdc'],
    });
    const noble = reg.chains.get('noble-1')!;
    assert.equal(noble.estimatedTransferSeconds, 30, 'default');
    assert.equal(
      outboundDenom(reg, noble, 'ibc/F082B65C88E4B6D5EF1DB243CDA1D331D002759E938A0F5CD3FFDC5D53B3E349'),
      'uusdc',
    );
    assert.equal(
      outboundDenom(reg, noble, `ibc/${'A'.repeat(64)}`),
      null,
      'unknown voucher: its trace cannot be known',
    );
    assert.equal(
      inboundDenom(reg, noble, 'uusdc', []),
      'ibc/F082B65C88E4B6D5EF1DB243CDA1D331D002759E938A0F5CD3FFDC5D53B3E349',
    );
    assert.equal(inboundDenom(reg, noble, ibcDenom('transfer/channel-40/ubadge'), ['ubadge']), 'ubadge');
    const bad = (doc: unknown, re: RegExp) => assert.throws(() => parseRegistry(doc, 'reg'), re);
    bad([], /must be a JSON object/);
    bad({ chains: {} }, /"chains" must be an array/);
    bad({ chains: [], extra: 1 }, /unknown field "extra"/);
    bad(
      {
        chains: [{ chainId: 'platform-1', bech32Prefix: 'bb', channel: 'channel-1', counterpartyChannel: 'channel-1' }],
      },
      /must not be platform-1/,
    );
    bad(
      { chains: [{ chainId: 'x-1', bech32Prefix: 'X', channel: 'channel-1', counterpartyChannel: 'channel-1' }] },
      /bech32Prefix/,
    );
    bad(
      { chains: [{ chainId: 'x-1', bech32Prefix: 'x', channel: 'chan-1', counterpartyChannel: 'channel-1' }] },
      /chains\[0\]\.channel must look like "channel-0"/,
    );
    bad(
      {
        chains: [
          {
            chainId: 'x-1',
            bech32Prefix: 'x',
            channel: 'channel-1',
            counterpartyChannel: 'channel-1',
            estimatedTransferSeconds: 0,
          },
        ],
      },
      /estimatedTransferSeconds/,
    );
    bad(
      {
        chains: [
          { chainId: 'x-1', bech32Prefix: 'x', channel: 'channel-1', counterpartyChannel: 'channel-1' },
          { chainId: 'x-1', bech32Prefix: 'x', channel: 'channel-2', counterpartyChannel: 'channel-1' },
        ],
      },
      /appears twice/,
    );
    bad({ chains: [], denomTraces: ['uusdc'] }, /denomTraces\[0\]/);
  });

  test('addresses on other chains are the same 20 bytes under their prefix', () => {
    const bytes = new Uint8Array(20).fill(0x11);
    assert.match(deriveAddress(bytes, 'osmo'), /^osmo1/);
    assert.equal(parseAddress(deriveAddress(bytes, 'bb')).evmAddress.toLowerCase(), '0x' + '11'.repeat(20));
  });
});

describe('IBC routes built by the service (registry file)', () => {
  const USDC = 'ibc/F082B65C88E4B6D5EF1DB243CDA1D331D002759E938A0F5CD3FFDC5D53B3E349';
  const EVM = '0x4444444444444444444444444444444444444444';
  let chain: LocalServer;
  let t: TestApp;
  let sender: string;
  let clock: ManualClock;
  const bytes = parseAddress(EVM).bytes;

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ibc-registry-'));
    const file = join(dir, 'registry.json');
    writeFileSync(
      file,
      JSON.stringify({
        chains: [
          {
            chainId: 'osmosis-1',
            bech32Prefix: 'osmo',
            channel: 'channel-5',
            counterpartyChannel: 'channel-750',
            estimatedTransferSeconds: 20,
          },
          { chainId: 'noble-1', bech32Prefix: 'noble', channel: 'channel-2', counterpartyChannel: 'channel-40' },
        ],
        denomTraces: ['transfer/channel-2/uusdc'],
      }),
    );
    chain = await startChainServer({
      pools: [
        balancerPool(1, [
          ['ubadge', 1_000_000_000n],
          [USDC, 1_000_000_000n],
        ]),
        balancerPool(2, [
          ['ubadge', 100_000n],
          ['badges:3:gold', 100_000n],
        ]),
      ],
    });
    clock = new ManualClock(1_700_000_000_000);
    t = await startApp({ clock, env: { CHAIN_REST_URL: chain.url, IBC_REGISTRY_FILE: file } });
    sender = parseAddress(EVM).platformAddress;
  });
  after(async () => {
    await t.close();
    await chain.close();
  });

  const estimate = (over: Record<string, unknown>) =>
    t.request('POST', '/api/v0/swap/estimate', {
      body: {
        tokenIn: '1000000ubadge',
        chainIdsToAddresses: { 'platform-1': sender },
        slippageTolerancePercent: 1,
        ...over,
      },
    });
  const timeoutNs = () => ((BigInt(clock.now()) + 300_000n) * 1_000_000n).toString();

  test('a plain transfer out: one MsgTransfer signed on the platform chain', async () => {
    const out = ibcDenom('transfer/channel-750/ubadge');
    const res = await estimate({ tokenOutDenom: out, tokenOutChainId: 'osmosis-1' });
    assert.equal(res.statusCode, 200, res.body);
    const e = res.json().estimate;
    assert.equal(e.tokenOutAmount, '1000000');
    assert.equal(e.doesSwap, false);
    assert.equal(e.estimatedTime, 6 + 20);
    assert.deepEqual(e.assetPath, [
      { denom: 'ubadge', chainId: 'platform-1', how: 'genesis' },
      { denom: out, chainId: 'osmosis-1', how: 'transfer' },
    ]);
    const m = e.skipGoMsgs[0].multi_chain_msg;
    assert.equal(m.msg_type_url, '/ibc.applications.transfer.v1.MsgTransfer');
    assert.equal(m.chain_id, 'platform-1');
    assert.deepEqual(m.path, ['platform-1', 'osmosis-1']);
    assert.deepEqual(JSON.parse(m.msg), {
      source_port: 'transfer',
      source_channel: 'channel-5',
      token: { denom: 'ubadge', amount: '1000000' },
      sender,
      receiver: deriveAddress(bytes, 'osmo'),
      timeout_height: {},
      timeout_timestamp: timeoutNs(),
      memo: '',
    });
  });

  test('a voucher going home unwinds: USDC leaves over its arrival channel as uusdc', async () => {
    const res = await estimate({ tokenIn: `5000${USDC}`, tokenOutDenom: 'uusdc', tokenOutChainId: 'noble-1' });
    assert.equal(res.statusCode, 200, res.body);
    const e = res.json().estimate;
    const msg = JSON.parse(e.skipGoMsgs[0].multi_chain_msg.msg);
    assert.equal(msg.source_channel, 'channel-2');
    assert.deepEqual(msg.token, { denom: USDC, amount: '5000' });
    assert.equal(msg.receiver, deriveAddress(bytes, 'noble'));
    assert.equal(e.estimatedTime, 6 + 30);
  });

  test('swap then transfer: MsgSwapExactAmountInWithIBCTransfer built by the service', async () => {
    const res = await estimate({ tokenOutDenom: 'uusdc', tokenOutChainId: 'noble-1' });
    assert.equal(res.statusCode, 200, res.body);
    const e = res.json().estimate;
    const expected = balancerOutGivenIn(1_000_000n, 1_000_000_000n, 1n, 1_000_000_000n, 1n, parseDec('0.003')!);
    assert.equal(e.tokenOutAmount, expected.toString());
    assert.equal(e.doesSwap, true);
    assert.deepEqual(
      e.assetPath.map((s: { how: string; denom: string; chainId: string }) => `${s.how}:${s.denom}@${s.chainId}`),
      ['genesis:ubadge@platform-1', `swap:${USDC}@platform-1`, 'transfer:uusdc@noble-1'],
    );
    const m = e.skipGoMsgs[0].multi_chain_msg;
    assert.equal(m.msg_type_url, '/gamm.v1beta1.MsgSwapExactAmountInWithIBCTransfer');
    assert.deepEqual(m.path, ['platform-1', 'noble-1']);
    assert.deepEqual(JSON.parse(m.msg), {
      sender,
      routes: [{ pool_id: '1', token_out_denom: USDC }],
      token_in: { denom: 'ubadge', amount: '1000000' },
      token_out_min_amount: ((expected * 99n) / 100n).toString(),
      ibc_transfer_info: {
        source_channel: 'channel-2',
        receiver: deriveAddress(bytes, 'noble'),
        memo: '',
        timeout_timestamp: timeoutNs(),
      },
    });
  });

  test('transfers in: a native coin of the counterparty, and a platform voucher coming home', async () => {
    const res = await estimate({
      tokenIn: '700uosmo',
      tokenInChainId: 'osmosis-1',
      tokenOutDenom: ibcDenom('transfer/channel-5/uosmo'),
    });
    assert.equal(res.statusCode, 200, res.body);
    const e = res.json().estimate;
    assert.equal(e.estimatedTime, 20);
    const m = e.skipGoMsgs[0].multi_chain_msg;
    assert.equal(m.chain_id, 'osmosis-1');
    assert.deepEqual(m.path, ['osmosis-1', 'platform-1']);
    const msg = JSON.parse(m.msg);
    assert.equal(msg.source_channel, 'channel-750');
    assert.equal(msg.sender, deriveAddress(bytes, 'osmo'));
    assert.equal(msg.receiver, sender);
    const home = await estimate({
      tokenIn: `9${ibcDenom('transfer/channel-750/ubadge')}`,
      tokenInChainId: 'osmosis-1',
      tokenOutDenom: 'ubadge',
    });
    assert.equal(home.statusCode, 200, home.body);
    assert.deepEqual(home.json().estimate.assetPath[1], { denom: 'ubadge', chainId: 'platform-1', how: 'transfer' });
  });

  test('routes the service cannot build need a routing API: a clear 400 without SKIP_API_URL', async () => {
    const res = await estimate({
      tokenIn: '700uosmo',
      tokenInChainId: 'osmosis-1',
      tokenOutDenom: 'uusdc',
      tokenOutChainId: 'noble-1',
    });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().errorMessage, /needs a routing API and none is configured \(SKIP_API_URL is not set\)/);
    // tokenization denoms are not bank coins: they cannot leave over ICS-20
    const badges = await estimate({
      tokenIn: '10badges:3:gold',
      tokenOutDenom: ibcDenom('transfer/channel-750/badges:3:gold'),
      tokenOutChainId: 'osmosis-1',
    });
    assert.equal(badges.statusCode, 400);
    assert.match(badges.json().errorMessage, /SKIP_API_URL is not set/);
    const unknownChain = await estimate({ tokenOutDenom: 'uatom', tokenOutChainId: 'cosmoshub-4' });
    assert.equal(unknownChain.statusCode, 400);
  });
});

describe('IBC registry file errors stop the start', () => {
  // builds the app by hand so the database opened before the failure can be closed
  async function startFails(file: string): Promise<string> {
    const db = createTestDatabase();
    const ctx = await createContext(loadConfig({ LOG_LEVEL: 'silent', ...db.env, IBC_REGISTRY_FILE: file }));
    try {
      await buildApp(ctx);
      return 'started';
    } catch (err) {
      return (err as Error).message;
    } finally {
      await ctx.close();
      await db.drop();
    }
  }

  test('an unreadable or invalid IBC_REGISTRY_FILE names the variable', async () => {
    assert.match(await startFails('/nonexistent/registry.json'), /IBC_REGISTRY_FILE cannot be read \(ENOENT\)/);
    const dir = mkdtempSync(join(tmpdir(), 'ibc-registry-'));
    writeFileSync(join(dir, 'bad.json'), '{"chains": [{"chainId": "x-1"}]}');
    assert.match(await startFails(join(dir, 'bad.json')), /IBC_REGISTRY_FILE is invalid: .*chains\[0\]\.bech32Prefix/);
    writeFileSync(join(dir, 'notjson.json'), '{');
    assert.match(await startFails(join(dir, 'notjson.json')), /IBC_REGISTRY_FILE is not valid JSON/);
  });
});
