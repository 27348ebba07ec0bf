// Every request field of POST /api/v0/swap/estimate is validated with a 400 naming the problem.
// test-run: once (request validation: no storage behaviour; scripts/test.mjs)
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { parseAddress } from '../../src/shared/addresses.ts';
import { balancerPool, startChainServer, type LocalServer } from './fixtures.ts';

const EVM = '0x3333333333333333333333333333333333333333';
const USDC = 'ibc/F082B65C88E4B6D5EF1DB243CDA1D331D002759E938A0F5CD3FFDC5D53B3E349';

describe('swap estimate request validation', () => {
  let chain: LocalServer;
  let sender: string;

  before(async () => {
    chain = await startChainServer({
      pools: [
        balancerPool(1, [
          ['ubadge', 1_000_000_000n],
          [USDC, 1_000_000_000n],
        ]),
      ],
    });
  });
  const t = useApp({ env: () => ({ CHAIN_REST_URL: chain.url }) });
  before(async () => {
    sender = parseAddress(EVM).platformAddress;
  });
  after(() => chain.close());

  const valid = () => ({
    tokenIn: '1000000ubadge',
    tokenOutDenom: USDC,
    chainIdsToAddresses: { 'platform-1': sender },
    slippageTolerancePercent: 1,
  });
  async function rejects(change: (b: Record<string, unknown>) => void, message: RegExp) {
    const b: Record<string, unknown> = valid();
    change(b);
    const res = await t.request('POST', '/api/v0/swap/estimate', { body: b });
    assert.equal(res.statusCode, 400, `expected 400 for ${JSON.stringify(b)}, got ${res.statusCode} ${res.body}`);
    assert.match(res.json().errorMessage, message);
  }
  async function accepts(change: (b: Record<string, unknown>) => void) {
    const b: Record<string, unknown> = valid();
    change(b);
    const res = await t.request('POST', '/api/v0/swap/estimate', { body: b });
    assert.equal(res.statusCode, 200, `expected 200 for ${JSON.stringify(b)}: ${res.body}`);
    return res.json();
  }

  test('the valid request passes', async () => {
    await accepts(() => {});
  });

  test('required fields and unknown fields', async () => {
    for (const f of ['tokenIn', 'tokenOutDenom', 'chainIdsToAddresses', 'slippageTolerancePercent']) {
      await rejects((b) => delete b[f], new RegExp(`missing required field "${f}"`));
    }
    await rejects((b) => (b.amount = 5), /unknown field "amount"/);
    await rejects((b) => (b.tokenIn = 1000), /body\.tokenIn must be string/);
    await rejects((b) => (b.isLocalOnly = 'yes'), /body\.isLocalOnly must be boolean/);
    await rejects((b) => (b.forcefulRecheckCompliance = 1), /body\.forcefulRecheckCompliance must be boolean/);
  });

  test('tokenIn: both forms, positive integer amounts, well-formed denoms', async () => {
    await accepts((b) => (b.tokenIn = 'amount:1000000,denom:ubadge'));
    await rejects((b) => (b.tokenIn = 'abc'), /tokenIn must be "<amount><denom>"/);
    await rejects((b) => (b.tokenIn = '1000'), /tokenIn has no denom/);
    await rejects((b) => (b.tokenIn = '0ubadge'), /tokenIn amount must be positive \(got 0\)/);
    await rejects((b) => (b.tokenIn = '-5ubadge'), /tokenIn amount must be a positive integer/);
    await rejects((b) => (b.tokenIn = '1.5ubadge'), /tokenIn amount must be a positive integer/);
    await rejects(
      (b) => (b.tokenIn = 'amount:12x,denom:ubadge'),
      /tokenIn amount must be a positive integer in base units \(got "12x"\)/,
    );
    await rejects((b) => (b.tokenIn = 'amount:,denom:ubadge'), /tokenIn amount is missing/);
    await rejects((b) => (b.tokenIn = 'amount:5,denom:'), /tokenIn denom is missing/);
    await rejects(
      (b) => (b.tokenIn = `${(1n << 256n).toString()}ubadge`),
      /larger than the chain's 256-bit integer limit/,
    );
    await rejects(
      (b) => (b.tokenIn = '5ibc/abc'),
      /tokenIn denom "ibc\/abc" must be ibc\/ followed by 64 uppercase hex characters/,
    );
    await rejects((b) => (b.tokenIn = `5${USDC.toLowerCase()}`), /must be ibc\/ followed by 64 uppercase hex/);
    await rejects((b) => (b.tokenIn = '5badges:abc:token'), /must be badges:<collectionId>:<name>/);
    await rejects((b) => (b.tokenIn = '5badgeslp:0:token'), /must be badgeslp:<collectionId>:<name>/);
    await rejects((b) => (b.tokenIn = '5factory/nope'), /must be factory\/<creator bech32 address>\/<subdenom>/);
    await rejects((b) => (b.tokenIn = '5u'), /must start with a letter and hold 3 to 128/);
  });

  test('tokenOutDenom and chain ids', async () => {
    await rejects((b) => (b.tokenOutDenom = 'ibc/XYZ'), /tokenOutDenom "ibc\/XYZ" must be ibc\//);
    await rejects(
      (b) => (b.tokenOutDenom = 'badges:1:'),
      /tokenOutDenom "badges:1:" must be badges:<collectionId>:<name>/,
    );
    await rejects((b) => (b.tokenInChainId = 'bad chain!'), /tokenInChainId "bad chain!" is not a valid chain id/);
    await rejects((b) => (b.tokenOutChainId = ''), /body\.tokenOutChainId must NOT have fewer than 1 characters/);
    await rejects(
      (b) => ((b.tokenOutChainId = '1'), (b.tokenOutDenom = 'uusdc')),
      /tokenOutDenom "uusdc" must be an ERC-20 contract address/,
    );
  });

  test('chainIdsToAddresses: platform-1 required (either form), 1 an EVM address, no other chains', async () => {
    await rejects((b) => (b.chainIdsToAddresses = {}), /chainIdsToAddresses must include "platform-1"/);
    await rejects((b) => (b.chainIdsToAddresses = { '1': EVM }), /chainIdsToAddresses must include "platform-1"/);
    await rejects(
      (b) => (b.chainIdsToAddresses = { 'platform-1': 'bb1nope' }),
      /Invalid address in chainIdsToAddresses\["platform-1"\]/,
    );
    await rejects(
      (b) => (b.chainIdsToAddresses = { 'platform-1': sender, '1': sender }),
      /chainIdsToAddresses\["1"\] must be an EVM address/,
    );
    await rejects(
      (b) => (b.chainIdsToAddresses = { 'platform-1': sender, 'osmosis-1': 'osmo1abc' }),
      /unsupported chain id "osmosis-1"/,
    );
    await rejects(
      (b) => (b.chainIdsToAddresses = { 'platform-1': 5 }),
      /chainIdsToAddresses\.platform-1 must be string/,
    );
    const r = await accepts((b) => (b.chainIdsToAddresses = { 'platform-1': EVM, '1': EVM }));
    assert.equal(
      JSON.parse(r.estimate.skipGoMsgs[0].multi_chain_msg.msg).sender,
      sender,
      'the 0x form is stored as the native address',
    );
  });

  test('affiliates: basis points 0–10000 each, at most 10000 together, valid addresses', async () => {
    const aff =
      (list: unknown[], chainId = 'platform-1') =>
      (b: Record<string, unknown>) =>
        (b.chainIdsToAffiliates = { [chainId]: { affiliates: list } });
    await accepts(
      aff(
        [
          { address: sender, basis_points_fee: '0' },
          { address: EVM, basis_points_fee: '10000' },
        ].slice(0, 1),
      ),
    );
    await rejects(
      aff([{ address: sender, basis_points_fee: '10001' }]),
      /basis_points_fee must be an integer string from 0 to 10000/,
    );
    await rejects(
      aff([{ address: sender, basis_points_fee: '1.5' }]),
      /affiliates\[0\]\.basis_points_fee must be an integer string/,
    );
    await rejects(aff([{ address: sender, basis_points_fee: 10 }]), /basis_points_fee must be string/);
    await rejects(
      aff([
        { address: sender, basis_points_fee: '6000' },
        { address: sender, basis_points_fee: '5000' },
      ]),
      /add up to 11000; the total must not exceed 10000/,
    );
    await rejects(
      aff([{ address: 'nope', basis_points_fee: '10' }]),
      /Invalid address in chainIdsToAffiliates\["platform-1"\]\.affiliates\[0\]\.address/,
    );
    await rejects(
      aff([{ address: 'cosmos1xyz', basis_points_fee: '10' }], 'cosmoshub-4'),
      /neither a 0x address nor a bech32 address/,
    );
    await rejects(aff([], 'bad chain'), /chainIdsToAffiliates key "bad chain" .*is not a valid chain id/);
    await rejects(aff([{ address: sender, basis_points_fee: '1', extra: 1 }]), /unknown field "extra"/);
    await rejects(
      aff(Array.from({ length: 21 }, () => ({ address: sender, basis_points_fee: '1' }))),
      /has more than 20 entries/,
    );
  });

  test('slippageTolerancePercent: 0 to 100, string or number', async () => {
    await accepts((b) => (b.slippageTolerancePercent = '0'));
    await accepts((b) => (b.slippageTolerancePercent = 100));
    await accepts((b) => (b.slippageTolerancePercent = '0.000000000000000001'));
    await accepts((b) => (b.slippageTolerancePercent = 1e-7));
    await rejects(
      (b) => (b.slippageTolerancePercent = -1),
      /slippageTolerancePercent must be from 0 to 100 \(got -1\)/,
    );
    await rejects((b) => (b.slippageTolerancePercent = '100.5'), /must be from 0 to 100 \(got 100\.5\)/);
    await rejects(
      (b) => (b.slippageTolerancePercent = 'abc'),
      /slippageTolerancePercent must be a number from 0 to 100 \(got "abc"\)/,
    );
    await rejects((b) => (b.slippageTolerancePercent = '0.0000000000000000001'), /more than 18 decimal places/);
    await rejects((b) => (b.slippageTolerancePercent = true), /body\.slippageTolerancePercent must be string,number/);
    await rejects((b) => (b.slippageTolerancePercent = '1e2'), /must be a number from 0 to 100/);
    // strings are plain decimals: no surrounding whitespace
    for (const padded of [' 1', '\t1', '1\n'])
      await rejects((b) => (b.slippageTolerancePercent = padded), /must be a number from 0 to 100/);
  });

  test('isLocalOnly needs both chains to be the platform chain', async () => {
    await accepts((b) => (b.isLocalOnly = true));
    await rejects(
      (b) => ((b.isLocalOnly = true), (b.tokenOutChainId = 'osmosis-1')),
      /isLocalOnly .* must both be platform-1/,
    );
  });

  test('a malformed JSON body is a 400', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v0/swap/estimate',
      headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' },
      payload: '{"tokenIn":',
    });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().errorMessage, /Malformed JSON/);
  });
});
