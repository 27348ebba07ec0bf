// POST /api/v0/integrations/query/{pluginId}: the address a check runs for. A plugin that checks an
// address (its document's verificationCall.passAddress, docs/hosted-plugins.md) needs one; an invalid one is
// named by the field it came in.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { randomAddress } from '../claims/helpers.ts';
import { evmAddressOf } from '../../src/shared/addresses.ts';

describe('integrations query: platformAddress / ethAddress', () => {
  const t = useApp();
  const query = (id: string, body: Record<string, unknown>) =>
    t.request('POST', `/api/v0/integrations/query/${id}`, { body });

  // Bug it catches: the check run for address '' (must-own-badges passing with no address at all).
  test('plugins that check an address refuse a body without one, naming platformAddress', async () => {
    const params: Record<string, Record<string, unknown>> = {
      'must-own-badges': {
        ownershipRequirements: {
          assets: [
            {
              collectionId: '1',
              assetIds: [{ start: '1', end: '1' }],
              ownershipTimes: [{ start: '1', end: '18446744073709551615' }],
              mustOwnAmounts: { start: '0', end: '0' },
            },
          ],
        },
      },
      'min-badge': { minBalance: 0 },
      'satisfies-claim': { claimIdToCheck: 'other' },
      'username-set': {},
      'github-contributions': { repository: 'owner/name' },
      'username-set-es': {},
    };
    for (const [id, body] of Object.entries(params)) {
      for (const missing of [{}, { platformAddress: null }]) {
        const res = await query(id, { ...body, ...missing });
        assert.equal(res.statusCode, 400, `${id}: ${res.body}`);
        assert.deepEqual(res.json(), {
          errorMessage: `body.platformAddress is required: ${id} checks an address (give it in either form; ethAddress is also accepted)`,
        });
      }
    }
  });

  test('display-only plugins take no address', async () => {
    const res = await query('url-clicker', { url: 'https://example.com/' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {});
    assert.equal((await query('custom-instructions', { instructions: 'Read this' })).statusCode, 200);
  });

  // Bug it catches: an invalid ethAddress reported as body.platformAddress.
  test('an invalid address is named by the field it was given in', async () => {
    const eth = await query('username-set', { ethAddress: '0x1234' });
    assert.equal(eth.statusCode, 400);
    assert.deepEqual(eth.json(), { errorMessage: 'body.ethAddress is not a valid address: "0x1234"' });
    const platform = await query('username-set', { platformAddress: 'bb1nope' });
    assert.equal(platform.statusCode, 400);
    assert.deepEqual(platform.json(), { errorMessage: 'body.platformAddress is not a valid address: "bb1nope"' });
    // a valid ethAddress is the address checked
    const byEth = await query('username-set', { ethAddress: evmAddressOf(randomAddress()) });
    assert.equal(byEth.statusCode, 400);
    assert.deepEqual(byEth.json(), {
      errorMessage: 'No username is set for this address.',
      message: 'No username is set for this address.',
    });
  });
});
