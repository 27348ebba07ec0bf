// POST /api/v0/swap/estimate over HTTP with pools served by a local chain REST endpoint: the
// native route's exact amounts and message shape, warnings, affiliates, the deprecated alias,
// pool-state changes, and the errors for same denom / too small / no route.
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { parseAddress } from '../../src/shared/addresses.ts';
import { balancerOutGivenIn } from '../../src/swap/balancer.ts';
import { parseDec } from '../../src/swap/dec.ts';
import { balancerPool, eventually, startChainServer, type LocalServer, type ChainState } from './fixtures.ts';

const USDC = 'ibc/F082B65C88E4B6D5EF1DB243CDA1D331D002759E938A0F5CD3FFDC5D53B3E349';
const ATOM = 'ibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2';
const EVM = '0x1111111111111111111111111111111111111111';

describe('swap estimate (native pools from the chain REST endpoint)', () => {
  let chain: LocalServer & { state: ChainState };
  let sender: string;

  const basePools = () => [
    balancerPool(1, [
      ['ubadge', 1_000_000_000n],
      [USDC, 1_000_000_000n],
    ]),
    balancerPool(
      2,
      [
        ['ubadge', 5_000_000_000n],
        ['uatom', 2_000_000_000n],
      ],
      '0.002',
    ),
    balancerPool(
      3,
      [
        ['uatom', 3_000_000_000n],
        [ATOM, 3_000_000_000n],
      ],
      '0.001',
    ),
    balancerPool(4, [
      ['ulow', 1000n],
      ['ubadge', 1000n],
    ]),
  ];

  before(async () => {
    chain = await startChainServer({ pools: basePools() });
  });
  const t = useApp({
    env: () => ({ CHAIN_REST_URL: chain.url, CHAIN_POLL_INTERVAL_MS: '100', CHAIN_TAKER_FEE_REFRESH_MS: '1000' }),
  });
  before(async () => {
    sender = parseAddress(EVM).platformAddress;
  });
  after(() => chain.close());

  const body = (over: Record<string, unknown> = {}) => ({
    tokenIn: '1000000ubadge',
    tokenOutDenom: USDC,
    chainIdsToAddresses: { 'platform-1': sender },
    slippageTolerancePercent: 1,
    ...over,
  });
  const estimate = (b: unknown, path = '/api/v0/swap/estimate') => t.request('POST', path, { body: b });

  test('a direct pool: exact chain amount, minimum from slippage, the gamm message in snake_case', async () => {
    const res = await estimate(body());
    assert.equal(res.statusCode, 200, res.body);
    const { success, estimate: e } = res.json();
    assert.equal(success, true);
    const expected = balancerOutGivenIn(1_000_000n, 1_000_000_000n, 1n, 1_000_000_000n, 1n, parseDec('0.003')!);
    assert.equal(e.tokenOutAmount, expected.toString());
    assert.equal(e.tokenInAmount, '1000000');
    assert.equal(e.doesSwap, true);
    assert.equal(e.estimatedTime, 6);
    assert.deepEqual(e.assetPath, [
      { denom: 'ubadge', chainId: 'platform-1', how: 'genesis' },
      { denom: USDC, chainId: 'platform-1', how: 'swap' },
    ]);
    assert.equal(e.skipGoMsgs.length, 1);
    const m = e.skipGoMsgs[0].multi_chain_msg;
    assert.equal(m.chain_id, 'platform-1');
    assert.deepEqual(m.path, ['platform-1']);
    assert.equal(m.msg_type_url, '/gamm.v1beta1.MsgSwapExactAmountIn');
    assert.equal(e.skipGoMsgs[0].evm_tx, undefined);
    const msg = JSON.parse(m.msg);
    assert.deepEqual(Object.keys(msg), ['sender', 'routes', 'token_in', 'token_out_min_amount']);
    assert.equal(msg.sender, sender);
    assert.deepEqual(msg.routes, [{ pool_id: '1', token_out_denom: USDC }]);
    assert.equal(typeof msg.routes[0].pool_id, 'string');
    assert.deepEqual(msg.token_in, { denom: 'ubadge', amount: '1000000' });
    assert.equal(msg.token_out_min_amount, ((expected * 99n) / 100n).toString());
    assert.equal(e.lowLiquidityWarning, false);
    assert.equal(e.complianceNotPassedWarning, false, 'plain denoms pass compliance without a check');
  });

  test('the coin form amount:<n>,denom:<d> gives the same estimate; slippage as a string too', async () => {
    const a = (await estimate(body())).json();
    const b = (await estimate(body({ tokenIn: 'amount:1000000,denom:ubadge', slippageTolerancePercent: '1' }))).json();
    assert.deepEqual(b.estimate.tokenOutAmount, a.estimate.tokenOutAmount);
    assert.equal(
      JSON.parse(b.estimate.skipGoMsgs[0].multi_chain_msg.msg).token_out_min_amount,
      JSON.parse(a.estimate.skipGoMsgs[0].multi_chain_msg.msg).token_out_min_amount,
    );
  });

  test('a two-hop route chains the exact single-hop amounts', async () => {
    const res = await estimate(body({ tokenOutDenom: ATOM, slippageTolerancePercent: '0.5' }));
    assert.equal(res.statusCode, 200, res.body);
    const e = res.json().estimate;
    const hop1 = balancerOutGivenIn(1_000_000n, 5_000_000_000n, 1n, 2_000_000_000n, 1n, parseDec('0.002')!);
    const hop2 = balancerOutGivenIn(hop1, 3_000_000_000n, 1n, 3_000_000_000n, 1n, parseDec('0.001')!);
    assert.equal(e.tokenOutAmount, hop2.toString());
    const msg = JSON.parse(e.skipGoMsgs[0].multi_chain_msg.msg);
    assert.deepEqual(msg.routes, [
      { pool_id: '2', token_out_denom: 'uatom' },
      { pool_id: '3', token_out_denom: ATOM },
    ]);
    assert.equal(msg.token_out_min_amount, ((hop2 * 995n) / 1000n).toString());
    assert.deepEqual(
      e.assetPath.map((s: { how: string; denom: string }) => `${s.how}:${s.denom}`),
      ['genesis:ubadge', 'swap:uatom', `swap:${ATOM}`],
    );
  });

  test('affiliates are paid from the minimum and reduce what the user receives; the minimum is slippage on that; the message carries them', async () => {
    const aff = parseAddress('0x2222222222222222222222222222222222222222').platformAddress;
    const plain = (await estimate(body())).json().estimate;
    const res = await estimate(
      body({
        chainIdsToAffiliates: {
          'platform-1': {
            affiliates: [{ address: '0x2222222222222222222222222222222222222222', basis_points_fee: '100' }],
          },
        },
      }),
    );
    assert.equal(res.statusCode, 200, res.body);
    const e = res.json().estimate;
    const msg = JSON.parse(e.skipGoMsgs[0].multi_chain_msg.msg);
    const min = BigInt(msg.token_out_min_amount);
    assert.ok(
      min < BigInt(JSON.parse(plain.skipGoMsgs[0].multi_chain_msg.msg).token_out_min_amount),
      'slippage applies to what the user receives',
    );
    assert.ok(min <= BigInt(e.tokenOutAmount), 'the minimum never exceeds the estimate');
    assert.deepEqual(msg.affiliates, [{ address: aff, basis_points_fee: '100' }]);
    assert.equal(BigInt(e.tokenOutAmount), BigInt(plain.tokenOutAmount) - (min * 100n) / 10_000n);
  });

  test('the deprecated alias answers the same and says so in a Deprecation header', async () => {
    const res = await estimate(body(), '/api/v0/swaps/estimate');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers.deprecation, 'true');
    assert.match(String(res.headers.link), /<\/api\/v0\/swap\/estimate>; rel="successor-version"/);
    assert.deepEqual(res.json(), (await estimate(body())).json());
    const bad = await estimate(body({ tokenIn: 'x' }), '/api/v0/swaps/estimate');
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.headers.deprecation, 'true');
    const current = await estimate(body());
    assert.equal(current.headers.deprecation, undefined);
  });

  test('the API key is required', async () => {
    const res = await t.request('POST', '/api/v0/swap/estimate', { body: body(), apiKey: null });
    assert.equal(res.statusCode, 401);
  });

  test('low liquidity: a pool below the reserve floor, or a price impact above 5%', async () => {
    const shallow = await estimate(body({ tokenIn: '10ulow', tokenOutDenom: 'ubadge' }));
    assert.equal(shallow.statusCode, 200, shallow.body);
    assert.equal(shallow.json().estimate.lowLiquidityWarning, true);
    // 10% of the pool: impact ≈ 9%
    const big = await estimate(body({ tokenIn: '100000000ubadge' }));
    assert.equal(big.json().estimate.lowLiquidityWarning, true);
    // 3% of the pool: impact ≈ 3% (under the 5% default)
    const mid = await estimate(body({ tokenIn: '30000000ubadge' }));
    assert.equal(mid.json().estimate.lowLiquidityWarning, false);
  });

  test('same denom in and out, an amount too small or too large, and no route each get their own message', async () => {
    const same = await estimate(body({ tokenOutDenom: 'ubadge' }));
    assert.equal(same.statusCode, 400);
    assert.match(same.json().errorMessage, /same denom/);
    const small = await estimate(body({ tokenIn: '1ubadge' }));
    assert.equal(small.statusCode, 400);
    assert.match(small.json().errorMessage, /^Amount too small: 1ubadge yields no /);
    const huge = await estimate(body({ tokenIn: `${10n ** 30n}ubadge` }));
    assert.equal(huge.statusCode, 400);
    assert.match(huge.json().errorMessage, /^Amount too large: /);
    const none = await estimate(body({ tokenOutDenom: 'uunknown' }));
    assert.equal(none.statusCode, 400);
    assert.match(none.json().errorMessage, /^No route from ubadge to uunknown/);
  });

  test('taker fee: charged on each hop before the swap fee; directional pair fees override the default', async () => {
    chain.state.defaultTakerFee = '0.001000000000000000';
    chain.state.pairFees = { [`ubadge|${USDC}`]: '0.002000000000000000' };
    const feeAfter = (amount: bigint, fee: string) => (amount * (10n ** 18n - parseDec(fee)!)) / 10n ** 18n;
    const expected = balancerOutGivenIn(
      feeAfter(1_000_000n, '0.002'),
      1_000_000_000n,
      1n,
      1_000_000_000n,
      1n,
      parseDec('0.003')!,
    );
    await eventually(
      async () => (await estimate(body())).json().estimate?.tokenOutAmount === expected.toString(),
      10_000,
      'pair taker fee',
    );
    const hop1 = balancerOutGivenIn(
      feeAfter(1_000_000n, '0.001'),
      5_000_000_000n,
      1n,
      2_000_000_000n,
      1n,
      parseDec('0.002')!,
    );
    const hop2 = balancerOutGivenIn(
      feeAfter(hop1, '0.001'),
      3_000_000_000n,
      1n,
      3_000_000_000n,
      1n,
      parseDec('0.001')!,
    );
    const two = await estimate(body({ tokenOutDenom: ATOM }));
    assert.equal(two.json().estimate.tokenOutAmount, hop2.toString());
    chain.state.defaultTakerFee = '0.000000000000000000';
    chain.state.pairFees = {};
    const noFee = balancerOutGivenIn(1_000_000n, 1_000_000_000n, 1n, 1_000_000_000n, 1n, parseDec('0.003')!);
    await eventually(
      async () => (await estimate(body())).json().estimate?.tokenOutAmount === noFee.toString(),
      10_000,
      'fees to be reset',
    );
  });

  test('pool state changes: quotes follow the new reserves and routes follow new pools', async () => {
    const before = (await estimate(body())).json().estimate.tokenOutAmount;
    // a deeper direct pool appears: the route switches to it
    chain.state.pools = [
      ...basePools(),
      balancerPool(
        9,
        [
          ['ubadge', 9_000_000_000n],
          [USDC, 9_000_000_000n],
        ],
        '0.001',
      ),
    ];
    const switched = await eventually(
      async () => {
        const e = (await estimate(body())).json().estimate;
        return JSON.parse(e.skipGoMsgs[0].multi_chain_msg.msg).routes[0].pool_id === '9' ? e : null;
      },
      10_000,
      'new pool to be routed',
    );
    assert.equal(
      switched.tokenOutAmount,
      balancerOutGivenIn(1_000_000n, 9_000_000_000n, 1n, 9_000_000_000n, 1n, parseDec('0.001')!).toString(),
    );
    assert.notEqual(switched.tokenOutAmount, before);
    // same pools, new reserves: the quote is recomputed on them
    chain.state.pools = [
      ...basePools(),
      balancerPool(
        9,
        [
          ['ubadge', 9_000_000_000n],
          [USDC, 12_000_000_000n],
        ],
        '0.001',
      ),
    ];
    const expected = balancerOutGivenIn(1_000_000n, 9_000_000_000n, 1n, 12_000_000_000n, 1n, parseDec('0.001')!);
    await eventually(
      async () => (await estimate(body())).json().estimate.tokenOutAmount === expected.toString(),
      10_000,
      'reserves to change',
    );
    chain.state.pools = basePools();
    await eventually(
      async () =>
        JSON.parse((await estimate(body())).json().estimate.skipGoMsgs[0].multi_chain_msg.msg).routes[0].pool_id ===
        '1',
      10_000,
      'pool 9 to go',
    );
  });

  test('when the chain endpoint fails, the last pool state keeps serving', async () => {
    const ok = (await estimate(body())).json().estimate.tokenOutAmount;
    chain.state.failWith = 503;
    await new Promise((r) => setTimeout(r, 300));
    const during = await estimate(body());
    assert.equal(during.statusCode, 200);
    assert.equal(during.json().estimate.tokenOutAmount, ok);
    chain.state.failWith = undefined;
  });
});
