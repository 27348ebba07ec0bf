// The Skip Go–compatible fallback: a local server answering POST /v2/fungible/msgs_direct in
// Skip's documented schema; its msgs become skipGoMsgs, its operations the assetPath, its
// duration estimatedTime; its 4xx become 400s, its failures 502s.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type TestApp } from '../helpers/app.ts';
import { parseAddress } from '../../src/shared/addresses.ts';
import { deriveAddress } from '../../src/swap/ibc.ts';
import { startSkipServer, type LocalServer } from './fixtures.ts';

const EVM = '0x5555555555555555555555555555555555555555';
const ATOM_OSMO = 'ibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2';

/** A route in Skip's schema: transfer axelar→osmosis, swap on osmosis, transfer osmosis→hub. */
function skipAnswer(body: Record<string, unknown>, over: Record<string, unknown> = {}) {
  const msg = {
    multi_chain_msg: {
      chain_id: 'osmosis-1',
      path: ['osmosis-1', 'cosmoshub-4'],
      msg: JSON.stringify({
        source_port: 'transfer',
        source_channel: 'channel-0',
        token: { denom: 'uosmo', amount: body.amount_in },
        timeout_height: {},
        timeout_timestamp: 1688663426558649000,
        memo: '',
      }),
      msg_type_url: '/ibc.applications.transfer.v1.MsgTransfer',
    },
  };
  return {
    msgs: [msg],
    txs: [
      {
        cosmos_tx: {
          chain_id: 'osmosis-1',
          path: ['osmosis-1'],
          signer_address: 'osmo1x',
          msgs: [{ msg: msg.multi_chain_msg.msg, msg_type_url: msg.multi_chain_msg.msg_type_url }],
        },
        operations_indices: [0],
      },
    ],
    min_amount_out: '106000',
    route: {
      amount_in: body.amount_in,
      amount_out: '107033',
      source_asset_denom: body.source_asset_denom,
      source_asset_chain_id: body.source_asset_chain_id,
      dest_asset_denom: body.dest_asset_denom,
      dest_asset_chain_id: body.dest_asset_chain_id,
      operations: [
        {
          swap: {
            swap_in: {
              swap_venue: { name: 'osmosis-poolmanager', chain_id: 'osmosis-1' },
              swap_operations: [{ pool: '1', denom_in: 'uosmo', denom_out: ATOM_OSMO }],
              swap_amount_in: body.amount_in,
              price_impact_percent: '1.05',
            },
            estimated_affiliate_fee: `0${ATOM_OSMO}`,
            from_chain_id: 'osmosis-1',
            chain_id: 'osmosis-1',
            denom_in: 'uosmo',
            denom_out: ATOM_OSMO,
          },
          tx_index: 0,
          amount_in: body.amount_in,
          amount_out: '107033',
        },
        {
          transfer: {
            port: 'transfer',
            channel: 'channel-0',
            from_chain_id: 'osmosis-1',
            to_chain_id: 'cosmoshub-4',
            pfm_enabled: true,
            supports_memo: true,
            denom_in: ATOM_OSMO,
            denom_out: 'uatom',
            bridge_id: 'IBC',
          },
          tx_index: 0,
          amount_in: '107033',
          amount_out: '107033',
        },
      ],
      chain_ids: ['osmosis-1', 'cosmoshub-4'],
      required_chain_addresses: ['osmosis-1', 'cosmoshub-4'],
      does_swap: true,
      estimated_amount_out: '107033',
      txs_required: 1,
      swap_price_impact_percent: '1.05',
      estimated_route_duration_seconds: 60,
      ...over,
    },
  };
}

