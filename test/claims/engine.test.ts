// The engine: version checks at both steps, _specificInstanceIds, satisfyMethod (and that only
// the success path commits state), claim-number assignment by each assigner, atomic failure,
// and on-demand claims. The queue worker is off (RUN_WORKER=false) so tests choose when attempts
// execute (drainQueue), which lets them change the claim between complete and execution.
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { useApp } from '../helpers/use-app.ts';
import { ALL_SCOPES } from '../claims/helpers.ts';
import assert from 'node:assert/strict';
import { TEST_DB } from '../helpers/app.ts';
import { ClaimWorker, drainQueue } from '../../src/claims/queue.ts';
import { claimCode } from '../../src/claims/onchain.ts';
import { attempt, claimWithPlugins, getClaim, newClaimId, numUses, randomAddress, status } from './helpers.ts';

describe('claims engine', () => {
  const t = useApp({ env: { RUN_WORKER: 'false' }, signedIn: ALL_SCOPES });

  const claimWith = (plugins: unknown[], extra: Record<string, unknown> = {}) =>
    claimWithPlugins(t, t.session.accessToken, plugins, extra);
  async function update(claim: Record<string, unknown>) {
    const res = await t.request('PUT', '/api/v0/claims', { token: t.session.accessToken, body: { claims: [claim] } });
    assert.equal(res.statusCode, 200, res.body);
  }
  /** Completes (asserting acceptance), runs the queue, returns the resolved status. */
  async function run(claimId: string, address: string, body: Record<string, unknown> = {}) {
    const res = await attempt(t, 'complete', claimId, address, body);
    assert.equal(res.statusCode, 200, res.body);
    const id = res.json().claimAttemptId as string;
    await drainQueue(t.ctx);
    return { id, ...(await status(t, id)) };
  }
  const claimNumber = async (id: string) =>
    (
      await t.ctx.db
        .selectFrom('claim_attempts')
        .select('claim_number')
        .where('claim_attempt_id', '=', id)
        .executeTakeFirstOrThrow()
    ).claim_number;

  test('_expectedVersion: a mismatch fails at simulate (409) and at execution; -1 skips', async () => {
    const claimId = await claimWith([numUses(10)]);
    const doc = await getClaim(t, claimId);
    assert.equal(doc.version, '0');
    const wrong = await attempt(t, 'simulate', claimId, randomAddress(), { _expectedVersion: 5 });
    assert.equal(wrong.statusCode, 409);
    assert.equal(
      wrong.json().errorMessage,
      'Claim has been updated since last fetch: expected version 5, current version 0',
    );
    const wrongComplete = await attempt(t, 'complete', claimId, randomAddress(), { _expectedVersion: 5 });
    assert.equal(wrongComplete.statusCode, 409);

    // accepted at version 0, the claim changes before execution: the attempt fails
    const accepted = await attempt(t, 'complete', claimId, randomAddress(), { _expectedVersion: 0 });
    assert.equal(accepted.statusCode, 200, accepted.body);
    const skip = await attempt(t, 'complete', claimId, randomAddress(), { _expectedVersion: -1 });
    assert.equal(skip.statusCode, 200, skip.body);
    await update({ claimId, metadata: { name: 'renamed' } });
    assert.equal((await getClaim(t, claimId)).version, '1');
    await drainQueue(t.ctx);
    const s = await status(t, accepted.json().claimAttemptId);
    assert.equal(s.success, false);
    assert.equal(s.error, 'Claim has been updated since last fetch: expected version 0, current version 1');
    assert.equal((await status(t, skip.json().claimAttemptId)).success, true, '-1 skips the check');
    assert.equal(
      (await getClaim(t, claimId)).plugins[0].publicState.numUses,
      1,
      'the failed attempt committed nothing',
    );
  });

  test('status is pending (success absent) until the worker runs', async () => {
    const claimId = await claimWith([numUses(1)]);
    const res = await attempt(t, 'complete', claimId, randomAddress());
    const id = res.json().claimAttemptId;
    const pending = await status(t, id);
    assert.equal(pending.success, undefined);
    assert.equal(pending.error, '');
    await drainQueue(t.ctx);
    assert.equal((await status(t, id)).success, true);
  });

  test('_specificInstanceIds: runs only the named instances (numUses always); must fit the success logic', async () => {
    const or = await claimWith(
      [
        numUses(10),
        { pluginId: 'password', instanceId: 'pw', privateParams: { password: 'pw' } },
        { pluginId: 'halt', instanceId: 'h' },
      ],
      { satisfyMethod: { type: 'OR', conditions: ['pw', 'h'] } },
    );
    // halt pauses the claim whatever the success logic or the instances named (docs/claims.md)
    for (const only of [['pw'], ['h']]) {
      const b = await attempt(t, 'simulate', or, randomAddress(), {
        _specificInstanceIds: only,
        pw: { password: 'pw' },
      });
      assert.equal(b.statusCode, 400);
      assert.equal(b.json().errorMessage, 'Claim halted');
    }
    const pwOr = await claimWith(
      [
        numUses(10),
        { pluginId: 'password', instanceId: 'pw', privateParams: { password: 'pw' } },
        { pluginId: 'password', instanceId: 'pw2', privateParams: { password: 'other' } },
      ],
      { satisfyMethod: { type: 'OR', conditions: ['pw', 'pw2'] } },
    );
    // with only pw run, pw2 never runs: the OR passes on pw
    const a = await run(pwOr, randomAddress(), { _specificInstanceIds: ['pw'], pw: { password: 'pw' } });
    assert.equal(a.success, true, a.error);
    // with only pw2 run, pw is not run and pw2 fails: the error is pw2's
    const c2 = await attempt(t, 'simulate', pwOr, randomAddress(), {
      _specificInstanceIds: ['pw2'],
      pw: { password: 'pw' },
    });
    assert.equal(c2.json().errorMessage, 'Incorrect password.');

    const and = await claimWith([
      numUses(10),
      { pluginId: 'password', instanceId: 'pw', privateParams: { password: 'pw' } },
      { pluginId: 'anonymous', instanceId: 'an' },
    ]);
    const c = await attempt(t, 'simulate', and, randomAddress(), {
      _specificInstanceIds: ['pw'],
      pw: { password: 'pw' },
    });
    assert.equal(c.statusCode, 400);
    assert.equal(
      c.json().errorMessage,
      "The claim's success logic is not satisfied: an did not run (not in _specificInstanceIds)",
    );
    const unknown = await attempt(t, 'simulate', and, randomAddress(), { _specificInstanceIds: ['zz'] });
    assert.equal(unknown.statusCode, 400);
    assert.match(unknown.json().errorMessage, /_specificInstanceIds names "zz"/);
    // numUses runs even when not named
    const full = await claimWith([
      numUses(0),
      { pluginId: 'password', instanceId: 'pw', privateParams: { password: 'pw' } },
    ]);
    const d = await attempt(t, 'simulate', full, randomAddress(), {
      _specificInstanceIds: ['pw'],
      pw: { password: 'pw' },
    });
    assert.equal(d.json().errorMessage, 'Overall max uses exceeded');
  });

  test('satisfyMethod OR: M of N; only the success path commits its state', async () => {
    const claimId = await claimWith(
      [
        numUses(10),
        { pluginId: 'password', instanceId: 'pw', privateParams: { password: 'secret' } },
        { pluginId: 'codes', instanceId: 'c1', publicParams: { numCodes: 2 }, privateParams: { codes: ['x0', 'x1'] } },
      ],
      { satisfyMethod: { type: 'OR', conditions: ['pw', 'c1'], options: { minNumSatisfied: 1 } } },
    );
    // both pass; the first passing condition (pw) is the path, so the code is NOT consumed
    const a = await run(claimId, randomAddress(), { pw: { password: 'secret' }, c1: { code: 'x0' } });
    assert.equal(a.success, true, a.error);
    let doc = await getClaim(t, claimId);
    assert.deepEqual(doc.plugins[2].publicState.usedCodeRanges, []);
    // the code alone satisfies the OR and is consumed
    const b = await run(claimId, randomAddress(), { c1: { code: 'x0' } });
    assert.equal(b.success, true, b.error);
    doc = await getClaim(t, claimId);
    assert.deepEqual(doc.plugins[2].publicState.usedCodeRanges, [{ start: '0', end: '0' }]);
    // neither: the first failing condition's error
    const c = await attempt(t, 'simulate', claimId, randomAddress(), { pw: { password: 'wrong' }, c1: { code: 'x0' } });
    assert.equal(c.json().errorMessage, 'Incorrect password.');

    const two = await claimWith(
      [
        numUses(10),
        { pluginId: 'password', instanceId: 'pw', privateParams: { password: 's' } },
        { pluginId: 'anonymous', instanceId: 'an' },
        { pluginId: 'password', instanceId: 'p2', privateParams: { password: 't' } },
      ],
      { satisfyMethod: { type: 'OR', conditions: ['pw', 'an', 'p2'], options: { minNumSatisfied: 2 } } },
    );
    assert.equal(
      (await attempt(t, 'simulate', two, randomAddress(), { pw: { password: 's' } })).statusCode,
      400,
      'one of three is not two',
    );
    assert.equal(
      (await attempt(t, 'simulate', two, '0x0000000000000000000000000000000000000000', { pw: { password: 's' } }))
        .statusCode,
      200,
      'two of three',
    );
  });

  test('satisfyMethod AND / NOT, nested; numUses stays mandatory', async () => {
    const claimId = await claimWith(
      [
        numUses(1),
        { pluginId: 'password', instanceId: 'pw', privateParams: { password: 's' } },
        { pluginId: 'anonymous', instanceId: 'an' },
      ],
      { satisfyMethod: { type: 'AND', conditions: ['pw', { type: 'NOT', conditions: ['an'] }] } },
    );
    assert.equal((await attempt(t, 'simulate', claimId, randomAddress(), { pw: { password: 's' } })).statusCode, 200);
    const anon = await attempt(t, 'simulate', claimId, '0x0000000000000000000000000000000000000000', {
      pw: { password: 's' },
    });
    assert.equal(anon.statusCode, 400);
    assert.equal(anon.json().errorMessage, "The claim's success logic is not satisfied");
    const ok = await run(claimId, randomAddress(), { pw: { password: 's' } });
    assert.equal(ok.success, true);
    // numUses is full: no success logic can skip it
    const full = await attempt(t, 'simulate', claimId, randomAddress(), { pw: { password: 's' } });
    assert.equal(full.json().errorMessage, 'Overall max uses exceeded');

    const bad = await t.request('POST', '/api/v0/claims', {
      token: t.session.accessToken,
      body: {
        claims: [{ claimId: newClaimId(), plugins: [numUses(1)], satisfyMethod: { type: 'OR', conditions: ['nope'] } }],
      },
    });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().errorMessage, /satisfyMethod\.conditions\[0\] names "nope"/);
  });

  test('claim numbers: numUses by default (zero-based, in arrival order)', async () => {
    const claimId = await claimWith([numUses(5)]);
    const ids: string[] = [];
    const addresses = [randomAddress(), randomAddress(), randomAddress()];
    for (const a of addresses) ids.push((await attempt(t, 'complete', claimId, a)).json().claimAttemptId);
    await drainQueue(t.ctx);
    assert.deepEqual(await Promise.all(ids.map(claimNumber)), [0, 1, 2]);
    const s = await t.request('GET', `/api/v0/claims/success/${claimId}/${addresses[1]}`);
    assert.deepEqual(s.json(), { successCount: 1, claimNumbers: [1] });
    const doc = await getClaim(t, claimId, 'fetchAllClaimedUsers=true');
    assert.deepEqual(doc.plugins[0].publicState.usedClaimNumbers, [{ start: '0', end: '2' }]);
    assert.deepEqual(doc.plugins[0].publicState.claimedUsers, {
      [addresses[0]]: [0],
      [addresses[1]]: [1],
      [addresses[2]]: [2],
    });
    assert.equal(
      (await getClaim(t, claimId)).plugins[0].publicState.claimedUsers,
      undefined,
      'only with fetchAllClaimedUsers',
    );
  });

  test('claim numbers: codes assigns the code index; whitelist assigns the list index', async () => {
    const codesClaim = await claimWith(
      [numUses(10), { pluginId: 'codes', instanceId: 'c1', publicParams: { numCodes: 10 } }],
      { assignMethod: 'c1' },
    );
    const seed = (await getClaim(t, codesClaim, 'fetchPrivateParams=true', t.session.accessToken)).plugins[1]
      .privateParams.seedCode;
    const a = await run(codesClaim, randomAddress(), { c1: { code: claimCode(seed, 7) } });
    const b = await run(codesClaim, randomAddress(), { c1: { code: claimCode(seed, 3) } });
    assert.equal(await claimNumber(a.id), 7);
    assert.equal(await claimNumber(b.id), 3);

    const list = [randomAddress(), randomAddress(), randomAddress()];
    const wl = await claimWith(
      [numUses(3), { pluginId: 'whitelist', instanceId: 'wl', publicParams: { list: { addresses: list } } }],
      { assignMethod: 'wl' },
    );
    const c = await run(wl, list[2]);
    assert.equal(await claimNumber(c.id), 2);
    const again = await attempt(t, 'simulate', wl, list[2]);
    assert.equal(again.json().errorMessage, 'Claim number already used: 2');
    const d = await run(wl, list[0]);
    assert.equal(await claimNumber(d.id), 0);
  });

  test('assignMethod must name one instance that can assign claim numbers', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ assignMethod: 'missing', plugins: [numUses(1)] }, /assignMethod must match a plugin instance ID/],
      [
        {
          assignMethod: 'pw',
          plugins: [numUses(1), { pluginId: 'password', instanceId: 'pw', privateParams: { password: 'x' } }],
        },
        /assignMethod must match a plugin instance ID/,
      ],
      [
        {
          assignMethod: 'wl',
          plugins: [
            numUses(1),
            {
              pluginId: 'whitelist',
              instanceId: 'wl',
              publicParams: { list: { addresses: [randomAddress()], whitelist: false } },
            },
          ],
        },
        /a denylist/,
      ],
    ];
    for (const [claim, re] of cases) {
      const res = await t.request('POST', '/api/v0/claims', {
        token: t.session.accessToken,
        body: { claims: [{ claimId: newClaimId(), ...claim }] },
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().errorMessage, re);
    }
    const fcfs = await t.request('POST', '/api/v0/claims', {
      token: t.session.accessToken,
      body: { claims: [{ claimId: newClaimId(), assignMethod: 'firstComeFirstServe', plugins: [numUses(1)] }] },
    });
    assert.equal(fcfs.statusCode, 200, fcfs.body);
  });

  test('a failure at execution commits nothing (no use, no code, no claim number)', async () => {
    const claimId = await claimWith([
      numUses(10),
      { pluginId: 'codes', instanceId: 'c1', publicParams: { numCodes: 1 }, privateParams: { codes: ['only'] } },
    ]);
    // both pass the pre-check; the second finds the code used at execution
    const first = await attempt(t, 'complete', claimId, randomAddress(), { c1: { code: 'only' } });
    const second = await attempt(t, 'complete', claimId, randomAddress(), { c1: { code: 'only' } });
    assert.equal(first.statusCode, 200);
    assert.equal(second.statusCode, 200);
    await drainQueue(t.ctx);
    assert.equal((await status(t, first.json().claimAttemptId)).success, true);
    const s = await status(t, second.json().claimAttemptId);
    assert.equal(s.success, false);
    assert.equal(s.error, 'Code already used.');
    const doc = await getClaim(t, claimId, 'fetchAllClaimedUsers=true');
    assert.equal(doc.plugins[0].publicState.numUses, 1);
    assert.deepEqual(doc.plugins[0].publicState.usedClaimNumbers, [{ start: '0', end: '0' }]);
    assert.equal(await claimNumber(second.json().claimAttemptId), -1);
  });

  test("a claim number taken behind the engine's back is never handed out again", async () => {
    const claimId = await claimWith([numUses(5)]);
    const a = await attempt(t, 'complete', claimId, randomAddress());
    const b = await attempt(t, 'complete', claimId, randomAddress());
    // another writer takes claim number 0 between acceptance and execution
    await t.ctx.db
      .insertInto('claim_numbers')
      .values({ claim_id: claimId, claim_number: 0, platform_address: randomAddress(), claim_attempt_id: 'elsewhere' })
      .execute();
    // the ledger's key refuses the batch and the lane re-runs checked: an expected path, no fault logged
    const errors: unknown[] = [];
    const logError = t.ctx.log.error;
    t.ctx.log.error = ((...args: unknown[]) => void errors.push(args)) as typeof logError;
    try {
      await drainQueue(t.ctx);
    } finally {
      t.ctx.log.error = logError;
    }
    assert.deepEqual(errors, []);
    const sa = await status(t, a.json().claimAttemptId);
    assert.equal(sa.success, false);
    assert.equal(sa.error, 'Claim number already used: 0');
    // the failure committed nothing, so the next attempt gets 0 again, which is still taken
    assert.equal((await status(t, b.json().claimAttemptId)).error, 'Claim number already used: 0');
    assert.equal((await getClaim(t, claimId)).plugins[0].publicState.numUses, 0);
  });

  test('attempts of one claim resolve in arrival order; a full claim fails the rest', async () => {
    const claimId = await claimWith([numUses(3)]);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++)
      ids.push((await attempt(t, 'complete', claimId, randomAddress())).json().claimAttemptId);
    await drainQueue(t.ctx);
    const statuses = await Promise.all(ids.map((id) => status(t, id)));
    assert.deepEqual(
      statuses.map((s) => s.success),
      [true, true, true, false, false, false],
    );
    assert.deepEqual(await Promise.all(ids.slice(0, 3).map(claimNumber)), [0, 1, 2]);
    assert.equal(statuses[4].error, 'Overall max uses exceeded');
  });

  test('PostgreSQL lanes: the lane list is reused while its lanes stay full, and re-read when one is not or it is too old', {
    skip: TEST_DB !== 'postgres' && 'PostgreSQL only: SQLite serves every lane from one transaction',
  }, async () => {
    const busy = await claimWith([numUses(100)]);
    const other = await claimWith([numUses(100)]);
    const complete = async (claimId: string) =>
      (await attempt(t, 'complete', claimId, randomAddress())).json().claimAttemptId as string;
    const busyIds = [];
    for (let i = 0; i < 5; i++) busyIds.push(await complete(busy));
    const resolvedCount = async (ids: string[]) =>
      (await Promise.all(ids.map((id) => status(t, id)))).filter((s) => s.success !== undefined).length;

    const worker = new ClaimWorker(t.ctx, { batchSize: 2, listen: false, laneListMaxAgeMs: 60_000 });
    assert.equal(await worker.pass(), 2); // lists [busy]; its batch is full
    const late = await complete(other);
    assert.equal(await worker.pass(), 2, 'the list is reused: only the busy lane is served');
    assert.equal((await status(t, late)).success, undefined);
    assert.equal(await worker.pass(), 1); // the busy lane's last one: its batch is not full
    assert.equal(await worker.pass(), 1, 'so the list is read again and finds the other lane');
    assert.equal((await status(t, late)).success, true);
    assert.equal(await resolvedCount(busyIds), 5);

    // however busy the listed lanes, the list is read again once it is older than the limit
    for (let i = 0; i < 4; i++) busyIds.push(await complete(busy));
    const soon = new ClaimWorker(t.ctx, { batchSize: 2, listen: false, laneListMaxAgeMs: 50 });
    assert.equal(await soon.pass(), 2);
    const later = await complete(other);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await soon.pass(), 3, 'both lanes: two of the busy one, the other one');
    assert.equal((await status(t, later)).success, true);
  });

  test("PostgreSQL lanes: a pass starts at the worker's own point of the lane list and serves every lane once", {
    skip: TEST_DB !== 'postgres' && 'PostgreSQL only: SQLite serves every lane from one transaction',
  }, async () => {
    await drainQueue(t.ctx);
    // four lanes, oldest first: one claim each
    const claims: string[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      claims.push(await claimWith([numUses(10)]));
      ids.push((await attempt(t, 'complete', claims[i], randomAddress())).json().claimAttemptId);
    }
    /** The claims in the order their batches ran: each batch is a transaction, its id is the rows' xmin. */
    const servedOrder = async () =>
      (
        await sql<{ claim_id: string }>`select claim_id from claim_attempts
          where claim_attempt_id in (${sql.join(ids)}) order by xmin::text::bigint`.execute(t.ctx.db)
      ).rows.map((r) => claims.indexOf(r.claim_id));
    const worker = new ClaimWorker(t.ctx, { listen: false, concurrency: 1, laneStart: 0.5 });
    assert.equal(await worker.pass(), 4, 'one pass serves every lane');
    assert.deepEqual(await servedOrder(), [2, 3, 0, 1], 'from the middle of the list, then its beginning');
    for (const id of ids) assert.equal((await status(t, id)).success, true);
  });

  test('many lanes, several workers starting at different lanes: every lane drains, in order, each attempt once', async () => {
    await drainQueue(t.ctx);
    const claims: string[] = [];
    for (let i = 0; i < 24; i++) claims.push(await claimWith([numUses(100)]));
    // four attempts per lane, arriving interleaved across the lanes
    const ids = new Map<string, string[]>(claims.map((c) => [c, []]));
    for (let round = 0; round < 4; round++)
      for (const c of claims)
        ids.get(c)!.push((await attempt(t, 'complete', c, randomAddress())).json().claimAttemptId);
    const queued = async () =>
      (await t.ctx.db.selectFrom('claim_attempts').select('seq').where('status', '=', 'queued').limit(1).execute())
        .length > 0;
    const workers = [0, 1 / 3, 2 / 3].map(
      (laneStart) => new ClaimWorker(t.ctx, { listen: false, batchSize: 2, concurrency: 2, laneStart }),
    );
    await Promise.all(
      workers.map(async (w) => {
        do await w.pass();
        while (await queued());
      }),
    );
    for (const c of claims) {
      const mine = ids.get(c)!;
      for (const id of mine) assert.equal((await status(t, id)).success, true, `lane ${c} drained`);
      // each lane in arrival order: claim numbers 0–3 in the order the attempts came
      assert.deepEqual(await Promise.all(mine.map(claimNumber)), [0, 1, 2, 3], `lane ${c} in order`);
      assert.equal((await getClaim(t, c)).plugins[0].publicState.numUses, 4);
    }
  });

  test('on-demand claims: stateless plugins only; success is evaluated live; no completes', async () => {
    const bad = await t.request('POST', '/api/v0/claims', {
      token: t.session.accessToken,
      body: {
        claims: [
          {
            claimId: newClaimId(),
            plugins: [{ pluginId: 'password', instanceId: 'pw', privateParams: { password: 'x' } }],
          },
        ],
      },
    });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().errorMessage, /numUses plugin is required/);
    const claimId = await claimWith([{ pluginId: 'anonymous', instanceId: 'an' }]);
    const yes = await t.request('GET', `/api/v0/claims/success/${claimId}/0x0000000000000000000000000000000000000000`);
    assert.deepEqual(yes.json(), { successCount: 1, claimNumbers: [] });
    const no = await t.request('GET', `/api/v0/claims/success/${claimId}/${randomAddress()}`);
    assert.deepEqual(no.json(), { successCount: 0, claimNumbers: [] });
    assert.equal(
      (await attempt(t, 'simulate', claimId, randomAddress())).json().errorMessage,
      'BitBadges address must be anonymous',
    );
    const complete = await attempt(t, 'complete', claimId, '0x0000000000000000000000000000000000000000');
    assert.equal(complete.statusCode, 400);
    assert.match(complete.json().errorMessage, /on-demand claim/);
  });

  test('inputs for unknown instances, unknown claims and bad addresses are refused', async () => {
    const claimId = await claimWith([numUses(1)]);
    const unknownInput = await attempt(t, 'simulate', claimId, randomAddress(), { other: { x: 1 } });
    assert.equal(unknownInput.statusCode, 400);
    assert.match(unknownInput.json().errorMessage, /body has unknown field "other"/);
    const noVersion = await t.request('POST', `/api/v0/claims/simulate/${claimId}/${randomAddress()}`, { body: {} });
    assert.equal(noVersion.statusCode, 400);
    assert.match(noVersion.json().errorMessage, /_expectedVersion/);
    assert.equal((await attempt(t, 'simulate', 'nosuchclaim', randomAddress())).statusCode, 404);
    const badAddr = await attempt(t, 'simulate', claimId, 'bb1notanaddress');
    assert.equal(badAddr.statusCode, 400);
    assert.match(badAddr.json().errorMessage, /Invalid address/);
  });
});
