// Parallel creates of one claimId: the existence check and the insert are two statements, so on
// PostgreSQL a second transaction can pass the check and then hit the primary key. That race must
// answer the same 409 as the check, never a 500.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import { ALL_SCOPES } from '../claims/helpers.ts';
import assert from 'node:assert/strict';
import { newClaimId, numUses } from './helpers.ts';

describe('concurrent claim creates', () => {
  const t = useApp({ signedIn: ALL_SCOPES });

  // Bug it catches: the primary-key violation of a lost race left unmapped (a 500).
  test('parallel creates of the same claimId: exactly one 200, every other answer the 409', async () => {
    for (let round = 0; round < 3; round++) {
      const claimId = newClaimId();
      const body = { claims: [{ claimId, plugins: [numUses(1)] }] };
      const answers = await Promise.all(
        Array.from({ length: 40 }, () => t.request('POST', '/api/v0/claims', { token: t.session.accessToken, body })),
      );
      const ok = answers.filter((r) => r.statusCode === 200);
      assert.equal(ok.length, 1, answers.map((r) => `${r.statusCode} ${r.body}`).join('\n'));
      for (const r of answers) {
        if (r.statusCode === 200) continue;
        assert.equal(r.statusCode, 409, r.body);
        assert.deepEqual(r.json(), { errorMessage: `A claim with claimId "${claimId}" already exists` });
      }
    }
  });
});