describe('routing API fallback (Skip Go schema)', () => {
  let skip: LocalServer & { bodies: Record<string, unknown>[] };
  let t: TestApp;
  let sender: string;
  let respond: (body: Record<string, unknown>) => [number, unknown] = (b) => [200, skipAnswer(b)];

  before(async () => {
    skip = await startSkipServer((b) => respond(b));
    const dir = mkdtempSync(join(tmpdir(), 'ibc-registry-'));
    writeFileSync(
      join(dir, 'r.json'),
      JSON.stringify({
        chains: [
          { chainId: 'osmosis-1', bech32Prefix: 'osmo', channel: 'channel-5', counterpartyChannel: 'channel-750' },
        ],
      }),
    );
    t = await startApp({
      env: { SKIP_API_URL: skip.url, IBC_REGISTRY_FILE: join(dir, 'r.json'), SWAP_UPSTREAM_TIMEOUT_MS: '30000' },
    });
    sender = parseAddress(EVM).platformAddress;
  });
  after(async () => {
    await t.close();
    await skip.close();
  });

  const estimate = (over: Record<string, unknown> = {}) =>
    t.request('POST', '/api/v0/swap/estimate', {
      body: {
        tokenIn: '1000000uosmo',
        tokenInChainId: 'osmosis-1',
        tokenOutDenom: 'uatom',
        tokenOutChainId: 'cosmoshub-4',
        chainIdsToAddresses: { 'platform-1': sender, '1': EVM },
        slippageTolerancePercent: '1.5',
        ...over,
      },
    });

  test('a cross-chain route the service cannot build goes to the routing API and is mapped back', async () => {
    respond = (b) => [200, skipAnswer(b)];
    const res = await estimate({
      chainIdsToAffiliates: {
        'osmosis-1': {
          affiliates: [{ address: 'osmo1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqmcn030', basis_points_fee: '25' }],
        },
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const e = res.json().estimate;
    assert.equal(e.tokenOutAmount, '107033');
    assert.equal(e.tokenInAmount, '1000000');
    assert.equal(e.estimatedTime, 60);
    assert.equal(e.doesSwap, true);
    assert.equal(e.lowLiquidityWarning, false, '1.05% impact is under the 5% threshold');
    assert.deepEqual(e.skipGoMsgs, skipAnswer(skip.bodies[skip.bodies.length - 1]).msgs);
    assert.deepEqual(e.assetPath, [
      { denom: 'uosmo', chainId: 'osmosis-1', how: 'genesis' },
      { denom: ATOM_OSMO, chainId: 'osmosis-1', how: 'swap' },
      { denom: 'uatom', chainId: 'cosmoshub-4', how: 'transfer' },
    ]);
    const sent = skip.bodies[skip.bodies.length - 1];
    assert.equal(sent.source_asset_denom, 'uosmo');
    assert.equal(sent.source_asset_chain_id, 'osmosis-1');
    assert.equal(sent.dest_asset_denom, 'uatom');
    assert.equal(sent.dest_asset_chain_id, 'cosmoshub-4');
    assert.equal(sent.amount_in, '1000000');
    assert.equal(sent.slippage_tolerance_percent, '1.5');
    assert.deepEqual(sent.chain_ids_to_addresses, {
      'platform-1': sender,
      'osmosis-1': deriveAddress(parseAddress(EVM).bytes, 'osmo'),
      '1': EVM,
    });
    assert.deepEqual(sent.chain_ids_to_affiliates, {
      'osmosis-1': { affiliates: [{ address: 'osmo1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqmcn030', basis_points_fee: '25' }] },
    });
  });

  test('an EVM transaction keeps its fields; approvals map token_contract to token', async () => {
    respond = (b) => {
      const a = skipAnswer(b);
      return [
        200,
        {
          ...a,
          msgs: [
            {
              evm_tx: {
                chain_id: '1',
                to: '0xabc',
                value: '0',
                data: '0xdeadbeef',
                required_erc20_approvals: [{ amount: '5', spender: '0xspender', token_contract: '0xtoken' }],
                signer_address: EVM,
              },
            },
          ],
        },
      ];
    };
    const res = await estimate({ tokenIn: '5000xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', tokenInChainId: '1' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().estimate.skipGoMsgs, [
      {
        evm_tx: {
          chain_id: '1',
          to: '0xabc',
          value: '0',
          data: '0xdeadbeef',
          required_erc20_approvals: [{ token: '0xtoken', spender: '0xspender', amount: '5' }],
          signer_address: EVM,
        },
      },
    ]);
  });

  test('a bad-price warning or a high price impact sets lowLiquidityWarning', async () => {
    respond = (b) => [200, skipAnswer(b, { warning: { type: 'BAD_PRICE_WARNING', message: 'bad' } })];
    assert.equal((await estimate()).json().estimate.lowLiquidityWarning, true);
    respond = (b) => [200, skipAnswer(b, { swap_price_impact_percent: '7.5' })];
    assert.equal((await estimate()).json().estimate.lowLiquidityWarning, true);
  });

  test('the routing API refusing the route is a 400 with its message; its failures are 502', async () => {
    respond = () => [
      400,
      {
        code: 3,
        message: 'difference in usd value of route input and output is too large',
        details: [
          { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'BAD_PRICE_ERROR', domain: 'skip.build' },
        ],
      },
    ];
    const refused = await estimate();
    assert.equal(refused.statusCode, 400);
    assert.match(refused.json().errorMessage, /routing API rejected the request: difference in usd value/);
    respond = () => [500, { code: 2, message: 'internal server error', details: [] }];
    const broken = await estimate();
    assert.equal(broken.statusCode, 502);
    assert.equal(broken.json().errorMessage, 'The routing API is unavailable; try again later');
    respond = () => [200, { msgs: 'nope' }];
    assert.equal((await estimate()).statusCode, 502);
    respond = (b) => [200, { ...skipAnswer(b), msgs: [{ svm_tx: { chain_id: 'solana', tx: 'x' } }] }];
    const svm = await estimate();
    assert.equal(svm.statusCode, 400);
    assert.match(svm.json().errorMessage, /other than Cosmos or EVM/);
  });

  test('a routing API that does not answer in time is a 502', async () => {
    // a port that accepts connections but never answers
    const { createServer } = await import('node:net');
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const slow = await startApp({ env: { SKIP_API_URL: `http://127.0.0.1:${port}`, SWAP_UPSTREAM_TIMEOUT_MS: '300' } });
    try {
      const res = await slow.request('POST', '/api/v0/swap/estimate', {
        body: {
          tokenIn: '5uosmo',
          tokenInChainId: 'osmosis-1',
          tokenOutDenom: 'uatom',
          tokenOutChainId: 'cosmoshub-4',
          chainIdsToAddresses: { 'platform-1': sender },
          slippageTolerancePercent: 1,
        },
      });
      assert.equal(res.statusCode, 502); // the port never answers: the 502 itself shows the timeout applied
    } finally {
      await slow.close();
      silent.close();
    }
  });

  test('native routes never call the routing API', async () => {
    const before = skip.bodies.length;
    const res = await estimate({
      tokenIn: '5ubadge',
      tokenInChainId: undefined,
      tokenOutDenom: 'uatom',
      tokenOutChainId: undefined,
    });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().errorMessage, /^No route from ubadge to uatom through the platform pools/);
    assert.equal(skip.bodies.length, before);
  });
});
