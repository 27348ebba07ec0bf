// POST /api/v0/users: accounts with the views this service holds itself (sign-ins, claim activity),
// their visibility, paging (docs/api.md) and the 400s; the native balance with and without a chain.
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.ts';
import { signIn } from '../helpers/signin.ts';
import { startFakeChain, type FakeChain } from '../helpers/fake-chain.ts';
import { drainQueue } from '../../src/claims/queue.ts';
import { attempt, createClaim, manager, newClaimId, numUses, status } from '../claims/helpers.ts';

interface View {
  ids: string[];
  type: string;
  pagination: { bookmark: string; hasMore: boolean };
}
type Account = Record<string, unknown> & { views: Record<string, View>; platformAddress: string };

function users(t: TestApp, accountsToFetch: unknown[], token?: string) {
  return t.request('POST', '/api/v0/users', { body: { accountsToFetch }, ...(token ? { token } : {}) });
}

async function account(t: TestApp, item: Record<string, unknown>, token?: string): Promise<Account> {
  const res = await users(t, [item], token);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().accounts[0];
}

/** Follows bookmarks until hasMore is false; answers every page's documents of `field`, in order. */
async function pageAll(
  t: TestApp,
  address: string,
  viewType: string,
  field: string,
  token?: string,
  oldestFirst?: boolean,
) {
  const pages: Array<Array<Record<string, unknown>>> = [];
  let bookmark = '';
  for (;;) {
    const a = await account(
      t,
      {
        address,
        viewsToFetch: [{ viewType, viewId: 'v', bookmark, ...(oldestFirst !== undefined ? { oldestFirst } : {}) }],
      },
      token,
    );
    const view = a.views.v;
    assert.equal(view.type, viewType);
    const docs = a[field] as Array<Record<string, unknown>>;
    assert.deepEqual(
      view.ids,
      docs.map((d) => d._docId),
      'ids list the page documents in order',
    );
    pages.push(docs);
    if (!view.pagination.hasMore) {
      assert.equal(view.pagination.bookmark, '');
      return pages;
    }
    assert.notEqual(view.pagination.bookmark, '');
    bookmark = view.pagination.bookmark;
  }
}

