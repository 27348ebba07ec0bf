// The reference client's claim calls against a running service, for the partial items of the
// audit: searchClaims matches a regular expression (linear time, bounded, 400 when invalid, paged
// correctly), getClaim always carries trackerDetails, and a claim whose ClaimNumbers plugin's
// number would be dropped is refused at creation, naming the fix.
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { startHttpsEndpoint, type HttpsEndpoint } from '../helpers/https-endpoint.ts';
import { createPlugin, loopbackEgressEnv, PLUGIN_SCOPES } from '../helpers/plugins.ts';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import { newClaimId, numUses } from '../claims/helpers.ts';
import { refusal, sdkClient, type SdkClient } from './sdk.ts';

describe('reference client: claims', () => {
  let ep: HttpsEndpoint;
  let alice: SignedIn;
  let sdk: SdkClient;
  let aliceSdk: SdkClient;
  const tag = `q${Date.now().toString(36)}`;

  before(async () => {
    ep = await startHttpsEndpoint();
  });
  const t = useApp({ listen: true, env: loopbackEgressEnv() });
  before(async () => {
    alice = await signIn(t, { scopes: PLUGIN_SCOPES });
    sdk = sdkClient(t);
    aliceSdk = sdkClient(t, alice.accessToken);
  });
  after(() => ep.close());

  /** A claim as the client types it: metadata with description and image, plugins with a version. */
  const uses = (n: number) => ({ ...numUses(n), version: '1' });
  const claim = (name: string, extra: Record<string, unknown> = {}) => ({
    claimId: newClaimId(),
    metadata: { name, description: '', image: '' },
    plugins: [uses(5)],
    showInSearchResults: true,
    ...extra,
  });

  test('searchClaims: searchValue is a regular expression on the name (case-insensitive), paged over the matches', async () => {
    // 30 matches interleaved with 30 non-matches, created in one request
    const names = Array.from({ length: 60 }, (_, i) => (i % 2 ? `${tag} Audit c${i}` : `${tag} Other ${i}`));
    await aliceSdk.api.createClaims({ claims: names.map((n) => claim(n)) } as never);
    const search = (searchValue: string, bookmark = '') => sdk.api.searchClaims({ searchValue, bookmark } as never);
    const p1 = await search(`${tag} Audit .*`);
    assert.equal(p1.claims.length, 25);
    const raw1 = (
      await t.request('GET', `/api/v0/claims/search?searchValue=${encodeURIComponent(`${tag} Audit .*`)}`)
    ).json();
    assert.equal(raw1.hasMore, true);
    const p2 = await search(`${tag} Audit .*`, p1.bookmark!);
    assert.equal(p2.claims.length, 5);
    assert.equal(p2.bookmark, '');
    const found = [...p1.claims, ...p2.claims].map((c) => c.metadata?.name);
    assert.deepEqual([...found].sort(), names.filter((n) => n.includes('Audit')).sort(), 'each match once');
    assert.deepEqual((await search(`^${tag} audit c(1|3)$`)).claims.map((c) => c.metadata?.name).sort(), [
      `${tag} Audit c1`,
      `${tag} Audit c3`,
    ]);
    assert.deepEqual(
      (await search(`${tag} Audit c5`)).claims.map((c) => c.metadata?.name).sort(),
      [5, 51, 53, 55, 57, 59].map((i) => `${tag} Audit c${i}`).sort(),
      'a search, not a whole-name match',
    );
    // a pattern that backtracking engines take exponential time on answers at once here
    assert.deepEqual((await search(`^(a+)+$${tag}`)).claims, []);
    // refusals
    assert.deepEqual(await refusal(search('Audit (c1')), {
      errorMessage:
        'searchValue is not a valid regular expression: error parsing regexp: missing closing ): `Audit (c1`',
    });
    assert.deepEqual(await refusal(search('(a)\\1')), {
      errorMessage:
        'searchValue is not a valid regular expression: error parsing regexp: invalid escape sequence: `\\1`',
    });
    assert.deepEqual(await refusal(search('a'.repeat(257))), {
      errorMessage: 'querystring.searchValue must NOT have more than 256 characters',
    });
    // a bookmark belongs to its pattern
    assert.deepEqual(await refusal(search(`${tag} Other .*`, p1.bookmark!)), {
      errorMessage: 'Invalid bookmark: it was not issued by this list. Send an empty bookmark for the first page.',
    });
  });

  test('getClaim: trackerDetails is always present, with empty values when the claim is not linked to an on-chain approval', async () => {
    const c = claim(`${tag} standalone`);
    await aliceSdk.api.createClaims({ claims: [c] } as never);
    const raw = (await t.request('GET', `/api/v0/claim/${c.claimId}`)).json().claim;
    assert.deepEqual(raw.trackerDetails, {
      collectionId: '',
      approvalId: '',
      challengeTrackerId: '',
      approvalLevel: '',
      approverAddress: '',
    });
    const viaSdk = await sdk.api.getClaim(c.claimId, {} as never);
    assert.equal(viaSdk.claim.claimId, c.claimId);
    assert.deepEqual(await refusal(sdk.api.getClaim('nosuchclaim', {} as never)), {
      errorMessage: 'Claim nosuchclaim not found',
    });
  });

  test('createClaims: a ClaimNumbers plugin whose number would be dropped is refused, naming the fix', async () => {
    const cn = await createPlugin(t, alice.accessToken, ep.url, {
      stateFunctionPreset: 'ClaimNumbers',
      duplicatesAllowed: true,
    });
    const custom = (instanceId: string) => ({
      pluginId: cn,
      instanceId,
      version: '1',
      publicParams: {},
      privateParams: {},
    });
    assert.deepEqual(
      await refusal(
        aliceSdk.api.createClaims({ claims: [claim(`${tag} cn`, { plugins: [uses(5), custom('cn')] })] } as never),
      ),
      {
        errorMessage:
          'claims[0].assignMethod: plugin instance "cn" uses the ClaimNumbers preset, so its answer is the claim number, but assignMethod does not name it and the number would be dropped: set assignMethod to "cn"',
      },
    );
    assert.deepEqual(
      await refusal(
        aliceSdk.api.createClaims({
          claims: [claim(`${tag} cn`, { plugins: [uses(5), custom('a'), custom('b')], assignMethod: 'a' })],
        } as never),
      ),
      {
        errorMessage:
          'claims[0].plugins: instances "a" and "b" both use the ClaimNumbers preset, but a claim has one claim number: keep one of them',
      },
    );
    // named by assignMethod: accepted
    await aliceSdk.api.createClaims({
      claims: [claim(`${tag} cn ok`, { plugins: [uses(5), custom('cn')], assignMethod: 'cn' })],
    } as never);
  });

  test('a claim through the client: updateClaims, getClaims, simulateClaim, completeClaim, getClaimAttemptStatus, getClaimAttempts, checkClaimSuccess, deleteClaims', async () => {
    const c = claim(`${tag} lifecycle`);
    await aliceSdk.api.createClaims({ claims: [c] } as never);
    await aliceSdk.api.updateClaims({
      claims: [{ ...c, metadata: { name: `${tag} lifecycle 2`, description: '', image: '' }, plugins: [uses(7)] }],
    } as never);
    const fetched = await sdk.api.getClaims({ claimsToFetch: [{ claimId: c.claimId }] });
    assert.deepEqual(
      fetched.claims.map((x) => [x.claimId, x.metadata?.name]),
      [[c.claimId, `${tag} lifecycle 2`]],
    );
    const who = alice.platformAddress;
    const sim = await sdk.api.simulateClaim(c.claimId, who, { _expectedVersion: -1 } as never);
    assert.equal(typeof sim.claimAttemptId, 'string');
    const done = await sdk.api.completeClaim(c.claimId, who, { _expectedVersion: -1 } as never);
    assert.match(done.claimAttemptId, /^[0-9a-f]{32}$/);
    let st = await sdk.api.getClaimAttemptStatus(done.claimAttemptId);
    while (st.success === undefined) {
      await new Promise((r) => setTimeout(r, 20));
      st = await sdk.api.getClaimAttemptStatus(done.claimAttemptId);
    }
    assert.deepEqual([st.success, st.error], [true, '']);
    const attempts = await aliceSdk.api.getClaimAttempts(c.claimId, {} as never);
    assert.deepEqual(
      attempts.docs.map((d) => d.claimAttemptId),
      [done.claimAttemptId],
    );
    const success = await sdk.api.checkClaimSuccess(c.claimId, who);
    assert.deepEqual([success.successCount, success.claimNumbers], [1, [0]]);
    await aliceSdk.api.deleteClaims({ claimIds: [c.claimId] });
    // refusals, one per route
    assert.deepEqual(await refusal(sdk.api.getClaims({ claimsToFetch: [{ claimId: 'bad id!' }] })), {
      errorMessage: 'body.claimsToFetch.0.claimId must match pattern "^[A-Za-z0-9_-]+$"',
    });
    assert.deepEqual(
      await refusal(sdk.api.simulateClaim(c.claimId, who, { _expectedVersion: -1 } as never)),
      { errorMessage: `Claim ${c.claimId} not found` },
      'deleted',
    );
    assert.deepEqual(await refusal(sdk.api.completeClaim('nosuchclaim', who, { _expectedVersion: -1 } as never)), {
      errorMessage: 'Claim nosuchclaim not found',
    });
    assert.deepEqual(await refusal(sdk.api.getClaimAttemptStatus('f'.repeat(32))), {
      errorMessage: `Claim attempt ${'f'.repeat(32)} not found`,
    });
    assert.deepEqual(await refusal(sdk.api.getClaimAttempts(c.claimId, {} as never)), {
      errorMessage: `Claim ${c.claimId} not found`,
    });
    assert.deepEqual(await refusal(sdk.api.checkClaimSuccess('nosuchclaim', who)), {
      errorMessage: 'Claim nosuchclaim not found',
    });
    const noSession = {
      errorMessage:
        'Unauthorized request. This route requires a signed-in session (Authorization: Bearer <access token>).',
      unauthorized: true,
    };
    assert.deepEqual(await refusal(sdk.api.updateClaims({ claims: [c] } as never)), noSession);
    assert.deepEqual(await refusal(sdk.api.deleteClaims({ claimIds: [c.claimId] })), noSession);
  });
});
