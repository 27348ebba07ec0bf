// Claim documents: who may create / update / delete, validation at create and update, versions,
// explicit state, soft delete, private-param stripping and encryption at rest, batch fetch,
// search (literal, case-insensitive substring; no user regex), and test claims.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { parseAddress } from '../../src/shared/addresses.ts';
import {
  attempt,
  completeAndWait,
  createClaim,
  getClaim,
  manager,
  newClaimId,
  numUses,
  randomAddress,
  status,
} from './helpers.ts';

describe('claim documents', () => {
  let m: SignedIn;
  const clock = new ManualClock(1_700_000_000_000);
  const t = useApp({ clock });
  before(async () => {
    m = await manager(t);
  });

  const post = (body: unknown, token = m.accessToken) => t.request('POST', '/api/v0/claims', { token, body });
  const put = (claims: unknown[], token = m.accessToken) =>
    t.request('PUT', '/api/v0/claims', { token, body: { claims } });
  const del = (claimIds: string[], token = m.accessToken) =>
    t.request('DELETE', '/api/v0/claims', { token, body: { claimIds } });

  test('create needs a session with manageClaims (401 without, 403 without the scope)', async () => {
    const body = { claims: [{ claimId: newClaimId(), plugins: [numUses(1)] }] };
    const none = await t.request('POST', '/api/v0/claims', { body });
    assert.equal(none.statusCode, 401);
    const other = await signIn(t, { scopes: ['completeClaims'] });
    const noScope = await post(body, other.accessToken);
    assert.equal(noScope.statusCode, 403);
    assert.match(noScope.json().errorMessage, /manageClaims/);
    const noKey = await t.request('POST', '/api/v0/claims', { body, token: m.accessToken, apiKey: null });
    assert.equal(noKey.statusCode, 401);
    assert.equal((await post(body)).statusCode, 200);
    const doc = await getClaim(t, body.claims[0].claimId);
    assert.equal(doc.createdBy, m.platformAddress);
    assert.equal(doc.managedBy, m.platformAddress);
    assert.equal(doc.version, '0');
    assert.equal(doc.lastUpdated, String(clock.now()));
    assert.equal(doc.approach, 'api');
    assert.equal(doc.assignMethod, '');
  });

  test('create validation: each failure a 400 naming the problem; duplicates 409', async () => {
    const cases: Array<[unknown, number, RegExp]> = [
      [
        { claimId: 'x1', plugins: [numUses(1, 'bad-id')] },
        400,
        /plugins\[0\]\.instanceId must be 1 to 64 letters or digits/,
      ],
      [
        { claimId: 'x2', plugins: [numUses(1, 'a'), { pluginId: 'halt', instanceId: 'a' }] },
        400,
        /duplicate instance ID "a"/,
      ],
      [
        { claimId: 'x3', plugins: [numUses(1, 'a'), numUses(2, 'b')] },
        400,
        /duplicate plugins are not allowed for type: numUses/,
      ],
      [
        {
          claimId: 'x4',
          plugins: [
            numUses(1, 'a'),
            { pluginId: 'anonymous', instanceId: 'b' },
            { pluginId: 'anonymous', instanceId: 'c' },
          ],
        },
        400,
        /not allowed for type: anonymous/,
      ],
      [
        { claimId: 'x5', plugins: [numUses(1), { pluginId: 'nosuch', instanceId: 'b' }] },
        400,
        /unknown plugin "nosuch"/,
      ],
      [
        { claimId: 'x6', plugins: [{ pluginId: 'codes', instanceId: 'c', publicParams: { numCodes: 1 } }] },
        400,
        /numUses plugin is required/,
      ],
      [{ claimId: 'bad id!', plugins: [numUses(1)] }, 400, /claimId/],
      [{ claimId: 'x7', plugins: [numUses(1)], unknownField: 1 }, 400, /unknown field "unknownField"/],
      [
        {
          claimId: 'x8',
          plugins: [numUses(1)],
          trackerDetails: {
            collectionId: '1',
            approvalId: 'a',
            challengeTrackerId: 'c',
            approvalLevel: 'incoming',
            approverAddress: '',
          },
        },
        400,
        /approverAddress is required/,
      ],
    ];
    for (const [claim, code, re] of cases) {
      const res = await post({ claims: [claim] });
      assert.equal(res.statusCode, code, JSON.stringify(claim));
      assert.match(res.json().errorMessage, re);
    }
    // duplicate plugins of types that allow them are fine
    const ok = await post({
      claims: [
        {
          claimId: newClaimId(),
          plugins: [numUses(1), { pluginId: 'halt', instanceId: 'h1' }, { pluginId: 'halt', instanceId: 'h2' }],
        },
      ],
    });
    assert.equal(ok.statusCode, 200, ok.body);
    const claimId = newClaimId();
    assert.equal((await post({ claims: [{ claimId, plugins: [numUses(1)] }] })).statusCode, 200);
    const again = await post({ claims: [{ claimId, plugins: [numUses(1)] }] });
    assert.equal(again.statusCode, 409);
    // one request is one transaction: a bad second claim leaves the first uncreated
    const first = newClaimId();
    const partial = await post({
      claims: [
        { claimId: first, plugins: [numUses(1)] },
        { claimId: newClaimId(), plugins: [numUses(-1)] },
      ],
    });
    assert.equal(partial.statusCode, 400);
    assert.match(partial.json().errorMessage, /claims\[1\]\.plugins\[0\]\.publicParams\.maxUses/);
    assert.equal((await t.request('GET', `/api/v0/claim/${first}`)).statusCode, 404);
  });

  test('update bumps version and lastUpdated; only creator or manager; _expectedVersion conflicts are 409', async () => {
    const claimId = newClaimId();
    const mgr = await signIn(t, { scopes: ['manageClaims'] });
    await createClaim(t, m.accessToken, {
      claimId,
      plugins: [numUses(5)],
      metadata: { name: 'One' },
      managedBy: mgr.address,
    });
    assert.equal((await getClaim(t, claimId)).managedBy, mgr.platformAddress);
    clock.advance(1000);
    let res = await put([{ claimId, metadata: { name: 'Two' }, _expectedVersion: 0 }]);
    assert.equal(res.statusCode, 200, res.body);
    let doc = await getClaim(t, claimId);
    assert.equal(doc.version, '1');
    assert.equal(doc.lastUpdated, String(clock.now()));
    assert.equal(doc.metadata.name, 'Two');
    assert.equal(doc.plugins.length, 1, 'omitted fields keep their value');
    res = await put([{ claimId, metadata: { name: 'Three' }, _expectedVersion: 0 }]);
    assert.equal(res.statusCode, 409);
    // the manager may update; a stranger may not
    res = await put([{ claimId, showInSearchResults: true }], mgr.accessToken);
    assert.equal(res.statusCode, 200, res.body);
    const stranger = await signIn(t, { scopes: ['manageClaims'] });
    res = await put([{ claimId, showInSearchResults: false }], stranger.accessToken);
    assert.equal(res.statusCode, 403);
    res = await del([claimId], stranger.accessToken);
    assert.equal(res.statusCode, 403);
    res = await put([{ claimId: 'nosuchclaim', showInSearchResults: false }]);
    assert.equal(res.statusCode, 404);
    doc = await getClaim(t, claimId);
    assert.equal(doc.version, '2');
    assert.equal(doc.showInSearchResults, true);
  });

  test('update replaces plugins; omitted privateParams keep the stored ones; resetState and newState', async () => {
    const claimId = newClaimId();
    await createClaim(t, m.accessToken, {
      claimId,
      plugins: [
        numUses(5),
        { pluginId: 'password', instanceId: 'pw', privateParams: { password: 'keep me' } },
        {
          pluginId: 'codes',
          instanceId: 'c1',
          publicParams: { numCodes: 3 },
          privateParams: { codes: ['a', 'b', 'c'] },
        },
      ],
    });
    await completeAndWait(t, claimId, randomAddress(), { pw: { password: 'keep me' }, c1: { code: 'b' } });
    // send back the public document (private params stripped): nothing is lost
    const pub = await getClaim(t, claimId);
    const plugins = pub.plugins.map((p: Record<string, unknown>) => ({
      pluginId: p.pluginId,
      instanceId: p.instanceId,
      version: p.version,
      publicParams: p.publicParams,
    }));
    assert.equal((await put([{ claimId, plugins }])).statusCode, 200);
    const s = await attempt(t, 'simulate', claimId, randomAddress(), {
      pw: { password: 'keep me' },
      c1: { code: 'a' },
    });
    assert.equal(s.statusCode, 200, s.body);
    let doc = await getClaim(t, claimId, 'fetchAllClaimedUsers=true');
    assert.equal(doc.plugins[0].publicState.numUses, 1, 'state survives an update');
    assert.deepEqual(doc.plugins[2].publicState.usedCodeRanges, [{ start: '1', end: '1' }]);

    // explicit state
    const res = await put([
      {
        claimId,
        plugins: [
          { ...plugins[0], newState: { numUses: 4 } },
          plugins[1],
          { ...plugins[2], newState: { usedCodeRanges: [{ start: '0', end: '0' }] } },
        ],
      },
    ]);
    assert.equal(res.statusCode, 200, res.body);
    doc = await getClaim(t, claimId, 'fetchAllClaimedUsers=true');
    assert.equal(doc.plugins[0].publicState.numUses, 4);
    assert.deepEqual(doc.plugins[0].publicState.usedClaimNumbers, [], 'setting numUses clears its ledger');
    assert.deepEqual(doc.plugins[2].publicState.usedCodeRanges, [{ start: '0', end: '0' }]);
    assert.equal(
      (await attempt(t, 'simulate', claimId, randomAddress(), { pw: { password: 'keep me' }, c1: { code: 'b' } }))
        .statusCode,
      200,
      'b is free again',
    );

    // reset
    assert.equal(
      (await put([{ claimId, plugins: [{ ...plugins[0], resetState: true }, plugins[1], plugins[2]] }])).statusCode,
      200,
    );
    doc = await getClaim(t, claimId);
    assert.equal(doc.plugins[0].publicState.numUses, 0);
    const both = await put([{ claimId, plugins: [{ ...plugins[0], resetState: true, newState: { numUses: 1 } }] }]);
    assert.equal(both.statusCode, 400);
    assert.match(both.json().errorMessage, /cannot set both resetState and newState/);
    const badState = await put([{ claimId, plugins: [{ ...plugins[0], newState: { numUses: 'x' } }] }]);
    assert.equal(badState.statusCode, 400);
    assert.match(badState.json().errorMessage, /plugins\[0\]\.newState\.numUses/);
  });

  test('soft delete: the claim drops out of every query; its attempts stay', async () => {
    const claimId = newClaimId();
    await createClaim(t, m.accessToken, {
      claimId,
      plugins: [numUses(5)],
      showInSearchResults: true,
      metadata: { name: `Deleted ${claimId}` },
    });
    const a = await completeAndWait(t, claimId, randomAddress());
    assert.equal((await t.request('GET', `/api/v0/claims/search?searchValue=${claimId}`)).json().claims.length, 1);
    const res = await del([claimId]);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {});
    assert.equal((await t.request('GET', `/api/v0/claim/${claimId}`)).statusCode, 404);
    assert.equal(
      (await t.request('POST', '/api/v1/claims/fetch', { body: { claimsToFetch: [{ claimId }] } })).statusCode,
      404,
    );
    assert.equal((await attempt(t, 'simulate', claimId, randomAddress())).statusCode, 404);
    assert.equal((await attempt(t, 'complete', claimId, randomAddress())).statusCode, 404);
    assert.equal((await t.request('GET', `/api/v0/claims/search?searchValue=${claimId}`)).json().claims.length, 0);
    assert.equal((await put([{ claimId, showInSearchResults: false }])).statusCode, 404);
    assert.equal((await del([claimId])).statusCode, 404);
    // the attempt and the row stay
    assert.equal((await status(t, a.claimAttemptId)).success, true);
    const row = await t.ctx.db
      .selectFrom('claims')
      .select(['deleted_at'])
      .where('claim_id', '=', claimId)
      .executeTakeFirstOrThrow();
    assert.equal(row.deleted_at, clock.now());
    // its id stays taken
    assert.equal((await post({ claims: [{ claimId, plugins: [numUses(1)] }] })).statusCode, 409);
  });

  test('private params: stripped unless creator/manager with readPrivateClaimData asks; encrypted at rest', async () => {
    const claimId = newClaimId();
    const secretList = [randomAddress()];
    await createClaim(t, m.accessToken, {
      claimId,
      plugins: [
        numUses(5),
        { pluginId: 'password', instanceId: 'pw', privateParams: { password: 'p4ssw0rd-unique' } },
        {
          pluginId: 'codes',
          instanceId: 'c1',
          publicParams: { numCodes: 2 },
          privateParams: { codes: ['code-unique-1', 'code-unique-2'] },
        },
        {
          pluginId: 'whitelist',
          instanceId: 'wl',
          publicParams: { hasPrivateList: true },
          privateParams: { list: { addresses: secretList } },
        },
      ],
    });
    const secrets = ['p4ssw0rd-unique', 'code-unique-1', secretList[0]];
    const noPrivate = (doc: Record<string, unknown>) => {
      assert.equal(doc._includesPrivateParams, false);
      for (const s of secrets) assert.ok(!JSON.stringify(doc).includes(s), `leaked ${s}`);
    };
    noPrivate(await getClaim(t, claimId));
    noPrivate(await getClaim(t, claimId, 'fetchPrivateParams=true'));
    noPrivate(await getClaim(t, claimId, '', m.accessToken)); // not asked
    const noScope = await signIn(t, { privateKey: m.privateKey, scopes: ['manageClaims'] });
    noPrivate(await getClaim(t, claimId, 'fetchPrivateParams=true', noScope.accessToken));
    const stranger = await signIn(t, { scopes: ['readPrivateClaimData'] });
    noPrivate(await getClaim(t, claimId, 'fetchPrivateParams=true&privateStatesToFetch=wl', stranger.accessToken));
    const full = await getClaim(t, claimId, 'fetchPrivateParams=true', m.accessToken);
    assert.equal(full._includesPrivateParams, true);
    assert.deepEqual(full.plugins[1].privateParams, { password: 'p4ssw0rd-unique' });
    assert.deepEqual(full.plugins[2].privateParams, { codes: ['code-unique-1', 'code-unique-2'] });
    assert.deepEqual(full.plugins[3].privateParams.list.addresses, secretList);
    const fetched = await t.request('POST', '/api/v1/claims/fetch', {
      token: m.accessToken,
      body: { claimsToFetch: [{ claimId, fetchPrivateParams: true }, { claimId }] },
    });
    assert.equal(fetched.statusCode, 200, fetched.body);
    assert.equal(fetched.json().claims[0]._includesPrivateParams, true);
    assert.equal(fetched.json().claims[1]._includesPrivateParams, false);

    // at rest: no column of the row holds a secret in the clear
    const row = await t.ctx.db
      .selectFrom('claims')
      .selectAll()
      .where('claim_id', '=', claimId)
      .executeTakeFirstOrThrow();
    const raw = JSON.stringify(row);
    for (const s of secrets) assert.ok(!raw.includes(s), `stored in the clear: ${s}`);
    assert.match(row.private_params, /^v1\./);
  });

  test('batch fetch returns documents in order; unknown ids are 404', async () => {
    const ids = [newClaimId(), newClaimId()];
    await post({ claims: ids.map((claimId) => ({ claimId, plugins: [numUses(3)] })) });
    await completeAndWait(t, ids[1], randomAddress());
    const res = await t.request('POST', '/api/v1/claims/fetch', {
      body: { claimsToFetch: [{ claimId: ids[1], fetchAllClaimedUsers: true }, { claimId: ids[0] }] },
    });
    assert.equal(res.statusCode, 200, res.body);
    const [a, b] = res.json().claims;
    assert.equal(a.claimId, ids[1]);
    assert.equal(Object.keys(a.plugins[0].publicState.claimedUsers).length, 1);
    assert.equal(b.claimId, ids[0]);
    assert.equal(b.plugins[0].publicState.claimedUsers, undefined);
    const missing = await t.request('POST', '/api/v1/claims/fetch', {
      body: { claimsToFetch: [{ claimId: ids[0] }, { claimId: 'nope' }] },
    });
    assert.equal(missing.statusCode, 404);
  });

  test('search: case-insensitive regular expression on the name, showInSearchResults only, paginated', async () => {
    const tag = `Zq${Date.now().toString(36)}`;
    const claims = [];
    for (let i = 0; i < 27; i++)
      claims.push({
        claimId: newClaimId('s'),
        plugins: [numUses(1)],
        showInSearchResults: true,
        metadata: { name: `Alpha ${tag} number ${i}` },
      });
    claims.push({
      claimId: newClaimId('h'),
      plugins: [numUses(1)],
      showInSearchResults: false,
      metadata: { name: `Alpha ${tag} hidden` },
    });
    claims.push({
      claimId: newClaimId('r'),
      plugins: [numUses(1)],
      showInSearchResults: true,
      metadata: { name: `Regex ${tag} .* (a+)+$ 100%_off` },
    });
    assert.equal((await post({ claims: claims.slice(0, 20) })).statusCode, 200);
    assert.equal((await post({ claims: claims.slice(20) })).statusCode, 200);
    const search = async (v: string, bookmark = '') => {
      const res = await t.get(
        `/api/v0/claims/search?searchValue=${encodeURIComponent(v)}&bookmark=${encodeURIComponent(bookmark)}`,
      );
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    const first = await search(`alpha ${tag.toUpperCase()}`);
    assert.equal(first.claims.length, 25);
    assert.equal(first.hasMore, true);
    const second = await search(`alpha ${tag.toUpperCase()}`, first.bookmark);
    assert.equal(second.claims.length, 2);
    assert.equal(second.hasMore, false);
    assert.equal(second.bookmark, '');
    const names = [...first.claims, ...second.claims].map((c) => c.metadata.name);
    assert.equal(new Set(names).size, 27);
    assert.ok(!names.some((n) => n.includes('hidden')));
    // a regular expression (RE2: linear time, nothing backtracks); metacharacters match as such
    assert.deepEqual((await search(`${tag} .*`)).claims.length, 25);
    assert.deepEqual(
      (await search(`${tag} \\.\\* \\(a\\+\\)\\+\\$`)).claims.map((c) => c.metadata.name),
      [`Regex ${tag} .* (a+)+$ 100%_off`],
      'escaped metacharacters are literal',
    );
    assert.equal((await search(`${tag} (a+)+$`)).claims.length, 0);
    assert.equal((await search(`100%_off`)).claims.length, 1);
    assert.equal((await search(`100%%off`)).claims.length, 0, '% is literal');
    await search(`${'a'.repeat(200)}!`);
    await search(`(${'a+'.repeat(60)})+$`);
    // they answered at all: with backtracking regular expressions the second one would not end
    const bad = await t.request('GET', `/api/v0/claims/search?searchValue=x&bookmark=garbage`);
    assert.equal(bad.statusCode, 400);
  });

  test('testClaims: never in search, expire with the session (1 day)', async () => {
    const claimId = newClaimId('t');
    const res = await post({
      claims: [{ claimId, plugins: [numUses(1)], showInSearchResults: true, metadata: { name: `Test ${claimId}` } }],
      testClaims: true,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await getClaim(t, claimId)).testOnly, true);
    assert.equal((await t.request('GET', `/api/v0/claims/search?searchValue=${claimId}`)).json().claims.length, 0);
    assert.equal((await attempt(t, 'simulate', claimId, randomAddress())).statusCode, 200);
    clock.advance(24 * 60 * 60 * 1000 + 1);
    assert.equal((await t.request('GET', `/api/v0/claim/${claimId}`)).statusCode, 404);
    assert.equal((await attempt(t, 'simulate', claimId, randomAddress())).statusCode, 404);
    m = await manager(t); // the session expired with it
  });

  test('addresses: managedBy accepts both forms and stores the native one', async () => {
    const who = parseAddress(randomAddress());
    const claimId = newClaimId();
    await createClaim(t, m.accessToken, { claimId, plugins: [numUses(1)], managedBy: who.evmAddress });
    assert.equal((await getClaim(t, claimId)).managedBy, who.platformAddress);
  });
});
