// Swap bugs of issue 15: huge accepted amounts answered 500 (decimal overflow in the pool math),
// and with an affiliate fee the message's minimum exceeded the estimate it came with.
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { parseAddress } from '../../src/shared/addresses.ts';
import { balancerOutGivenIn } from '../../src/swap/balancer.ts';
import { parseDec } from '../../src/swap/dec.ts';
import {
  balancerPool,
  randInt,
  rng,
  stableswapPool,
  startChainServer,
  type ChainState,
  type LocalServer,
} from './fixtures.ts';

const USDC = 'ibc/F082B65C88E4B6D5EF1DB243CDA1D331D002759E938A0F5CD3FFDC5D53B3E349';

describe('swap estimate: every amount gets a 200 or a 400; affiliates and the minimum agree', () => {
  let chain: LocalServer & { state: ChainState };
  const sender = parseAddress('0x1111111111111111111111111111111111111111').platformAddress;

  before(async () => {
    chain = await startChainServer({
      pools: [
        balancerPool(1, [
          ['ubadge', 1_000_000_000n],
          [USDC, 1_000_000_000n],
        ]),
        balancerPool(2, [
          ['ubadge', 10n ** 60n, 3],
          ['uatom', 10n ** 60n, 7],
        ]),
        stableswapPool(3, [
          ['uatom', 10n ** 12n],
          ['ustable', 10n ** 12n],
        ]),
      ],
    });
  });
  const t = useApp({ env: () => ({ CHAIN_REST_URL: chain.url, CHAIN_POLL_INTERVAL_MS: '100' }) });
  before(async () => {
    // wait for the first poll
    for (let i = 0; i < 100; i++) {
      const res = await estimate('1000ubadge', USDC);
      if (res.statusCode === 200) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  after(() => chain.close());

  function estimate(tokenIn: string, tokenOutDenom: string, extra: Record<string, unknown> = {}) {
    return t.request('POST', '/api/v0/swap/estimate', {
      body: {
        tokenIn,
        tokenOutDenom,
        chainIdsToAddresses: { 'platform-1': sender },
        slippageTolerancePercent: 1,
        ...extra,
      },
    });
  }

  test('10^77 and 2^256−1 (accepted by validation) are a 400 "Amount too large", not a 500', async () => {
    for (const amount of [10n ** 77n, (1n << 256n) - 1n, 10n ** 76n]) {
      for (const out of [USDC, 'uatom', 'ustable']) {
        const res = await estimate(`${amount}ubadge`, out);
        assert.equal(res.statusCode, 400, `${amount} → ${out}: ${res.body}`);
        assert.match(res.json().errorMessage, /^Amount too large/);
      }
    }
    const over = await estimate(`${1n << 256n}ubadge`, USDC);
    assert.equal(over.statusCode, 400);
    assert.match(over.json().errorMessage, /256-bit/);
  });

  test('random amounts of every magnitude up to 2^256−1: 200 or 400, never 5xx', async () => {
    const r = rng(15);
    const outs = [USDC, 'uatom', 'ustable'];
    for (let i = 0; i < 150; i++) {
      const digits = randInt(r, 1, 78);
      let s = String(randInt(r, 1, 9));
      while (s.length < digits) s += String(randInt(r, 0, 9));
      const amount = BigInt(s) > (1n << 256n) - 1n ? (1n << 256n) - 1n : BigInt(s);
      const res = await estimate(`${amount}ubadge`, outs[i % outs.length]);
      assert.ok(res.statusCode === 200 || res.statusCode === 400, `${amount}: ${res.statusCode} ${res.body}`);
    }
  });

  test('with affiliates the minimum never exceeds the estimate, and both come from one gross output', async () => {
    const gross = balancerOutGivenIn(1_000_000n, 1_000_000_000n, 1n, 1_000_000_000n, 1n, parseDec('0.003')!);
    for (const [bps, slippage] of [
      ['500', 1],
      ['100', 1],
      ['10000', 0.5],
      ['3', 5],
      ['250', 0],
    ] as const) {
      const res = await estimate('1000000ubadge', USDC, {
        slippageTolerancePercent: slippage,
        chainIdsToAffiliates: {
          'platform-1': {
            affiliates: [{ address: '0x2222222222222222222222222222222222222222', basis_points_fee: bps }],
          },
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      const e = res.json().estimate;
      const msg = JSON.parse(e.skipGoMsgs[0].multi_chain_msg.msg);
      const min = BigInt(msg.token_out_min_amount);
      const out = BigInt(e.tokenOutAmount);
      assert.ok(min <= out, `bps ${bps}, slippage ${slippage}: minimum ${min} exceeds the estimate ${out}`);
      // the chain pays floor(min × bps / 10000) out of the gross output: the estimate is what is left
      assert.equal(out, gross - (min * BigInt(bps)) / 10_000n, `bps ${bps}`);
    }
  });
});
