// Attempts: simulate writes nothing, status (pending, resolved, unknown), success by address,
// the attempts list (filters, bookmark pagination, total), attempt inputs encrypted at rest, and
// the `platform worker` process resolving attempts a service without a worker accepted.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import { ALL_SCOPES } from '../claims/helpers.ts';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { BIN, runCli } from '../helpers/cli.ts';
import { parseAddress } from '../../src/shared/addresses.ts';
import { drainQueue } from '../../src/claims/queue.ts';
import { attempt, createClaim, manager, newClaimId, numUses, randomAddress, resolved, status } from './helpers.ts';

describe('claim attempts', () => {
  const t = useApp({ env: { RUN_WORKER: 'false' }, signedIn: ALL_SCOPES });

  const countAttempts = async () =>
    Number(
      (
        await t.ctx.db
          .selectFrom('claim_attempts')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  test('simulate is instant, answers 32 zeros and writes nothing', async () => {
    const claimId = newClaimId();
    await createClaim(t, t.session.accessToken, { claimId, plugins: [numUses(1)] });
    const before = await countAttempts();
    for (let i = 0; i < 3; i++) {
      const res = await attempt(t, 'simulate', claimId, randomAddress());
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { claimAttemptId: '0'.repeat(32) });
    }
    assert.equal(await countAttempts(), before);
    assert.deepEqual(await status(t, '0'.repeat(32)), { success: true, error: '', platformAddress: '' });
  });

  test('attempt ids: 32 hex digits that begin with the time of acceptance, so later ids sort after earlier ones', async () => {
    const claimId = newClaimId();
    await createClaim(t, t.session.accessToken, { claimId, plugins: [numUses(10)] });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const from = t.ctx.clock.now();
      const res = await attempt(t, 'complete', claimId, randomAddress());
      assert.equal(res.statusCode, 200);
      const id = res.json().claimAttemptId as string;
      assert.match(id, /^[0-9a-f]{32}$/);
      const at = Number.parseInt(id.slice(0, 12), 16);
      assert.ok(at >= from && at <= t.ctx.clock.now(), `${id} does not begin with the time of acceptance`);
      ids.push(id);
      while (t.ctx.clock.now() === at) await new Promise((r) => setTimeout(r, 1));
    }
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids.map((id) => id.slice(12))).size, 3);
  });

  test('a failing complete queues nothing', async () => {
    const claimId = newClaimId();
    await createClaim(t, t.session.accessToken, {
      claimId,
      plugins: [numUses(1), { pluginId: 'halt', instanceId: 'h' }],
    });
    const before = await countAttempts();
    const res = await attempt(t, 'complete', claimId, randomAddress());
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().errorMessage, 'Claim halted');
    assert.equal(await countAttempts(), before);
  });

  test('attempt inputs are encrypted while queued and dropped once resolved; status over GET and POST', async () => {
    const claimId = newClaimId();
    await createClaim(t, t.session.accessToken, {
      claimId,
      plugins: [numUses(2), { pluginId: 'password', instanceId: 'pw', privateParams: { password: 'queued-secret' } }],
    });
    const who = parseAddress(randomAddress());
    const res = await attempt(t, 'complete', claimId, who.evmAddress, { pw: { password: 'queued-secret' } });
    assert.equal(res.statusCode, 200, res.body);
    const id = res.json().claimAttemptId;
    const queued = await t.ctx.db
      .selectFrom('claim_attempts')
      .selectAll()
      .where('claim_attempt_id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(queued.status, 'queued');
    assert.match(queued.payload ?? '', /^v1\./);
    assert.ok(!JSON.stringify(queued).includes('queued-secret'));
    assert.equal(queued.platform_address, who.platformAddress, 'stored in the native form');
    const pending = await t.request('POST', `/api/v0/claims/status/${id}`);
    assert.deepEqual(pending.json(), { error: '', platformAddress: who.platformAddress });
    await drainQueue(t.ctx);
    const done = await t.ctx.db
      .selectFrom('claim_attempts')
      .selectAll()
      .where('claim_attempt_id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(done.payload, null);
    assert.equal(done.status, 'success');
    assert.deepEqual((await t.request('POST', `/api/v0/claims/status/${id}`)).json(), {
      success: true,
      error: '',
      platformAddress: who.platformAddress,
    });
    assert.equal((await t.request('GET', `/api/v0/claims/status/${'a'.repeat(32)}`)).statusCode, 404);
    assert.equal((await t.request('GET', '/api/v0/claims/status/not-hex')).statusCode, 400);
  });

  test('success by address counts completions and lists claim numbers', async () => {
    const claimId = newClaimId();
    await createClaim(t, t.session.accessToken, { claimId, plugins: [numUses(10)] });
    const who = parseAddress(randomAddress());
    for (const a of [who.platformAddress, randomAddress(), who.evmAddress])
      assert.equal((await attempt(t, 'complete', claimId, a)).statusCode, 200);
    await drainQueue(t.ctx);
    const res = await t.request('GET', `/api/v0/claims/success/${claimId}/${who.evmAddress}`);
    assert.deepEqual(res.json(), { successCount: 2, claimNumbers: [0, 2] });
    assert.deepEqual((await t.request('GET', `/api/v0/claims/success/${claimId}/${randomAddress()}`)).json(), {
      successCount: 0,
      claimNumbers: [],
    });
    assert.equal((await t.request('GET', `/api/v0/claims/success/nosuch/${randomAddress()}`)).statusCode, 404);
  });

  test('attempts list: newest first, failures only with includeErrors, address filter, bookmarks, total', async () => {
    // 30 uses, 33 attempts: the last 3 fail at execution (max uses)
    const listed = newClaimId();
    await createClaim(t, t.session.accessToken, { claimId: listed, plugins: [numUses(30)] });
    const repeat = parseAddress(randomAddress());
    const ids: string[] = [];
    for (let i = 0; i < 33; i++) {
      const address = i % 10 === 0 ? (i % 20 === 0 ? repeat.platformAddress : repeat.evmAddress) : randomAddress();
      const res = await attempt(t, 'complete', listed, address);
      assert.equal(res.statusCode, 200, res.body);
      ids.push(res.json().claimAttemptId);
    }
    await drainQueue(t.ctx);
    const list = async (query: string) => {
      const res = await t.get(`/api/v0/claims/${listed}/attempts?${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    const p1 = await list('bookmark=');
    assert.equal(p1.total, 30);
    assert.equal(p1.docs.length, 25);
    assert.equal(p1.hasMore, true);
    const p2 = await list(`bookmark=${encodeURIComponent(p1.bookmark)}`);
    assert.equal(p2.docs.length, 5);
    assert.equal(p2.hasMore, false);
    assert.equal(p2.bookmark, '');
    const all = [...p1.docs, ...p2.docs];
    assert.deepEqual(
      all.map((d) => d.claimAttemptId),
      ids.slice(0, 30).reverse(),
      'newest first',
    );
    assert.ok(all.every((d) => d.success === true && d.error === undefined && d.claimId === listed));
    assert.deepEqual(
      all.map((d) => d.claimNumber),
      Array.from({ length: 30 }, (_, i) => 29 - i),
    );
    assert.ok(all.every((d) => /^\d+$/.test(d.attemptedAt as string)));

    const withErrors = await list('includeErrors=true');
    assert.equal(withErrors.total, 33);
    const failures = withErrors.docs.filter((d) => d.success === false);
    assert.equal(failures.length, 3);
    assert.ok(failures.every((d) => d.claimNumber === -1 && d.error === 'Overall max uses exceeded'));

    // both address forms name the same user: i = 0, 10, 20, 30 (30 failed)
    const mine = await list(`address=${repeat.evmAddress}&includeErrors=true`);
    assert.equal(mine.total, 4);
    assert.ok(mine.docs.every((d) => d.platformAddress === repeat.platformAddress));
    assert.equal((await list(`address=${repeat.platformAddress}`)).total, 3);
    // each attempt shows the address in the form its claimer used
    assert.deepEqual(
      mine.docs.map((d) => d.claimerAddress),
      [repeat.evmAddress, repeat.platformAddress, repeat.evmAddress, repeat.platformAddress],
    );
    assert.ok(all.every((d) => typeof d.claimerAddress === 'string'));

    // a bookmark belongs to its list
    const foreign = await t.request(
      'GET',
      `/api/v0/claims/${listed}/attempts?includeErrors=true&bookmark=${encodeURIComponent(p1.bookmark)}`,
    );
    assert.equal(foreign.statusCode, 400);
    assert.equal((await t.request('GET', `/api/v0/claims/nosuch/attempts`)).statusCode, 404);
  });

  test('refused tries: logged per claim (instance, plugin, error, both address forms), owner only, bounded', async () => {
    const claimId = newClaimId();
    await createClaim(t, t.session.accessToken, {
      claimId,
      plugins: [numUses(500), { pluginId: 'password', instanceId: 'pw', privateParams: { password: 'right' } }],
    });
    const who = parseAddress(randomAddress());
    const wrong = await attempt(t, 'complete', claimId, who.evmAddress, { pw: { password: 'wrong' } });
    assert.equal(wrong.statusCode, 400, wrong.body);
    // a refused simulate is not a try: it is not logged
    await attempt(t, 'simulate', claimId, who.evmAddress, { pw: { password: 'wrong' } });
    const ok = await attempt(t, 'complete', claimId, who.platformAddress, { pw: { password: 'right' } });
    assert.equal(ok.statusCode, 200, ok.body);
    const read = (token?: string) => t.request('GET', `/api/v0/claims/${claimId}/refusals`, token ? { token } : {});
    const res = await read(t.session.accessToken);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.limit, 100);
    assert.equal(body.docs.length, 1);
    const [doc] = body.docs;
    assert.match(doc.refusedAt, /^\d+$/);
    assert.deepEqual(
      { ...doc, refusedAt: '' },
      {
        refusedAt: '',
        platformAddress: who.platformAddress,
        claimerAddress: who.evmAddress,
        instanceId: 'pw',
        pluginId: 'password',
        error: wrong.json().errorMessage,
      },
    );

    // another user is refused; no session is a 401
    const other = await manager(t);
    const foreign = await read(other.accessToken);
    assert.equal(foreign.statusCode, 403);
    assert.deepEqual(foreign.json(), {
      errorMessage: `Only the creator or manager of claim ${claimId} can read its refused tries`,
    });
    assert.equal((await read()).statusCode, 401);
    assert.equal(
      (await t.request('GET', '/api/v0/claims/nosuch/refusals', { token: t.session.accessToken })).statusCode,
      404,
    );

    // bounded: the newest 100 per claim stay, whoever keeps trying
    const many = 130;
    await Promise.all(
      Array.from({ length: many }, () =>
        attempt(t, 'complete', claimId, randomAddress(), { pw: { password: `no` } }).then((r) =>
          assert.equal(r.statusCode, 400, r.body),
        ),
      ),
    );
    const bounded = (await read(t.session.accessToken)).json();
    assert.equal(bounded.docs.length, 100);
    const stored = await t.ctx.db
      .selectFrom('claim_refusals')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('claim_id', '=', claimId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(stored.n), 100);
    assert.ok(!bounded.docs.some((d: { claimerAddress: string }) => d.claimerAddress === who.evmAddress));
  });

  test('`platform worker` resolves what a service without a worker accepted; --once drains', async () => {
    const claimId = newClaimId();
    await createClaim(t, t.session.accessToken, { claimId, plugins: [numUses(100)] });
    const first = (await attempt(t, 'complete', claimId, randomAddress())).json().claimAttemptId;
    const once = await runCli(['worker', '--once'], t.database.env);
    assert.equal(once.code, 0, once.stderr);
    assert.ok(JSON.parse(once.stdout).resolved >= 1);
    assert.equal((await status(t, first)).success, true);

    const child = spawn(process.execPath, [BIN, 'worker'], {
      env: { ...process.env, ...t.database.env, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    try {
      const ids = [];
      for (let i = 0; i < 5; i++)
        ids.push((await attempt(t, 'complete', claimId, randomAddress())).json().claimAttemptId);
      for (const id of ids) assert.equal((await resolved(t, id)).success, true, stderr);
    } finally {
      const closed = new Promise((r) => child.once('close', r));
      child.kill('SIGTERM');
      await closed;
    }
    assert.equal(child.exitCode, 0, stderr);
  });
});
