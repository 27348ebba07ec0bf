// Custom plugins in claims, against a real local HTTPS endpoint (test CA): the exact signed
// request (body, header fields, signature recomputed here), passAddress, locale, every preset,
// and how often the endpoint is called by simulate, complete and execution (replay,
// ignoreSimulations, skipProcessingWebhook). The worker is off: the tests drain the queue.
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { startApp } from '../helpers/app.ts';
import { startHttpsEndpoint, type HttpsEndpoint, type RecordedRequest } from '../helpers/https-endpoint.ts';
import { createPlugin, loopbackEgressEnv, owner, pluginSecret } from '../helpers/plugins.ts';
import type { SignedIn } from '../helpers/signin.ts';
import { signIn } from '../helpers/signin.ts';
import { attempt, claimWithPlugins, getClaim, newClaimId, numUses, randomAddress, status } from '../claims/helpers.ts';
import { drainQueue } from '../../src/claims/queue.ts';
import { parseAddress } from '../../src/shared/addresses.ts';

const field = (key: string, type: string, extra: Record<string, unknown> = {}) => ({ key, label: key, type, ...extra });

describe('custom plugins: the call and the presets', () => {
  let ep: HttpsEndpoint;
  let alice: SignedIn;
  before(async () => {
    ep = await startHttpsEndpoint();
  });
  const t = useApp({ plugins: true, env: { RUN_WORKER: 'false' } });
  before(async () => {
    alice = await owner(t);
  });
  after(() => ep.close());

  const custom = (
    pluginId: string,
    instanceId = 'cp',
    publicParams: Record<string, unknown> = {},
    privateParams: Record<string, unknown> = {},
    version = '1',
  ) => ({
    pluginId,
    instanceId,
    version,
    publicParams,
    privateParams,
  });
  /** Requests to the endpoint made while `fn` runs. */
  async function callsDuring(fn: () => Promise<unknown>): Promise<RecordedRequest[]> {
    const from = ep.requests.length;
    await fn();
    return ep.requests.slice(from);
  }
  async function completeAndDrain(
    claimId: string,
    address: string,
    body: Record<string, unknown> = {},
    token?: string,
  ) {
    const res = await attempt(t, 'complete', claimId, address, body, token);
    assert.equal(res.statusCode, 200, res.body);
    await drainQueue(t.ctx);
    return { claimAttemptId: res.json().claimAttemptId as string, ...(await status(t, res.json().claimAttemptId)) };
  }

  test('the exact body, header fields and signature (recomputed independently); passAddress on; locale from Accept-Language', async () => {
    ep.respond(() => ({ body: {} }));
    const pluginId = await createPlugin(t, alice.accessToken, ep.url, {
      requiresUserInputs: true,
      userInputsSchema: [
        field('answer', 'string', { required: true }),
        field('X-User-Hint', 'string', { headerField: true }),
      ],
      publicParamsSchema: [
        field('level', 'number', { required: true }),
        field('colors', 'string', {
          arrayField: true,
          options: [
            { label: 'Red', value: 'red' },
            { label: 'Blue', value: 'blue' },
          ],
        }),
      ],
      privateParamsSchema: [
        field('apiToken', 'string', { headerField: true, required: true }),
        field('threshold', 'number'),
      ],
      verificationCall: {
        uri: ep.url,
        passAddress: true,
        hardcodedInputs: [
          { ...field('region', 'string'), value: 'eu' },
          { ...field('X-Static', 'string', { headerField: true }), value: 'static-1' },
        ],
      },
    });
    const secret = await pluginSecret(t, alice.accessToken, pluginId);
    const claimId = await claimWithPlugins(t, alice.accessToken, [
      numUses(5),
      custom(pluginId, 'cp', { level: 3, colors: ['red'] }, { apiToken: 'tok-123', threshold: 5 }),
    ]);
    const claim = await getClaim(t, claimId);
    const claimer = await signIn(t, { scopes: ['completeClaims'] });
    const input = { cp: { answer: '42', 'X-User-Hint': 'hint' } };

    const [call] = await callsDuring(async () => {
      const res = await t.request('POST', `/api/v0/claims/simulate/${claimId}/${claimer.address}`, {
        body: { _expectedVersion: -1, ...input },
        token: claimer.accessToken,
        headers: { 'accept-language': 'fr;q=0.5, es-ES, en;q=0.8' },
      });
      assert.equal(res.statusCode, 200, res.body);
    });
    assert.ok(call);
    assert.equal(call.method, 'POST');
    assert.equal(call.path, '/hook');
    const expected = {
      answer: '42',
      level: 3,
      colors: ['red'],
      threshold: 5,
      region: 'eu',
      platformAddress: claimer.platformAddress,
      ethAddress: parseAddress(claimer.platformAddress).evmAddress,
      isAddressSignedIn: true,
      pluginSecret: secret,
      version: 1,
      claimId,
      claimAttemptId: '',
      instanceId: 'cp',
      _isSimulation: true,
      _attemptStatus: 'executing',
      lastUpdated: Number(claim.lastUpdated),
      createdAt: Number(claim.createdAt),
      locale: 'es-ES',
    };
    assert.equal(call.rawBody.toString('utf8'), JSON.stringify(expected), 'the flat body, exactly');
    assert.equal(call.headers['content-type'], 'application/json');
    assert.equal(call.headers['x-user-hint'], 'hint');
    assert.equal(call.headers['apitoken'], 'tok-123');
    assert.equal(call.headers['x-static'], 'static-1');
    assert.equal(call.headers['x-platform-version'], '1');
    const ts = call.headers['x-platform-timestamp'] as string;
    assert.match(ts, /^\d{13}$/);
    const mac = createHmac('sha256', secret).update(`${ts}.`).update(call.rawBody).digest('hex');
    assert.equal(call.headers['x-platform-signature'], mac);
  });

  test('passAddress off: identity fields are null; default locale en; no session means isAddressSignedIn stays null', async () => {
    ep.respond(() => ({ body: {} }));
    const pluginId = await createPlugin(t, alice.accessToken, ep.url);
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(5), custom(pluginId)]);
    const [call] = await callsDuring(async () =>
      assert.equal((await attempt(t, 'simulate', claimId, randomAddress())).statusCode, 200),
    );
    assert.equal(call!.json.platformAddress, null);
    assert.equal(call!.json.ethAddress, null);
    assert.equal(call!.json.isAddressSignedIn, null);
    assert.equal(call!.json.locale, 'en');
    assert.equal(call!.json.pluginSecret, await pluginSecret(t, alice.accessToken, pluginId));
  });

  test('simulate calls once; complete calls once as its simulation and execution replays it', async () => {
    ep.respond(() => ({ body: {} }));
    const pluginId = await createPlugin(t, alice.accessToken, ep.url);
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(5), custom(pluginId)]);
    const address = randomAddress();
    const sim = await callsDuring(async () =>
      assert.equal((await attempt(t, 'simulate', claimId, address)).statusCode, 200),
    );
    assert.equal(sim.length, 1);
    let done: Awaited<ReturnType<typeof completeAndDrain>> | undefined;
    const calls = await callsDuring(async () => (done = await completeAndDrain(claimId, address)));
    assert.equal(done!.success, true, done!.error);
    assert.equal(calls.length, 1, 'one call per attempt: execution replays the simulation');
    assert.equal(calls[0]!.json._isSimulation, true);
    assert.equal(calls[0]!.json.claimAttemptId, '');
  });

  test('the replayed answer is durable: another process resolves a queued attempt without calling again', async () => {
    ep.respond((r) => ({ body: { claimToken: `tok-${r.json.answer}` } }));
    const pluginId = await createPlugin(t, alice.accessToken, ep.url, {
      stateFunctionPreset: 'ClaimToken',
      requiresUserInputs: true,
      userInputsSchema: [field('answer', 'string')],
    });
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(5), custom(pluginId)]);
    const res = await attempt(t, 'complete', claimId, randomAddress(), { cp: { answer: 'x' } });
    assert.equal(res.statusCode, 200, res.body);
    const calls = ep.requests.length;
    const other = await startApp({ database: t.database, env: { ...loopbackEgressEnv(), RUN_WORKER: 'false' } });
    try {
      assert.equal(await drainQueue(other.ctx), 1);
    } finally {
      await other.app.close();
      await other.ctx.close();
    }
    assert.equal(ep.requests.length, calls, 'execution replayed the stored answer');
    assert.equal((await status(t, res.json().claimAttemptId)).success, true);
    const reused = await attempt(t, 'simulate', claimId, randomAddress(), { cp: { answer: 'x' } });
    assert.equal(reused.json().errorMessage, 'Claim token already used', 'the replayed token was recorded');
  });

  test('ignoreSimulations: the simulation auto-passes; execution calls with the real claimAttemptId', async () => {
    ep.respond((r) => (r.json.answer === 'no' ? { status: 403, body: { message: 'Answer refused' } } : { body: {} }));
    const pluginId = await createPlugin(t, alice.accessToken, ep.url, {
      ignoreSimulations: true,
      requiresUserInputs: true,
      userInputsSchema: [field('answer', 'string')],
    });
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(5), custom(pluginId)]);
    const sim = await callsDuring(async () =>
      assert.equal((await attempt(t, 'simulate', claimId, randomAddress(), { cp: { answer: 'no' } })).statusCode, 200),
    );
    assert.equal(sim.length, 0);
    let done: Awaited<ReturnType<typeof completeAndDrain>> | undefined;
    const calls = await callsDuring(
      async () => (done = await completeAndDrain(claimId, randomAddress(), { cp: { answer: 'yes' } })),
    );
    assert.equal(done!.success, true, done!.error);
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.json._isSimulation, false);
    assert.equal(calls[0]!.json.claimAttemptId, done!.claimAttemptId);
    assert.equal(calls[0]!.json._attemptStatus, 'executing');
    // a refusal at execution fails the attempt with the endpoint's message
    const refused = await completeAndDrain(claimId, randomAddress(), { cp: { answer: 'no' } });
    assert.equal(refused.success, false);
    assert.equal(refused.error, 'Answer refused');
    const errors = await t.request('GET', `/api/v0/plugins/errors?pluginId=${pluginId}`, { token: alice.accessToken });
    assert.equal(errors.json().docs[0].context.claimAttemptId, refused.claimAttemptId);
  });

  test('an execution-time call (ignoreSimulations) runs outside the queue transaction: the service writes meanwhile', async () => {
    let writeDuringCall: number | undefined;
    ep.respond(async (r) => {
      if (r.json._isSimulation === false) {
        // a write through the API while the service waits for this answer: on SQLite (one writer)
        // it could not finish if the call were made inside the committing transaction
        const res = await t.request('POST', '/api/v0/claims', {
          token: alice.accessToken,
          body: { claims: [{ claimId: newClaimId(), plugins: [numUses(1)] }] },
        });
        writeDuringCall = res.statusCode;
      }
      return { body: { claimToken: `tok-${r.json.claimAttemptId}` } };
    });
    const pluginId = await createPlugin(t, alice.accessToken, ep.url, {
      ignoreSimulations: true,
      stateFunctionPreset: 'ClaimToken',
    });
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(5), custom(pluginId)]);
    const done = await completeAndDrain(claimId, randomAddress());
    assert.equal(writeDuringCall, 200);
    assert.equal(done.success, true, done.error);
  });

  test('skipProcessingWebhook: passes without any call', async () => {
    const pluginId = await createPlugin(t, alice.accessToken, ep.url, {
      skipProcessingWebhook: true,
      verificationCall: undefined,
    });
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(5), custom(pluginId)]);
    let done: Awaited<ReturnType<typeof completeAndDrain>> | undefined;
    const calls = await callsDuring(async () => {
      assert.equal((await attempt(t, 'simulate', claimId, randomAddress())).statusCode, 200);
      done = await completeAndDrain(claimId, randomAddress());
    });
    assert.equal(done!.success, true, done!.error);
    assert.equal(calls.length, 0);
  });

  test('ClaimToken: a used token fails; a token is recorded only when the whole claim succeeds', async () => {
    ep.respond((r) => ({ body: { claimToken: r.json.tok } }));
    const pluginId = await createPlugin(t, alice.accessToken, ep.url, {
      stateFunctionPreset: 'ClaimToken',
      requiresUserInputs: true,
      userInputsSchema: [field('tok', 'string', { required: true })],
    });
    const pw = { pluginId: 'password', instanceId: 'pw', publicParams: {}, privateParams: { password: 'open sesame' } };
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(1), custom(pluginId), pw]);

    // failed at simulation (wrong password): nothing recorded
    const wrong = await attempt(t, 'complete', claimId, randomAddress(), {
      cp: { tok: 'B' },
      pw: { password: 'nope' },
    });
    assert.equal(wrong.statusCode, 400);
    // failed at execution: both pass the pre-check, numUses(1) lets only the first through
    const a = await attempt(t, 'complete', claimId, randomAddress(), {
      cp: { tok: 'A' },
      pw: { password: 'open sesame' },
    });
    const b = await attempt(t, 'complete', claimId, randomAddress(), {
      cp: { tok: 'B' },
      pw: { password: 'open sesame' },
    });
    assert.equal(a.statusCode, 200, a.body);
    assert.equal(b.statusCode, 200, b.body);
    await drainQueue(t.ctx);
    assert.equal((await status(t, a.json().claimAttemptId)).success, true);
    const bs = await status(t, b.json().claimAttemptId);
    assert.equal(bs.success, false);
    assert.equal(bs.error, 'Overall max uses exceeded');

    // after a successful claim the token is used
    const reusedA = await attempt(t, 'simulate', claimId, randomAddress(), {
      cp: { tok: 'A' },
      pw: { password: 'open sesame' },
    });
    assert.equal(reusedA.statusCode, 400);
    // numUses is exhausted, so raise it (state is kept) and show B is still available, A is not
    const up = await t.request('PUT', '/api/v0/claims', {
      token: alice.accessToken,
      body: {
        claims: [
          {
            claimId,
            plugins: [numUses(5), custom(pluginId), { pluginId: 'password', instanceId: 'pw', publicParams: {} }],
          },
        ],
      },
    });
    assert.equal(up.statusCode, 200, up.body);
    const again = await attempt(t, 'simulate', claimId, randomAddress(), {
      cp: { tok: 'A' },
      pw: { password: 'open sesame' },
    });
    assert.equal(again.statusCode, 400);
    assert.equal(again.json().errorMessage, 'Claim token already used');
    const retryB = await completeAndDrain(claimId, randomAddress(), {
      cp: { tok: 'B' },
      pw: { password: 'open sesame' },
    });
    assert.equal(retryB.success, true, 'a failed claim left token B available');

    // two queued attempts with one token: the second fails at execution
    const c1 = await attempt(t, 'complete', claimId, randomAddress(), {
      cp: { tok: 'C' },
      pw: { password: 'open sesame' },
    });
    const c2 = await attempt(t, 'complete', claimId, randomAddress(), {
      cp: { tok: 'C' },
      pw: { password: 'open sesame' },
    });
    await drainQueue(t.ctx);
    assert.equal((await status(t, c1.json().claimAttemptId)).success, true);
    assert.equal((await status(t, c2.json().claimAttemptId)).error, 'Claim token already used');
  });

  test('ClaimNumbers: the plugin assigns claim numbers (assignMethod); used, out-of-range and invalid numbers fail', async () => {
    ep.respond((r) => ({ body: { claimNumber: r.json.n } }));
    const pluginId = await createPlugin(t, alice.accessToken, ep.url, {
      stateFunctionPreset: 'ClaimNumbers',
      requiresUserInputs: true,
      userInputsSchema: [field('n', 'number', { required: true })],
    });
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(10), custom(pluginId, 'cn')], {
      assignMethod: 'cn',
    });
    const who = randomAddress();
    const done = await completeAndDrain(claimId, who, { cn: { n: 7 } });
    assert.equal(done.success, true, done.error);
    const success = await t.request('GET', `/api/v0/claims/success/${claimId}/${who}`);
    assert.deepEqual(success.json(), { successCount: 1, claimNumbers: [7] });
    for (const [n, error] of [
      [7, 'Claim number already used: 7'],
      [10, 'Invalid claim number: 10'],
      [-1, 'Invalid claim number'],
      [1.5, 'Invalid claim number'],
    ] as const) {
      const res = await attempt(t, 'simulate', claimId, randomAddress(), { cn: { n } });
      assert.equal(res.statusCode, 400, `${n}: ${res.body}`);
      assert.equal(res.json().errorMessage, error);
    }
    // a plugin without the ClaimNumbers preset cannot assign
    const stateless = await createPlugin(t, alice.accessToken, ep.url);
    const refused = await t.request('POST', '/api/v0/claims', {
      token: alice.accessToken,
      body: {
        claims: [{ claimId: `x${Date.now()}`, plugins: [numUses(3), custom(stateless, 'st')], assignMethod: 'st' }],
      },
    });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.match(refused.json().errorMessage, /assignMethod/);
  });

  test('reuseForNonIndexed: usable in an on-demand claim (no numUses), whose success is the live answer', async () => {
    let allow = true;
    ep.respond(() => (allow ? { body: {} } : { status: 403, body: { message: 'not now' } }));
    const onDemand = await createPlugin(t, alice.accessToken, ep.url, {
      reuseForNonIndexed: true,
      verificationCall: { uri: ep.url, hardcodedInputs: [], passAddress: true },
    });
    const claimId = await claimWithPlugins(t, alice.accessToken, [custom(onDemand)]);
    const who = randomAddress();
    const yes = await t.request('GET', `/api/v0/claims/success/${claimId}/${who}`);
    assert.deepEqual(yes.json(), { successCount: 1, claimNumbers: [] });
    assert.equal(ep.requests.at(-1)!.json.platformAddress, who);
    allow = false;
    const no = await t.request('GET', `/api/v0/claims/success/${claimId}/${who}`);
    assert.deepEqual(no.json(), { successCount: 0, claimNumbers: [] });
    const indexedOnly = await createPlugin(t, alice.accessToken, ep.url);
    const refused = await t.request('POST', '/api/v0/claims', {
      token: alice.accessToken,
      body: { claims: [{ claimId: newClaimId(), plugins: [custom(indexedOnly)] }] },
    });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.match(refused.json().errorMessage, /numUses plugin is required/);
  });

  test('CustomResponseHandler: a 200 object passes and nothing is kept', async () => {
    ep.respond(() => ({ body: { anything: { nested: [1, 2] } } }));
    const pluginId = await createPlugin(t, alice.accessToken, ep.url, { stateFunctionPreset: 'CustomResponseHandler' });
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(5), custom(pluginId)]);
    const done = await completeAndDrain(claimId, randomAddress());
    assert.equal(done.success, true, done.error);
    const rows = await t.ctx.db
      .selectFrom('claim_state')
      .select('key')
      .where('claim_id', '=', claimId)
      .where('instance_id', '=', 'cp')
      .execute();
    assert.deepEqual(rows, []);
  });

  test('requireSignIn / requiresSessions: a session of the claiming address is needed', async () => {
    ep.respond(() => ({ body: {} }));
    for (const flag of [{ requireSignIn: true }, { requiresSessions: true }]) {
      const pluginId = await createPlugin(t, alice.accessToken, ep.url, flag);
      const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(5), custom(pluginId)]);
      const claimer = await signIn(t, { scopes: ['completeClaims'] });
      const anon = await attempt(t, 'simulate', claimId, claimer.address);
      assert.equal(anon.statusCode, 401, anon.body);
      const other = await attempt(t, 'simulate', claimId, randomAddress(), {}, claimer.accessToken);
      assert.equal(other.statusCode, 401, other.body);
      const ok = await attempt(t, 'simulate', claimId, claimer.address, {}, claimer.accessToken);
      assert.equal(ok.statusCode, 200, ok.body);
    }
  });

  test('params are checked against the version schemas at claim create; inputs at simulate (unknown keys refused)', async () => {
    ep.respond(() => ({ body: {} }));
    const pluginId = await createPlugin(t, alice.accessToken, ep.url, {
      requiresUserInputs: true,
      userInputsSchema: [field('answer', 'string', { required: true })],
      publicParamsSchema: [
        field('site', 'url', { required: true }),
        field('opens', 'date'),
        field('mode', 'string', { options: [{ label: 'A', value: 'a' }] }),
      ],
      privateParamsSchema: [field('limit', 'number', { defaultValue: 3 })],
    });
    const create = (
      publicParams: Record<string, unknown>,
      privateParams: Record<string, unknown> = {},
      claimId = newClaimId(),
    ) =>
      t.request('POST', '/api/v0/claims', {
        token: alice.accessToken,
        body: { claims: [{ claimId, plugins: [numUses(3), custom(pluginId, 'cp', publicParams, privateParams)] }] },
      });
    for (const [pub, priv, message] of [
      [{}, {}, /plugins\[1\]\.publicParams\.site is required/],
      [{ site: 'ftp://x' }, {}, /publicParams\.site must be an absolute http\(s\) URL/],
      [
        { site: 'https://x.example', opens: '2024-01-01' },
        {},
        /publicParams\.opens must be a date as UNIX milliseconds/,
      ],
      [{ site: 'https://x.example', mode: 'b' }, {}, /publicParams\.mode must be one of the options/],
      [{ site: 'https://x.example', extra: 1 }, {}, /publicParams has unknown field "extra"/],
      [{ site: 'https://x.example' }, { limit: 'many' }, /privateParams\.limit must be a number/],
    ] as const) {
      const res = await create(pub, priv);
      assert.equal(res.statusCode, 400, `${JSON.stringify(pub)}: ${res.body}`);
      assert.match(res.json().errorMessage, message);
    }
    const claimId = newClaimId();
    const ok = await create({ site: 'https://x.example', opens: 1_700_000_000_000 }, {}, claimId);
    assert.equal(ok.statusCode, 200, ok.body);
    const doc = await getClaim(t, claimId, 'fetchPrivateParams=true', alice.accessToken);
    assert.deepEqual(
      doc.plugins[1].privateParams,
      { limit: 3 },
      'defaults fill absent fields; stored encrypted with the claim',
    );
    const unknown = await attempt(t, 'simulate', claimId, randomAddress(), { cp: { answer: 'x', zzz: 1 } });
    assert.equal(unknown.statusCode, 400);
    assert.match(unknown.json().errorMessage, /body\.cp has unknown field "zzz"/);
    const missing = await attempt(t, 'simulate', claimId, randomAddress(), { cp: {} });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().errorMessage, 'body.cp.answer is required');
  });
});
