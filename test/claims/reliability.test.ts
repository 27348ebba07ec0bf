// Reliability under real concurrency: separate service processes (`platform serve`, `platform
// worker`) on one database, driven over HTTP.
//   - two service processes, 1,000 concurrent completes by distinct addresses against maxUses 100:
//     exactly 100 successes, claim numbers 0–99 each once, no 5xx;
//   - the same against 50 codes: every code used exactly once;
//   - the worker process SIGKILLed under load and restarted: every accepted attempt resolves once.
// Several processes on one database are a PostgreSQL deployment's shape; it runs on SQLite too (processes share the file).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createTestDatabase, startApp, type TestApp } from '../helpers/app.ts';
import { BIN } from '../helpers/cli.ts';
import type { SignedIn } from '../helpers/signin.ts';
import { claimCode } from '../../src/claims/onchain.ts';
import { createClaim, getClaim, manager, newClaimId, numUses, randomAddress } from './helpers.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

interface Proc {
  child: ChildProcess;
  url: string;
  output(): string;
  kill(signal: NodeJS.Signals): Promise<void>;
}

/** Starts `platform <command>`; for `serve`, waits for its listening line and returns the URL. */
function start(command: 'serve' | 'worker', env: Record<string, string>): Promise<Proc> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, command], {
      env: { ...process.env, ...env, PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const proc: Proc = {
      child,
      url: '',
      output: () => out,
      kill: (signal) =>
        new Promise((r) => {
          if (child.exitCode !== null || child.signalCode !== null) return r();
          child.once('close', () => r());
          child.kill(signal);
        }),
    };
    const onData = (d: Buffer) => {
      out += d;
      if (command === 'worker' && /"msg":"worker started"/.test(out)) resolve(proc);
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m && !proc.url) {
        proc.url = m[1];
        resolve(proc);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('close', (code) =>
      reject(new Error(`platform ${command} exited (${code}) before it was ready:\n${out}`)),
    );
  });
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function pool<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

describe('reliability: several processes on one database', () => {
  let t: TestApp;
  let m: SignedIn;
  const procs: Proc[] = [];
  before(async () => {
    // this process only creates claims and reads the database: no worker here
    t = await startApp({ database: createTestDatabase(), env: { RUN_WORKER: 'false' } });
    m = await manager(t);
  });
  after(async () => {
    await Promise.all(procs.map((p) => p.kill('SIGTERM')));
    await t.close();
  });

  async function complete(url: string, claimId: string, address: string, body: Record<string, unknown> = {}) {
    const res = await fetch(`${url}/api/v0/claims/complete/${claimId}/${address}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': t.apiKey },
      body: JSON.stringify({ _expectedVersion: -1, ...body }),
    });
    return { status: res.status, json: (await res.json()) as { claimAttemptId?: string; errorMessage?: string } };
  }

  async function waitResolved(claimId: string, timeoutMs = PATIENCE_MS) {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const queued = await t.ctx.db
        .selectFrom('claim_attempts')
        .select('seq')
        .where('claim_id', '=', claimId)
        .where('status', '=', 'queued')
        .limit(1)
        .execute();
      if (queued.length === 0) return;
      if (Date.now() > until) throw new Error(`attempts of ${claimId} still queued after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const attemptsOf = (claimId: string) =>
    t.ctx.db
      .selectFrom('claim_attempts')
      .select(['claim_attempt_id', 'status', 'claim_number', 'error'])
      .where('claim_id', '=', claimId)
      .execute();

  test('two service processes: 1,000 completes against maxUses 100 give exactly 100 successes, numbers 0–99', async () => {
    const [a, b] = await Promise.all([start('serve', t.database.env), start('serve', t.database.env)]);
    procs.push(a, b);
    const claimId = newClaimId('rel');
    await createClaim(t, m.accessToken, { claimId, plugins: [numUses(100)] });
    const results = await pool(
      Array.from({ length: 1000 }, () => randomAddress()),
      200,
      (address, i) => complete(i % 2 ? a.url : b.url, claimId, address),
    );
    const fiveXX = results.filter((r) => r.status >= 500);
    assert.equal(fiveXX.length, 0, JSON.stringify(fiveXX.slice(0, 3)));
    const accepted = results.filter((r) => r.status === 200);
    const rejected = results.filter((r) => r.status !== 200);
    assert.ok(
      rejected.every((r) => r.status === 400 && r.json.errorMessage === 'Overall max uses exceeded'),
      JSON.stringify(rejected.slice(0, 3)),
    );
    assert.ok(accepted.length >= 100);
    await waitResolved(claimId);
    const rows = await attemptsOf(claimId);
    assert.equal(rows.length, accepted.length);
    const successes = rows.filter((r) => r.status === 'success');
    assert.equal(successes.length, 100);
    assert.deepEqual(
      successes.map((r) => r.claim_number).sort((x, y) => x - y),
      Array.from({ length: 100 }, (_, i) => i),
    );
    assert.ok(
      rows
        .filter((r) => r.status === 'failure')
        .every((r) => r.error === 'Overall max uses exceeded' && r.claim_number === -1),
    );
    const doc = await getClaim(t, claimId, 'fetchAllClaimedUsers=true');
    assert.equal(doc.plugins[0].publicState.numUses, 100);
    assert.deepEqual(doc.plugins[0].publicState.usedClaimNumbers, [{ start: '0', end: '99' }]);
  });

  test('two service processes: 1,000 completes over 50 codes use every code exactly once', async () => {
    const [a, b] = procs;
    const claimId = newClaimId('codes');
    await createClaim(t, m.accessToken, {
      claimId,
      assignMethod: 'c1',
      plugins: [numUses(1000), { pluginId: 'codes', instanceId: 'c1', publicParams: { numCodes: 50 } }],
    });
    const seed = (await getClaim(t, claimId, 'fetchPrivateParams=true', m.accessToken)).plugins[1].privateParams
      .seedCode as string;
    const results = await pool(
      Array.from({ length: 1000 }, (_, i) => i),
      200,
      (i) => complete(i % 2 ? a.url : b.url, claimId, randomAddress(), { c1: { code: claimCode(seed, i % 50) } }),
    );
    assert.equal(results.filter((r) => r.status >= 500).length, 0);
    // a used code is refused by the codes plugin, or (racing the commit) by the claim-number ledger
    const refused = results.filter((r) => r.status !== 200);
    assert.ok(
      refused.every(
        (r) =>
          r.status === 400 &&
          (r.json.errorMessage === 'Code already used.' ||
            /^Claim number already used: \d+$/.test(r.json.errorMessage ?? '')),
      ),
      JSON.stringify(refused.find((r) => r.json.errorMessage !== 'Code already used.')),
    );
    await waitResolved(claimId);
    const successes = (await attemptsOf(claimId)).filter((r) => r.status === 'success');
    assert.deepEqual(
      successes.map((r) => r.claim_number).sort((x, y) => x - y),
      Array.from({ length: 50 }, (_, i) => i),
      'each code index (the claim number) exactly once',
    );
    const doc = await getClaim(t, claimId);
    assert.deepEqual(doc.plugins[1].publicState.usedCodeRanges, [{ start: '0', end: '49' }]);
    assert.equal(doc.plugins[0].publicState.numUses, 50);
  });

  test('a worker killed with SIGKILL under load and restarted resolves every accepted attempt exactly once', async () => {
    await Promise.all(procs.splice(0).map((p) => p.kill('SIGTERM')));
    const serve = await start('serve', { ...t.database.env, RUN_WORKER: 'false' });
    procs.push(serve);
    let worker = await start('worker', t.database.env);
    procs.push(worker);
    const claimId = newClaimId('kill');
    await createClaim(t, m.accessToken, { claimId, plugins: [numUses(100_000)] });

    const N = 800;
    let killed = false;
    const load = pool(
      Array.from({ length: N }, () => randomAddress()),
      50,
      (address) => complete(serve.url, claimId, address),
    );
    // kill the worker twice while it is busy and completes keep arriving
    const queuedAtKill: boolean[] = [];
    const extra: Awaited<ReturnType<typeof complete>>[] = [];
    for (const threshold of [50, 300]) {
      // wait until the worker has resolved `threshold` attempts (completes keep arriving meanwhile)
      const deadline = Date.now() + PATIENCE_MS;
      for (;;) {
        const done = await t.ctx.db
          .selectFrom('claim_attempts')
          .select('status')
          .where('claim_id', '=', claimId)
          .where('status', '!=', 'queued')
          .execute();
        if (done.length >= threshold) break;
        assert.ok(Date.now() < deadline, `the worker did not resolve ${threshold} attempts within ${PATIENCE_MS} ms`);
        await new Promise((r) => setTimeout(r, 2));
      }
      // Freeze the worker (a SIGKILL at the freeze instant, as far as it can tell) only long enough to
      // read whether attempts are queued: frozen, it may hold SQLite's write lock, so no completes
      // are sent meanwhile (WAL readers are not blocked). Nothing queued: let it run again, send a few
      // completes if the load has already finished, and look again.
      let caught = false;
      let loadDone = false;
      void load.then(() => (loadDone = true));
      const freezeDeadline = Date.now() + PATIENCE_MS;
      while (!caught && Date.now() < freezeDeadline) {
        worker.child.kill('SIGSTOP');
        const queued = await t.ctx.db
          .selectFrom('claim_attempts')
          .select('status')
          .where('claim_id', '=', claimId)
          .where('status', '=', 'queued')
          .limit(1)
          .execute();
        if (queued.length > 0) {
          caught = true;
          break;
        }
        worker.child.kill('SIGCONT');
        if (loadDone)
          extra.push(
            ...(await Promise.all(Array.from({ length: 5 }, () => complete(serve.url, claimId, randomAddress())))),
          );
        else await new Promise((r) => setTimeout(r, 2));
      }
      queuedAtKill.push(caught);
      await worker.kill('SIGKILL');
      killed = true;
      worker = await start('worker', t.database.env);
      procs.push(worker);
    }
    const results = [...(await load), ...extra];
    const total = results.length; // N + the completes sent while the worker was frozen
    assert.ok(killed);
    assert.equal(
      results.filter((r) => r.status !== 200).length,
      0,
      JSON.stringify(results.find((r) => r.status !== 200)),
    );
    assert.ok(queuedAtKill.every(Boolean), 'each kill happened with attempts still queued');
    await waitResolved(claimId);
    const rows = await attemptsOf(claimId);
    const acceptedIds = results.map((r) => r.json.claimAttemptId).sort();
    assert.deepEqual(
      rows.map((r) => r.claim_attempt_id).sort(),
      acceptedIds,
      'every accepted attempt is stored, none twice',
    );
    assert.ok(
      rows.every((r) => r.status === 'success'),
      JSON.stringify(rows.find((r) => r.status !== 'success')),
    );
    assert.deepEqual(
      rows.map((r) => r.claim_number).sort((x, y) => x - y),
      Array.from({ length: total }, (_, i) => i),
      'one claim number per attempt: nothing processed twice, nothing skipped',
    );
    const ledger = await t.ctx.db
      .selectFrom('claim_numbers')
      .select('claim_attempt_id')
      .where('claim_id', '=', claimId)
      .execute();
    assert.equal(ledger.length, total);
    assert.equal(new Set(ledger.map((l) => l.claim_attempt_id)).size, total);
    assert.equal((await getClaim(t, claimId)).plugins[0].publicState.numUses, total);
  });
});
