// UintRange bounds (src/shared/uint-ranges.ts) through a claim's transferTimes: a decimal string of
// any length is an unsigned integer string, so one past 2^64 - 1 is refused for its size, whatever
// its number of digits.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { getClaim, newClaimId, numUses, ALL_SCOPES } from '../claims/helpers.ts';

const MAX = '18446744073709551615';

describe('UintRange bounds over HTTP', () => {
  const t = useApp({ signedIn: ALL_SCOPES });

  const create = (transferTimes: unknown, claimId = newClaimId()) =>
    t.request('POST', '/api/v0/claims', {
      token: t.session.accessToken,
      body: {
        claims: [
          {
            claimId,
            plugins: [numUses(1), { pluginId: 'transferTimes', instanceId: 'h', publicParams: { transferTimes } }],
          },
        ],
      },
    });
  const FIELD = 'claims[0].plugins[1].publicParams.transferTimes[0]';

  // Bug it catches: a bound of more than 20 digits called "not an unsigned integer string".
  test('a bound past 2^64 - 1 exceeds it, at 20 digits and beyond', async () => {
    for (const [start, end] of [
      ['18446744073709551616', '18446744073709551616'],
      ['1', '18446744073709551616000'],
      ['18446744073709551616000', '18446744073709551616000'],
      ['1', '9'.repeat(21)],
      ['1', '1' + '0'.repeat(100_000)],
    ]) {
      const res = await create([{ start, end }]);
      assert.equal(res.statusCode, 400, `${start.length}/${end.length} digits: ${res.body}`);
      assert.deepEqual(res.json(), { errorMessage: `${FIELD} exceeds ${MAX}` });
    }
  });

  test('leading zeros do not make a bound too large; non-digits are still no unsigned integer string', async () => {
    const claimId = newClaimId();
    const ok = await create([{ start: '0'.repeat(30) + '5', end: '0'.repeat(5) + MAX }], claimId);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual((await getClaim(t, claimId)).plugins[1].publicParams.transferTimes, [{ start: '5', end: MAX }]);
    for (const end of ['1'.repeat(25) + 'x', '-' + '1'.repeat(25), '']) {
      const res = await create([{ start: '1', end }]);
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(res.json(), {
        errorMessage: `${FIELD}.end must be an unsigned integer string (got ${JSON.stringify(end)})`,
      });
    }
  });
});
