// Custom plugin failures against a real local HTTPS endpoint: non-200 with and without a
// message, timeout, oversized, dotted and non-JSON answers, an address refused at call time;
// each fails the attempt with a clear text and writes an error record that only the owner reads
// (paginated). Versions: unfinalized ones are the owner's, unpublished plugins need approval,
// claims pin their version. Status webhooks reach the endpoint once the attempt resolves.
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { startApp } from '../helpers/app.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { startHttpsEndpoint, type HttpsEndpoint } from '../helpers/https-endpoint.ts';
import { freePort } from '../helpers/process.ts';
import { createPlugin, owner, updatePlugin, versionConfig } from '../helpers/plugins.ts';
import type { SignedIn } from '../helpers/signin.ts';
import { attempt, claimWithPlugins, completeAndWait, numUses, randomAddress } from '../claims/helpers.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

const custom = (pluginId: string, version = '1', instanceId = 'cp') => ({
  pluginId,
  instanceId,
  version,
  publicParams: {},
  privateParams: {},
});

describe('custom plugins: failures, errors, versions, webhooks', () => {
  let ep: HttpsEndpoint;
  let alice: SignedIn;
  let bob: SignedIn;
  before(async () => {
    ep = await startHttpsEndpoint();
  });
  const t = useApp({ plugins: true });
  before(async () => {
    alice = await owner(t);
    bob = await owner(t);
  });
  after(() => ep.close());

  async function failsWith(claimId: string, error: string | RegExp) {
    const res = await attempt(t, 'simulate', claimId, randomAddress());
    assert.equal(res.statusCode, 400, res.body);
    if (typeof error === 'string') assert.equal(res.json().errorMessage, error);
    else assert.match(res.json().errorMessage, error);
    return res.json().errorMessage as string;
  }

  test('non-200, oversized, dotted and non-JSON answers fail with a clear text and an error record', async () => {
    const pluginId = await createPlugin(t, alice.accessToken, ep.url);
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(5), custom(pluginId)]);
    const cases: Array<[Parameters<HttpsEndpoint['respond']>[0], string | RegExp]> = [
      [() => ({ status: 403, body: { message: 'Not on the guest list' } }), 'Not on the guest list'],
      [() => ({ status: 503, body: 'down for maintenance' }), 'Plugin endpoint answered HTTP 503'],
      [() => ({ status: 201, body: {} }), 'Plugin endpoint answered HTTP 201'],
      [
        () => ({ status: 200, body: Buffer.alloc(2 * 1024 * 1024, 0x20) }),
        /^Plugin endpoint response is larger than 1048576 bytes$/,
      ],
      [
        () => ({ status: 200, body: { ok: true, nested: { 'a.b': 1 } } }),
        'Invalid response from API: key "a.b" contains a dot',
      ],
      [() => ({ status: 200, body: '<html>ok</html>' }), 'Invalid response from API: the 200 body is not JSON'],
      [() => ({ status: 200, body: [1, 2] }), 'Invalid response from API: the 200 body is not a JSON object'],
      // far too deep to walk recursively (was a stack overflow: a 500, no record), and just past the limit
      [
        () => ({ status: 200, body: `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}` }),
        'Invalid response from API: the 200 body is nested deeper than 64 levels',
      ],
      [
        () => ({ status: 200, body: `${'['.repeat(65)}${']'.repeat(65)}` }),
        'Invalid response from API: the 200 body is not a JSON object',
      ],
      [
        () => ({ status: 200, body: `{"a":${'['.repeat(64)}${']'.repeat(64)}}` }),
        'Invalid response from API: the 200 body is nested deeper than 64 levels',
      ],
      [
        () => ({ status: 302, headers: { location: 'https://127.0.0.1/elsewhere' } }),
        'Plugin endpoint could not be called',
      ],
    ];
    const seen: string[] = [];
    for (const [respond, error] of cases) {
      ep.respond(respond);
      seen.push(await failsWith(claimId, error));
    }
    // the redirect's target is the owner's to see, not the claimers'
    seen[seen.length - 1] =
      'Plugin endpoint could not be called: the endpoint answered 302 (a redirect to https://127.0.0.1/elsewhere); redirects are not followed';
    // complete refuses the same way and queues nothing
    ep.respond(() => ({ status: 403, body: { message: 'Not on the guest list' } }));
    const complete = await attempt(t, 'complete', claimId, randomAddress());
    assert.equal(complete.statusCode, 400);
    assert.equal(complete.json().errorMessage, 'Not on the guest list');
    seen.push('Not on the guest list');

    const errors = await t.request('GET', `/api/v0/plugins/errors?pluginId=${pluginId}`, { token: alice.accessToken });
    assert.equal(errors.statusCode, 200, errors.body);
    const page = errors.json();
    assert.equal(page.total, seen.length);
    assert.equal(page.hasMore, false);
    assert.deepEqual(page.docs.map((d: { error: string }) => d.error).reverse(), seen, 'newest first');
    const doc = page.docs[0];
    assert.equal(doc.pluginId, pluginId);
    assert.equal(typeof doc.timestamp, 'number');
    assert.deepEqual(doc.context, { claimId, claimAttemptId: '', instanceId: 'cp' });
    assert.equal(typeof doc._docId, 'string');
  });

  test("an unreachable endpoint: claimers get a plain text naming no host or port; the owner's error log keeps the detail", async () => {
    const port = await freePort();
    const pluginId = await createPlugin(t, alice.accessToken, `https://127.0.0.1:${port}/hook`);
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(5), custom(pluginId)]);
    const simulated = await attempt(t, 'simulate', claimId, randomAddress());
    assert.equal(simulated.statusCode, 400, simulated.body);
    assert.deepEqual(simulated.json(), { errorMessage: 'Plugin endpoint could not be called' });
    const completed = await attempt(t, 'complete', claimId, randomAddress());
    assert.equal(completed.statusCode, 400, completed.body);
    assert.deepEqual(completed.json(), { errorMessage: 'Plugin endpoint could not be called' });

    const errors = await t.request('GET', `/api/v0/plugins/errors?pluginId=${pluginId}`, { token: alice.accessToken });
    assert.equal(errors.statusCode, 200, errors.body);
    const detail = `Plugin endpoint could not be called: the call failed (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:${port})`;
    assert.deepEqual(
      errors.json().docs.map((d: { error: string }) => d.error),
      [detail, detail],
    );
  });

  test('a timeout fails the attempt after the 10 s deadline', async () => {
    ep.respond(() => ({ status: 200, body: {}, delayMs: 12_000 }));
    const pluginId = await createPlugin(t, alice.accessToken, ep.url);
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(5), custom(pluginId)]);
    await failsWith(claimId, 'Plugin endpoint did not answer within 10 seconds');
  });

  test('the errors route: owner only, paginated { docs, bookmark, total, hasMore }', async () => {
    ep.respond(() => ({ status: 400, body: { message: 'no' } }));
    const pluginId = await createPlugin(t, alice.accessToken, ep.url);
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(5), custom(pluginId)]);
    for (let i = 0; i < 27; i++) await failsWith(claimId, 'no');
    const anon = await t.request('GET', `/api/v0/plugins/errors?pluginId=${pluginId}`);
    assert.equal(anon.statusCode, 401);
    const notOwner = await t.request('GET', `/api/v0/plugins/errors?pluginId=${pluginId}`, { token: bob.accessToken });
    assert.equal(notOwner.statusCode, 403, notOwner.body);
    const p1 = (
      await t.request('GET', `/api/v0/plugins/errors?pluginId=${pluginId}&bookmark=`, { token: alice.accessToken })
    ).json();
    assert.equal(p1.docs.length, 25);
    assert.equal(p1.total, 27);
    assert.equal(p1.hasMore, true);
    const p2 = (
      await t.request(
        'GET',
        `/api/v0/plugins/errors?pluginId=${pluginId}&bookmark=${encodeURIComponent(p1.bookmark)}`,
        { token: alice.accessToken },
      )
    ).json();
    assert.equal(p2.docs.length, 2);
    assert.equal(p2.hasMore, false);
    assert.equal(p2.bookmark, '');
    assert.equal(new Set([...p1.docs, ...p2.docs].map((d: { _docId: string }) => d._docId)).size, 27);
  });

  test('the default configuration refuses the same loopback endpoint at call time', async () => {
    ep.respond(() => ({ body: {} }));
    const pluginId = await createPlugin(t, alice.accessToken, ep.url);
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(5), custom(pluginId)]);
    assert.equal(
      (await attempt(t, 'simulate', claimId, randomAddress())).statusCode,
      200,
      'reachable with the test-only settings',
    );
    const strict = await startApp({ database: t.database, env: { RUN_WORKER: 'false' } });
    try {
      const before = ep.requests.length;
      const res = await attempt(strict, 'simulate', claimId, randomAddress());
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(res.json(), { errorMessage: 'Plugin endpoint could not be called' });
      const errors = await strict.request('GET', `/api/v0/plugins/errors?pluginId=${pluginId}`, {
        token: alice.accessToken,
      });
      assert.equal(
        errors.json().docs[0].error,
        `Plugin endpoint could not be called: 127.0.0.1 is a loopback address; only public addresses may be called`,
      );
      assert.equal(ep.requests.length, before, 'no connection was made');
    } finally {
      await strict.app.close();
      await strict.ctx.close();
    }
  });

  test('versions: an unfinalized version is usable by its owner only; unpublished plugins need approval; published ones are open', async () => {
    ep.respond(() => ({ body: {} }));
    const draft = await createPlugin(
      t,
      alice.accessToken,
      ep.url,
      {},
      { initialVersion: { ...versionConfig(ep.url), finalized: false } },
    );
    const byBob = await t.request('POST', '/api/v0/claims', {
      token: bob.accessToken,
      body: { claims: [{ claimId: `d${Date.now()}b`, plugins: [numUses(3), custom(draft)] }] },
    });
    assert.equal(byBob.statusCode, 400, byBob.body);
    assert.match(
      byBob.json().errorMessage,
      /version 1 of plugin .* is not finalized; only its creator or manager may use it/,
    );
    await claimWithPlugins(t, alice.accessToken, [numUses(3), custom(draft)]);

    const finalized = await createPlugin(t, alice.accessToken, ep.url);
    const unapproved = await t.request('POST', '/api/v0/claims', {
      token: bob.accessToken,
      body: { claims: [{ claimId: `u${Date.now()}b`, plugins: [numUses(3), custom(finalized)] }] },
    });
    assert.equal(unapproved.statusCode, 400, unapproved.body);
    assert.match(
      unapproved.json().errorMessage,
      /You must be the owner of non-published plugins or approved to use them by the owner\./,
    );
    assert.equal(
      (await updatePlugin(t, alice.accessToken, { pluginId: finalized, approvedUsers: [bob.address] })).statusCode,
      200,
    );
    await claimWithPlugins(t, bob.accessToken, [numUses(3), custom(finalized)]);

    // published (toPublish + the operator's review): anyone may use a finalized version
    const carol = await owner(t);
    assert.equal((await updatePlugin(t, alice.accessToken, { pluginId: finalized, toPublish: true })).statusCode, 200);
    const review = await runCliInProcess(['plugin', 'review', finalized], t.database.env);
    assert.equal(review.code, 0, review.stderr);
    await new Promise((r) => setTimeout(r, 1100)); // another process's change is seen within the cache's trust window (1 s)
    await claimWithPlugins(t, carol.accessToken, [numUses(3), custom(finalized)]);

    const unknownVersion = await t.request('POST', '/api/v0/claims', {
      token: alice.accessToken,
      body: { claims: [{ claimId: `v${Date.now()}`, plugins: [numUses(3), custom(finalized, '9')] }] },
    });
    assert.equal(unknownVersion.statusCode, 400);
    assert.match(unknownVersion.json().errorMessage, /version 9/);
  });

  test('claims pin their version: a new version changes nothing until a claim names it', async () => {
    const other = await startHttpsEndpoint({
      handler: () => ({ status: 400, body: { message: 'version 2 says no' } }),
    });
    try {
      ep.respond(() => ({ body: {} }));
      const pluginId = await createPlugin(t, alice.accessToken, ep.url);
      const pinned = await claimWithPlugins(t, alice.accessToken, [numUses(5), custom(pluginId)]);
      const v2 = await updatePlugin(t, alice.accessToken, {
        pluginId,
        versionCreate: { ...versionConfig(other.url), finalized: true },
      });
      assert.equal(v2.statusCode, 200, v2.body);
      assert.equal((await attempt(t, 'simulate', pinned, randomAddress())).statusCode, 200, 'still version 1');
      assert.equal(other.requests.length, 0);
      const onV2 = await claimWithPlugins(t, alice.accessToken, [numUses(5), custom(pluginId, '2')]);
      await failsWith(onV2, 'version 2 says no');
      assert.equal(other.requests.at(-1)!.json.version, 2);
      const moved = await t.request('PUT', '/api/v0/claims', {
        token: alice.accessToken,
        body: { claims: [{ claimId: pinned, plugins: [numUses(5), custom(pluginId, '2')] }] },
      });
      assert.equal(moved.statusCode, 200, moved.body);
      await failsWith(pinned, 'version 2 says no');
    } finally {
      await other.close();
    }
  });

  test('receiveStatusWebhook: each resolved attempt posts the payload with _attemptStatus success or failure', async () => {
    const hooks = await startHttpsEndpoint();
    try {
      // the execution-time call decides (ignoreSimulations); webhooks are answered 200
      hooks.respond((r) =>
        r.json._attemptStatus === 'executing' && r.json.n === 2
          ? { status: 400, body: { message: 'two is refused' } }
          : { status: 200, body: {} },
      );
      const pluginId = await createPlugin(t, alice.accessToken, hooks.url, {
        receiveStatusWebhook: true,
        ignoreSimulations: true,
        requiresUserInputs: true,
        userInputsSchema: [{ key: 'n', label: 'n', type: 'number' }],
        privateParamsSchema: [{ key: 'X-Api-Key', label: 'key', type: 'string', headerField: true }],
      });
      const claimId = await claimWithPlugins(t, alice.accessToken, [
        numUses(5),
        { ...custom(pluginId), privateParams: { 'X-Api-Key': 'k-1' } },
      ]);
      const ok = await completeAndWait(t, claimId, randomAddress(), { cp: { n: 1 } });
      assert.equal(ok.success, true, ok.error);
      const failed = await completeAndWait(t, claimId, randomAddress(), { cp: { n: 2 } });
      assert.equal(failed.success, false);
      assert.equal(failed.error, 'two is refused');
      const webhooks = () => hooks.requests.filter((r) => r.json._attemptStatus !== 'executing');
      const until = Date.now() + PATIENCE_MS;
      while (webhooks().length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      const byAttempt = new Map(webhooks().map((r) => [r.json.claimAttemptId as string, r.json]));
      assert.equal(webhooks().length, 2, 'one delivery per resolved attempt');
      const success = byAttempt.get(ok.claimAttemptId)!;
      assert.equal(success._attemptStatus, 'success');
      assert.equal(success._isSimulation, false);
      assert.equal(success.n, 1);
      assert.equal(success.claimId, claimId);
      assert.equal(success.instanceId, 'cp');
      const successHook = webhooks().find((r) => r.json.claimAttemptId === ok.claimAttemptId)!;
      assert.equal(successHook.headers['x-api-key'], 'k-1', 'header fields travel as headers on the webhook too');
      assert.equal(successHook.json['X-Api-Key'], undefined);
      assert.equal(byAttempt.get(failed.claimAttemptId)!._attemptStatus, 'failure');
      assert.equal(byAttempt.get(failed.claimAttemptId)!.n, 2);
    } finally {
      await hooks.close();
    }
  });
});
