// Token exchanges that arrive together share one transaction on SQLite (src/signin/group-commit.ts;
// PostgreSQL runs each in its own). A job that fails must fail alone: the shared transaction is
// rolled back and every job is retried in its own, so the others still sign in. The failure is
// made real by a damaged authorization row (its scopes column is not JSON).
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { authorizeCode, codeExchangeBody } from '../helpers/signin.ts';
import { sha256Hex } from '../../src/shared/crypto.ts';

const TOKEN = '/api/v0/signin/token';

describe('token exchanges sharing a commit', () => {
  const t = useApp();

  test('one exchange that fails does not fail the others, and is not retried into success', async () => {
    const codes = await Promise.all(Array.from({ length: 6 }, () => authorizeCode(t, { scopes: ['completeClaims'] })));
    const damaged = codes[2]!.code;
    await sql`update signin_authorizations set scopes = ${'not json'} where code_hash = ${sha256Hex(damaged)}`.execute(
      t.ctx.db,
    );

    const results = await Promise.all(
      codes.map(({ client, code }) => t.request('POST', TOKEN, { body: codeExchangeBody(client, code) })),
    );
    results.forEach((res, i) => {
      if (i === 2) assert.deepEqual([res.statusCode, res.json()], [500, { errorMessage: 'Internal server error' }]);
      else assert.equal(res.statusCode, 200, res.body);
    });
    // each good exchange committed: its access token is a live session of its own wallet
    for (const [i, res] of results.entries()) {
      if (i === 2) continue;
      const status = await t.request('POST', '/api/v0/auth/status', { token: res.json().access_token, body: {} });
      assert.deepEqual([status.json().signedIn, status.json().address], [true, codes[i]!.account.address]);
    }
    // the damaged code was rolled back with its job, never consumed
    const row = await sql<{
      code_consumed_at: number | null;
    }>`select code_consumed_at from signin_authorizations where code_hash = ${sha256Hex(damaged)}`.execute(t.ctx.db);
    assert.deepEqual(row.rows, [{ code_consumed_at: null }]);
  });
});
