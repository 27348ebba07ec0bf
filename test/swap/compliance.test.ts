// The compliance check for routes through tokenization denoms: what it evaluates against the
// chain REST endpoint, the 5-minute cache per (sender, route, denoms), forcefulRecheckCompliance.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from '../helpers/app.ts';
import { parseAddress } from '../../src/shared/addresses.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { balancerPool, startChainServer, type ChainState, type LocalServer } from './fixtures.ts';

const EVM = '0x6666666666666666666666666666666666666666';
const LP = 'badgeslp:7:utoken';
const GHOST = 'badges:9:ghost';

describe('compliance check (chain REST)', () => {
  let chain: LocalServer & { state: ChainState };
  let t: TestApp;
  let clock: ManualClock;
  let sender: string;

  before(async () => {
    sender = parseAddress(EVM).platformAddress;
    chain = await startChainServer({
      pools: [
        balancerPool(1, [
          [LP, 1_000_000_000n],
          ['ubadge', 1_000_000_000n],
        ]),
        balancerPool(2, [
          [GHOST, 1_000_000_000n],
          ['ubadge', 1_000_000_000n],
        ]),
        balancerPool(3, [
          ['ubadge', 1_000_000_000n],
          ['uusdc', 1_000_000_000n],
        ]),
      ],
      collections: new Set(['7']),
    });
    chain.state.wrappable[`${LP}|${sender}`] = '500000';
    clock = new ManualClock(1_700_000_000_000);
    t = await startApp({ clock, env: { CHAIN_REST_URL: chain.url } });
  });
  after(async () => {
    await t.close();
    await chain.close();
  });

  const estimate = (over: Record<string, unknown>) =>
    t.request('POST', '/api/v0/swap/estimate', {
      body: {
        tokenOutDenom: 'ubadge',
        chainIdsToAddresses: { 'platform-1': sender },
        slippageTolerancePercent: 1,
        ...over,
      },
    });
  const tokenizationCalls = () =>
    chain.requests.filter((u) => u.startsWith('/bitbadges/bitbadgeschain/tokenization/')).length;

  test('plain denoms pass without any chain lookup', async () => {
    const before = tokenizationCalls();
    const e = (await estimate({ tokenIn: '1000ubadge', tokenOutDenom: 'uusdc' })).json().estimate;
    assert.equal(e.complianceNotPassedWarning, false);
    assert.equal(e.complianceErrorMessage, undefined);
    assert.equal(tokenizationCalls(), before);
  });

  test('the input must be movable by the sender: within the movable amount it passes, beyond it warns', async () => {
    const ok = await estimate({ tokenIn: `100000${LP}` });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().estimate.complianceNotPassedWarning, false);
    const calls = chain.requests.filter((u) => u.includes('/tokenization/'));
    assert.ok(calls.includes('/bitbadges/bitbadgeschain/tokenization/get_collection/7'));
    assert.ok(
      calls.some(
        (u) =>
          u === `/bitbadges/bitbadgeschain/tokenization/get_wrappable_balances/${encodeURIComponent(LP)}/${sender}`,
      ),
    );
    const tooMuch = (await estimate({ tokenIn: `600000${LP}` })).json().estimate;
    assert.equal(tooMuch.complianceNotPassedWarning, true);
    assert.equal(
      tooMuch.complianceErrorMessage,
      `The sender can move at most 500000 ${LP} under the collection's current balances; the swap needs 600000`,
    );
    // the quote itself is still given: the warning rides inside a successful response
    assert.ok(BigInt(tooMuch.tokenOutAmount) > 0n);
  });

  test('a collection missing on chain fails the check, also as the output', async () => {
    const e = (await estimate({ tokenIn: '1000ubadge', tokenOutDenom: GHOST })).json().estimate;
    assert.equal(e.complianceNotPassedWarning, true);
    assert.match(e.complianceErrorMessage, /^Collection 9 does not exist on chain/);
  });

  test('answers are cached 5 minutes per (sender, route, denoms); forcefulRecheckCompliance skips the cache', async () => {
    await estimate({ tokenIn: `100000${LP}` }); // cached now
    const before = tokenizationCalls();
    chain.state.wrappable[`${LP}|${sender}`] = '10';
    const cached = (await estimate({ tokenIn: `100000${LP}` })).json().estimate;
    assert.equal(cached.complianceNotPassedWarning, false, 'served from the cache: the chain change is not seen yet');
    assert.equal(tokenizationCalls(), before, 'no chain lookup');
    // another sender is another cache entry
    const other = parseAddress('0x7777777777777777777777777777777777777777').platformAddress;
    const fresh = (
      await t.request('POST', '/api/v0/swap/estimate', {
        body: {
          tokenIn: `100000${LP}`,
          tokenOutDenom: 'ubadge',
          chainIdsToAddresses: { 'platform-1': other },
          slippageTolerancePercent: 1,
        },
      })
    ).json().estimate;
    assert.equal(fresh.complianceNotPassedWarning, true);
    assert.ok(tokenizationCalls() > before);
    const forced = (await estimate({ tokenIn: `100000${LP}`, forcefulRecheckCompliance: true })).json().estimate;
    assert.equal(forced.complianceNotPassedWarning, true, 'forced recheck sees the chain change');
    chain.state.wrappable[`${LP}|${sender}`] = '500000';
    assert.equal(
      (await estimate({ tokenIn: `100000${LP}` })).json().estimate.complianceNotPassedWarning,
      true,
      'the forced answer was cached',
    );
    clock.advance(5 * 60_000 - 1);
    assert.equal(
      (await estimate({ tokenIn: `100000${LP}` })).json().estimate.complianceNotPassedWarning,
      true,
      'still within 5 minutes',
    );
    clock.advance(1);
    assert.equal(
      (await estimate({ tokenIn: `100000${LP}` })).json().estimate.complianceNotPassedWarning,
      false,
      'expired after 5 minutes',
    );
  });

  test('a chain outage during the check warns and is not cached', async () => {
    chain.state.failWith = 503;
    const down = (await estimate({ tokenIn: `1000${LP}`, forcefulRecheckCompliance: true })).json().estimate;
    assert.equal(down.complianceNotPassedWarning, true);
    assert.match(down.complianceErrorMessage, /^Compliance could not be checked/);
    chain.state.failWith = undefined;
    const back = (await estimate({ tokenIn: `1000${LP}` })).json().estimate;
    assert.equal(back.complianceNotPassedWarning, false);
  });
});