describe('account views', () => {
  // the queue is drained by hand, so two attempts can race for one slot deterministically
  const t = useApp({ env: { RUN_WORKER: 'false' }, signedIn: true });

  /** Queues attempts (each must pass simulation), resolves them, answers their ids and statuses. */
  async function complete(claimId: string, ...addresses: string[]) {
    const ids: string[] = [];
    for (const address of addresses) {
      const r = await attempt(t, 'complete', claimId, address);
      assert.equal(r.statusCode, 200, r.body);
      ids.push(r.json().claimAttemptId);
    }
    await drainQueue(t.ctx);
    return Promise.all(ids.map(async (claimAttemptId) => ({ claimAttemptId, ...(await status(t, claimAttemptId)) })));
  }

  test('an account without views: both address forms, no username, every view field empty', async () => {
    const a = await account(t, { address: t.session.address });
    assert.equal(a.platformAddress, t.session.platformAddress);
    assert.equal(a._docId, t.session.platformAddress);
    assert.equal(a.ethAddress, t.session.address);
    assert.deepEqual(a.views, {});
    for (const field of ['signinRequests', 'claimActivity', 'activity', 'collected', 'collections'])
      assert.deepEqual(a[field], [], field);
    assert.equal(a.balance, undefined);
    assert.equal(a.balanceError, 'Native balance unknown: The chain is not configured: CHAIN_REST_URL is not set');
  });

  test("signinRequests: the user's own sign-ins, paged newest first (or oldest first), owner only", async () => {
    const key = t.session.privateKey;
    // 26 more sign-ins of the same wallet, with the clock moving so the order is by time
    for (let i = 0; i < 26; i++)
      await signIn(t, { privateKey: key, scopes: i % 2 ? ['completeClaims'] : ['manageAccount', 'manageClaims'] });
    const newest = await pageAll(
      t,
      t.session.platformAddress,
      'signinRequests',
      'signinRequests',
      t.session.accessToken,
    );
    assert.deepEqual(
      newest.map((p) => p.length),
      [25, 2],
    );
    const docs = newest.flat();
    assert.equal(new Set(docs.map((d) => d._docId)).size, 27);
    for (let i = 1; i < docs.length; i++)
      assert.ok(Number(docs[i - 1].createdAt) >= Number(docs[i].createdAt), 'newest first');
    const first = docs[docs.length - 1];
    assert.equal(first.platformAddress, t.session.platformAddress);
    assert.equal(first.address, t.session.address);
    assert.equal(first.chain, 'ETH');
    assert.equal(first.appName, 'Test App');
    assert.equal(first.codeExchanged, true);
    assert.equal(first.redirectUri, 'https://app.example/callback');
    assert.ok((first.scopes as Array<{ scopeId: string }>).some((s) => s.scopeId === 'manageAccount'));
    assert.equal(first.code, undefined, 'no code or token material');

    const oldest = (
      await pageAll(t, t.session.platformAddress, 'signinRequests', 'signinRequests', t.session.accessToken, true)
    ).flat();
    assert.deepEqual(
      oldest.map((d) => d._docId),
      docs.map((d) => d._docId).reverse(),
    );

    // someone else's sign-ins never show up
    const other = await signIn(t);
    const mine = await account(
      t,
      { address: other.platformAddress, viewsToFetch: [{ viewType: 'signinRequests', viewId: 's', bookmark: '' }] },
      other.accessToken,
    );
    assert.equal((mine.signinRequests as unknown[]).length, 1);
  });

  test('owner-only views: 401 without a session, 403 for another user or without manageAccount', async () => {
    const other = await signIn(t);
    const narrow = await signIn(t, { privateKey: t.session.privateKey, scopes: ['completeClaims'] });
    for (const viewType of ['signinRequests', 'allClaimActivity']) {
      const item = { address: t.session.platformAddress, viewsToFetch: [{ viewType, viewId: 'x', bookmark: '' }] };
      const anon = await users(t, [item]);
      assert.equal(anon.statusCode, 401, anon.body);
      assert.match(anon.json().errorMessage, new RegExp(`${viewType} is visible only to the account itself`));
      const stranger = await users(t, [item], other.accessToken);
      assert.equal(stranger.statusCode, 403, stranger.body);
      assert.match(stranger.json().errorMessage, /the session belongs to/);
      const scoped = await users(t, [item], narrow.accessToken);
      assert.equal(scoped.statusCode, 403, scoped.body);
      assert.match(scoped.json().errorMessage, /manageAccount/);
      // the owner may also ask by username
      assert.equal(
        (
          await t.request('POST', '/api/v0/user/updateAccount', {
            token: t.session.accessToken,
            body: { username: 'viewer' },
          })
        ).statusCode,
        200,
      );
      const own = await users(t, [{ username: 'VIEWER', viewsToFetch: item.viewsToFetch }], t.session.accessToken);
      assert.equal(own.statusCode, 200, own.body);
    }
    // public views need no session
    const pub = await users(t, [
      {
        address: t.session.platformAddress,
        viewsToFetch: [{ viewType: 'publicClaimActivity', viewId: 'p', bookmark: '' }],
      },
    ]);
    assert.equal(pub.statusCode, 200, pub.body);
  });

  test('claim activity: public = successes on listed claims; all = every resolved attempt, failures with their error', async () => {
    const m = await manager(t);
    const claimer = await signIn(t);
    const listed = newClaimId('listed');
    const unlisted = newClaimId('unlisted');
    const full = newClaimId('full');
    await createClaim(t, m.accessToken, { claimId: listed, plugins: [numUses(5)], showInSearchResults: true });
    await createClaim(t, m.accessToken, { claimId: unlisted, plugins: [numUses(5)] });
    await createClaim(t, m.accessToken, { claimId: full, plugins: [numUses(1)], showInSearchResults: true });
    await complete(full, m.platformAddress); // uses the only slot
    const [a1] = await complete(listed, claimer.address);
    const [a2] = await complete(unlisted, claimer.platformAddress);
    // a failure recorded by the queue: two queued attempts for the one slot of a fresh claim
    const race = newClaimId('race');
    await createClaim(t, m.accessToken, { claimId: race, plugins: [numUses(1)], showInSearchResults: true });
    const outcomes = await complete(race, claimer.platformAddress, claimer.platformAddress);
    assert.deepEqual(
      outcomes.map((o) => o.success),
      [true, false],
    );
    const ids = outcomes.map((o) => o.claimAttemptId);

    const pub = (await pageAll(t, claimer.platformAddress, 'publicClaimActivity', 'claimActivity')).flat();
    const pubIds = pub.map((d) => d._docId);
    assert.ok(pubIds.includes(a1.claimAttemptId));
    assert.ok(!pubIds.includes(a2.claimAttemptId), 'unlisted claim hidden from the public');
    assert.ok(pub.every((d) => d.success === true && d.error === undefined));
    const doc = pub.find((d) => d._docId === a1.claimAttemptId)!;
    assert.deepEqual(Object.keys(doc).sort(), [
      '_docId',
      'attemptedAt',
      'claimAttemptId',
      'claimId',
      'claimNumber',
      'platformAddress',
      'success',
      'updatedAt',
    ]);
    assert.equal(doc.claimId, listed);
    assert.equal(doc.platformAddress, claimer.platformAddress);
    assert.equal(doc.claimNumber, 0);

    const all = (
      await pageAll(t, claimer.platformAddress, 'allClaimActivity', 'claimActivity', claimer.accessToken)
    ).flat();
    const allIds = all.map((d) => d._docId);
    assert.ok(allIds.includes(a1.claimAttemptId) && allIds.includes(a2.claimAttemptId));
    const [won, lost] = ids.map((id) => all.find((x) => x._docId === id)!);
    assert.equal(won.success, true);
    assert.equal(won.error, undefined);
    assert.equal(lost.success, false);
    assert.equal(lost.claimNumber, -1);
    assert.equal(lost.error, 'Overall max uses exceeded');
    assert.ok(!pubIds.includes(ids[1]), 'failures are not public');
    assert.ok(!all.some((d) => d.claimId === full && d.platformAddress === m.platformAddress), 'only this address');

    // deleting a listed claim removes it from the public view, not from the user's own history
    assert.equal(
      (await t.request('DELETE', '/api/v0/claims', { token: m.accessToken, body: { claimIds: [listed] } })).statusCode,
      200,
    );
    assert.ok(
      !(await pageAll(t, claimer.platformAddress, 'publicClaimActivity', 'claimActivity'))
        .flat()
        .some((d) => d._docId === a1.claimAttemptId),
    );
    assert.ok(
      (await pageAll(t, claimer.platformAddress, 'allClaimActivity', 'claimActivity', claimer.accessToken))
        .flat()
        .some((d) => d._docId === a1.claimAttemptId),
    );
  });

  test('claim activity pages of 25 with oldestFirst; two views in one request share claimActivity', async () => {
    const m = await manager(t);
    const claimer = await signIn(t);
    const claimIds: string[] = [];
    for (let i = 0; i < 27; i++) {
      const id = newClaimId('p');
      claimIds.push(id);
      await createClaim(t, m.accessToken, { claimId: id, plugins: [numUses(1)], showInSearchResults: true });
      await complete(id, claimer.platformAddress);
    }
    const newest = await pageAll(t, claimer.platformAddress, 'publicClaimActivity', 'claimActivity');
    assert.deepEqual(
      newest.map((p) => p.length),
      [25, 2],
    );
    assert.deepEqual(
      newest.flat().map((d) => d.claimId),
      [...claimIds].reverse(),
    );
    const oldest = await pageAll(t, claimer.platformAddress, 'publicClaimActivity', 'claimActivity', undefined, true);
    assert.deepEqual(
      oldest.flat().map((d) => d.claimId),
      claimIds,
    );

    const both = await account(
      t,
      {
        address: claimer.platformAddress,
        viewsToFetch: [
          { viewType: 'publicClaimActivity', viewId: 'pub', bookmark: '', oldestFirst: true },
          { viewType: 'allClaimActivity', viewId: 'all', bookmark: '', oldestFirst: true },
        ],
      },
      claimer.accessToken,
    );
    assert.deepEqual(both.views.pub.ids, both.views.all.ids);
    assert.equal((both.claimActivity as unknown[]).length, 25, 'one document per _docId');

    // a bookmark is bound to its view, account and direction
    const bookmark =
      newest.length &&
      (
        await account(t, {
          address: claimer.platformAddress,
          viewsToFetch: [{ viewType: 'publicClaimActivity', viewId: 'v', bookmark: '' }],
        })
      ).views.v.pagination.bookmark;
    for (const misuse of [
      {
        address: claimer.platformAddress,
        viewsToFetch: [{ viewType: 'publicClaimActivity', viewId: 'v', bookmark, oldestFirst: true }],
      },
      { address: m.platformAddress, viewsToFetch: [{ viewType: 'publicClaimActivity', viewId: 'v', bookmark }] },
      {
        address: claimer.platformAddress,
        viewsToFetch: [{ viewType: 'publicClaimActivity', viewId: 'v', bookmark: bookmark + 'x' }],
      },
    ]) {
      const r = await users(t, [misuse]);
      assert.equal(r.statusCode, 400, r.body);
      assert.match(r.json().errorMessage, /Invalid bookmark/);
    }
  });

  test('the 400s and 404s of POST /api/v0/users', async () => {
    const cases: Array<[unknown[], number, RegExp]> = [
      [
        [{ address: t.session.platformAddress, viewsToFetch: [{ viewType: 'listings', viewId: 'p', bookmark: '' }] }],
        400,
        /viewType must be one of signinRequests, publicClaimActivity, allClaimActivity, transferActivity/,
      ],
      [
        [
          {
            address: t.session.platformAddress,
            viewsToFetch: [
              { viewType: 'publicClaimActivity', viewId: 'a', bookmark: '' },
              { viewType: 'publicClaimActivity', viewId: 'a', bookmark: '' },
            ],
          },
        ],
        400,
        /viewId repeats "a"/,
      ],
      [[{ address: t.session.platformAddress, username: 'viewer' }], 400, /exactly one of address or username/],
      [[{}], 400, /exactly one of address or username/],
      [[{ address: '0x1234' }], 400, /Invalid address in body.accountsToFetch\[0\].address/],
      [[{ username: 'nobody_here' }], 404, /No account has the username "nobody_here"/],
      [[{ address: t.session.platformAddress, partialProfile: true }], 400, /unknown field "partialProfile"/],
      [[], 400, /must NOT have fewer than 1 items/],
      [
        Array.from({ length: 251 }, () => ({ address: t.session.platformAddress })),
        400,
        /must NOT have more than 250 items/,
      ],
      [
        [
          {
            address: t.session.platformAddress,
            viewsToFetch: Array.from({ length: 11 }, (_, i) => ({
              viewType: 'publicClaimActivity',
              viewId: `v${i}`,
              bookmark: '',
            })),
          },
        ],
        400,
        /at most 10 views/,
      ],
    ];
    for (const [items, status, message] of cases) {
      const r = await users(t, items);
      assert.equal(r.statusCode, status, r.body);
      assert.match(r.json().errorMessage, message);
    }
    // 250 accounts answer in order
    const many = await users(
      t,
      Array.from({ length: 250 }, (_, i) => ({ address: i % 2 ? t.session.address : t.session.platformAddress })),
    );
    assert.equal(many.statusCode, 200);
    assert.equal(many.json().accounts.length, 250);
  });
});

describe('account balance from the chain', () => {
  let chain: FakeChain;
  before(async () => {
    chain = await startFakeChain();
  });
  const t = useApp({ env: () => ({ CHAIN_REST_URL: chain.url, CHAIN_TIMEOUT_MS: '1000' }) });
  after(() => chain.close());

  test('native balance read from the chain, exact beyond 2^64; a down chain answers balanceError, not a 500', async () => {
    const who = await signIn(t);
    chain.nativeBalances.set(who.platformAddress, '340282366920938463463374607431768211455');
    const a = await account(t, { address: who.address });
    assert.deepEqual(a.balance, { amount: '340282366920938463463374607431768211455', denom: 'ubadge' });
    assert.equal(a.balanceError, undefined);

    await chain.down();
    try {
      const other = await signIn(t);
      const res = await t.request('GET', `/api/v0/user?address=${other.platformAddress}`);
      assert.equal(res.statusCode, 200, res.body);
      const acc = res.json().account;
      assert.equal(acc.balance, undefined);
      assert.match(acc.balanceError, /chain/i);
      assert.match(acc.balanceError, /CHAIN_REST_URL/);
    } finally {
      await chain.up();
    }
  });
});
