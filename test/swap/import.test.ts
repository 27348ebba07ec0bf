// `platform import-pools FILE` runs in its own process; a running service (no CHAIN_REST_URL)
// picks the new import up from the database within SWAP_IMPORT_POLL_INTERVAL_MS.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, startApp, type TestApp, type TestDatabase } from '../helpers/app.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { parseAddress } from '../../src/shared/addresses.ts';
import { balancerOutGivenIn } from '../../src/swap/balancer.ts';
import { parseDec } from '../../src/swap/dec.ts';
import { stableswapOutGivenIn } from '../../src/swap/stableswap.ts';
import { balancerPool, eventually, stableswapPool } from './fixtures.ts';

const EVM = '0x8888888888888888888888888888888888888888';

describe('import-pools (CLI) reaching a running service', () => {
  let db: TestDatabase;
  let t: TestApp;
  let dir: string;
  let sender: string;

  before(async () => {
    db = createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'pools-'));
    t = await startApp({ database: db, env: { SWAP_IMPORT_POLL_INTERVAL_MS: '100' } });
    sender = parseAddress(EVM).platformAddress;
  });
  after(() => t.close());

  const estimate = (over: Record<string, unknown> = {}) =>
    t.request('POST', '/api/v0/swap/estimate', {
      body: {
        tokenIn: '1000000ubadge',
        tokenOutDenom: 'uusdc',
        chainIdsToAddresses: { 'platform-1': sender },
        slippageTolerancePercent: 1,
        ...over,
      },
    });
  const file = (name: string, doc: unknown) => {
    const p = join(dir, name);
    writeFileSync(p, typeof doc === 'string' ? doc : JSON.stringify(doc));
    return p;
  };

  test('before any import, the estimate says no pools are loaded', async () => {
    const res = await estimate();
    assert.equal(res.statusCode, 400);
    assert.match(
      res.json().errorMessage,
      /no pools are loaded: set CHAIN_REST_URL or run `platform import-pools FILE`/,
    );
  });

  test('an import in the chain REST format (with taker-fee params) is picked up by the running service', async () => {
    const doc = {
      pools: [
        balancerPool(1, [
          ['ubadge', 2_000_000_000n],
          ['uusdc', 1_000_000_000n],
        ]),
        stableswapPool(
          2,
          [
            ['uusdc', 5_000_000_000n],
            ['uusdt', 5_000_000_000n],
          ],
          '0.001',
        ),
        { '@type': '/osmosis.concentratedliquidity.v1beta1.Pool', id: '3', current_tick: '0' },
      ],
      pagination: { next_key: null, total: '3' },
      params: { taker_fee_params: { default_taker_fee: '0.001000000000000000' } },
      denom_pair_taker_fees: [{ token_in_denom: 'uusdc', token_out_denom: 'uusdt', taker_fee: '0.000500000000000000' }],
    };
    const r = await runCliInProcess(['import-pools', file('pools.json', doc)], db.env);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.imported, 2);
    assert.deepEqual(out.skipped, [{ id: '3', type: '/osmosis.concentratedliquidity.v1beta1.Pool' }]);
    assert.equal(out.revision, 1);
    assert.equal(out.defaultTakerFee, '0.001000000000000000');
    assert.equal(out.pairTakerFees, 1);

    const afterFee = (a: bigint, f: string) => (a * (10n ** 18n - parseDec(f)!)) / 10n ** 18n;
    const expected = balancerOutGivenIn(
      afterFee(1_000_000n, '0.001'),
      2_000_000_000n,
      1n,
      1_000_000_000n,
      1n,
      parseDec('0.003')!,
    );
    const e = await eventually(
      async () => {
        const res = await estimate();
        return res.statusCode === 200 ? res.json().estimate : null;
      },
      10_000,
      'the import to reach the service',
    );
    assert.equal(e.tokenOutAmount, expected.toString());
    // the stableswap pool is quoted too, with its directional pair taker fee
    const stable = (await estimate({ tokenIn: '1000000uusdc', tokenOutDenom: 'uusdt' })).json().estimate;
    const reserves = [
      { denom: 'uusdc', amount: 5_000_000_000n, scalingFactor: 1n },
      { denom: 'uusdt', amount: 5_000_000_000n, scalingFactor: 1n },
    ];
    assert.equal(
      stable.tokenOutAmount,
      stableswapOutGivenIn(afterFee(1_000_000n, '0.0005'), 'uusdc', 'uusdt', reserves, parseDec('0.001')!).toString(),
    );
    assert.deepEqual(JSON.parse(stable.skipGoMsgs[0].multi_chain_msg.msg).routes, [
      { pool_id: '2', token_out_denom: 'uusdt' },
    ]);
  });

  test('a later import replaces the set; the service follows', async () => {
    const r = await runCliInProcess(
      [
        'import-pools',
        file('pools2.json', [
          balancerPool(
            7,
            [
              ['ubadge', 1_000_000_000n],
              ['uusdc', 3_000_000_000n],
            ],
            '0.002',
          ),
        ]),
      ],
      db.env,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).revision, 2);
    const expected = balancerOutGivenIn(1_000_000n, 1_000_000_000n, 1n, 3_000_000_000n, 1n, parseDec('0.002')!);
    await eventually(
      async () => (await estimate()).json().estimate?.tokenOutAmount === expected.toString(),
      10_000,
      'the second import',
    );
    const gone = await estimate({ tokenIn: '1000000uusdc', tokenOutDenom: 'uusdt' });
    assert.equal(gone.statusCode, 400, 'pools of the first import are gone');
    const rows = await t.ctx.db.selectFrom('swap_pools').select('pool_id').execute();
    assert.deepEqual(
      rows.map((x) => x.pool_id),
      ['7'],
    );
  });

  test('without CHAIN_REST_URL a tokenization route carries no compliance fields (the check cannot run)', async () => {
    const r = await runCliInProcess(
      [
        'import-pools',
        file('pools3.json', {
          pools: [
            balancerPool(8, [
              ['badgeslp:4:utoken', 1_000_000n],
              ['ubadge', 1_000_000n],
            ]),
          ],
        }),
      ],
      db.env,
    );
    assert.equal(r.code, 0, r.stderr);
    const e = await eventually(
      async () => {
        const res = await estimate({ tokenIn: '1000badgeslp:4:utoken', tokenOutDenom: 'ubadge' });
        return res.statusCode === 200 ? res.json().estimate : null;
      },
      10_000,
      'the third import',
    );
    assert.equal('complianceNotPassedWarning' in e, false);
    assert.equal('complianceErrorMessage' in e, false);
  });

  test('bad files fail with a message and change nothing; usage errors exit 2', async () => {
    const bad = await runCliInProcess(
      [
        'import-pools',
        file('bad.json', {
          pools: [
            balancerPool(1, [
              ['ubadge', '-5'],
              ['uusdc', '5'],
            ]),
          ],
        }),
      ],
      db.env,
    );
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /pools\[0\]\.pool_assets\[0\]\.token\.amount must be an unsigned integer string/);
    const fee = await runCliInProcess(
      [
        'import-pools',
        file('fee.json', {
          pools: [
            balancerPool(
              1,
              [
                ['ubadge', '5'],
                ['uusdc', '5'],
              ],
              '1.5',
            ),
          ],
        }),
      ],
      db.env,
    );
    assert.equal(fee.code, 1);
    assert.match(fee.stderr, /swap_fee must be below 1/);
    const dup = await runCliInProcess(
      [
        'import-pools',
        file('dup.json', {
          pools: [
            balancerPool(1, [
              ['ubadge', '5'],
              ['uusdc', '5'],
            ]),
            balancerPool(1, [
              ['ubadge', '5'],
              ['uusdc', '5'],
            ]),
          ],
        }),
      ],
      db.env,
    );
    assert.equal(dup.code, 1);
    assert.match(dup.stderr, /pool id 1 appears twice/);
    const notJson = await runCliInProcess(['import-pools', file('x.json', '{nope')], db.env);
    assert.equal(notJson.code, 1);
    assert.match(notJson.stderr, /not valid JSON/);
    const missing = await runCliInProcess(['import-pools', join(dir, 'missing.json')], db.env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read the file \(ENOENT\)/);
    const usage = await runCliInProcess(['import-pools'], db.env);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /import-pools needs exactly one FILE/);
    const rows = await t.ctx.db.selectFrom('swap_pools').select('pool_id').execute();
    assert.deepEqual(
      rows.map((x) => x.pool_id),
      ['8'],
      'failed imports left the last good one in place',
    );
  });
});
