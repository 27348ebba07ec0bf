// Cases the route fuzzer (routes.test.ts) found, kept as plain regression tests.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { TEST_DB } from '../helpers/app.ts';
import { randomAddress } from '../claims/helpers.ts';

describe('fuzzer regressions', () => {
  const t = useApp({ signedIn: true });

  // Found with seed 20261122 on PostgreSQL: GET /api/v0/dynamicStore/a%00b answered 500 (PostgreSQL
  // refuses U+0000 in text; SQLite stores it, so there it is simply not found).
  test('a NUL character in an id is a 4xx on both databases (400 naming it on PostgreSQL)', async () => {
    const cases: Array<[string, string, unknown?]> = [
      ['GET', '/api/v0/dynamicStore/a%00b'],
      ['GET', '/api/v0/claim/a%00b'],
      ['GET', '/api/v0/developerApp/a%00b'],
      ['POST', `/api/v0/claims/simulate/a%00b/${randomAddress()}`, { _expectedVersion: -1 }],
      [
        'POST',
        '/api/v0/storeActions/single',
        { dynamicDataId: 'a\u0000b', actionName: 'add', payload: { address: randomAddress() } },
      ],
      ['POST', '/api/v1/claims/fetch', { claimsToFetch: [{ claimId: 'a\u0000b' }] }],
    ];
    for (const [method, url, body] of cases) {
      const res = await t.request(method, url, {
        token: t.session.accessToken,
        ...(body !== undefined ? { body } : {}),
      });
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${method} ${url}: ${res.statusCode} ${res.body}`);
      assert.equal(typeof res.json().errorMessage, 'string');
      if (TEST_DB === 'postgres' && res.statusCode === 400 && !/not found/i.test(res.body)) {
        assert.match(res.json().errorMessage, /NUL|U\+0000|must|invalid/i);
      }
    }
  });
});
