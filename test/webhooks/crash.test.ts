// Status webhooks under real processes: `platform worker --only webhook-deliveries` processes
// share one database. Two workers never send one delivery at the same time and deliver each
// exactly once; workers SIGKILLed while holding deliveries (as many as the per-origin limit lets
// each send at once) lose none: once their leases expire a
// new worker delivers every one, and each is answered exactly once.
// "Delivered" is counted at the endpoint: a 2xx response fully written to a live connection.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:https';
import { createTestDatabase, startApp, type TestApp } from '../helpers/app.ts';
import { BIN } from '../helpers/cli.ts';
import { testCertificates } from '../helpers/https-endpoint.ts';
import { LEASE_MS } from '../../src/webhooks/outbox.ts';
import { PER_ORIGIN } from '../../src/webhooks/deliver.ts';
import { egressTestEnv, enqueue, insertPlugin, newDelivery } from './helpers.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

interface Worker {
  child: ChildProcess;
  output(): string;
  kill(signal: NodeJS.Signals): Promise<void>;
}

function startWorker(env: Record<string, string>): Promise<Worker> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'worker', '--only', 'webhook-deliveries'], {
      env: { ...process.env, ...env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const worker: Worker = {
      child,
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
      if (/"msg":"worker started"/.test(out)) resolve(worker);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('close', (code) => reject(new Error(`worker exited (${code}) before it was ready:\n${out}`)));
  });
}

/** An HTTPS endpoint that can hold requests, and counts answers per claimAttemptId. */
async function startEndpoint() {
  const certs = testCertificates();
  const answered = new Map<string, number>();
  const inFlight = new Map<string, number>();
  let overlaps = 0;
  let frozen = false;
  const held: Array<{ id: string; release: () => void; closed: Promise<void> }> = [];
  const server: Server = createServer(
    { key: certs.keyPem, cert: certs.certPem, keepAliveTimeout: 60_000 },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const id = JSON.parse(Buffer.concat(chunks).toString()).claimAttemptId as string;
        if ((inFlight.get(id) ?? 0) > 0) overlaps++;
        inFlight.set(id, (inFlight.get(id) ?? 0) + 1);
        let closed!: () => void;
        const closedP = new Promise<void>((r) => (closed = r));
        res.on('finish', () => answered.set(id, (answered.get(id) ?? 0) + 1));
        res.on('close', () => {
          inFlight.set(id, inFlight.get(id)! - 1);
          closed();
        });
        const answer = () => {
          if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        };
        if (frozen) held.push({ id, release: answer, closed: closedP });
        else setTimeout(answer, 20);
      });
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `https://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  return {
    url,
    answered,
    held,
    overlaps: () => overlaps,
    freeze: () => (frozen = true),
    unfreeze() {
      frozen = false;
      for (const h of held.splice(0)) h.release();
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

async function until(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  diagnose?: () => Promise<string>,
) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${diagnose ? `\n${await diagnose()}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('status webhooks: worker processes on one database', () => {
  let t: TestApp;
  let endpoint: Awaited<ReturnType<typeof startEndpoint>>;
  let pluginId: string;
  const workers: Worker[] = [];
  const env = () => ({ ...t.database.env, ...egressTestEnv() });

  before(async () => {
    endpoint = await startEndpoint();
    t = await startApp({ database: createTestDatabase(), env: { RUN_WORKER: 'false', ...egressTestEnv() } });
    ({ pluginId } = await insertPlugin(t, 'bb1owner'));
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.kill('SIGTERM')));
    await t.close();
    await endpoint.close();
  });

  const statuses = async () => {
    const rows = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .select(['claim_attempt_id', 'status'])
      .where('plugin_id', '=', pluginId)
      .execute();
    return rows;
  };
  const diagnose = async () => {
    const rows = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'attempts', 'last_error', 'lease_until'])
      .where('plugin_id', '=', pluginId)
      .execute();
    const byStatus = rows.reduce<Record<string, number>>((m, r) => ((m[r.status] = (m[r.status] ?? 0) + 1), m), {});
    const errors = [...new Set(rows.map((r) => r.last_error).filter(Boolean))];
    return `rows ${JSON.stringify(byStatus)} errors ${JSON.stringify(errors)}\n${workers.map((w) => w.output().slice(-3000)).join('\n---\n')}`;
  };
  const allDelivered = async (count: number) => {
    const rows = await statuses();
    return rows.length === count && rows.every((r) => r.status === 'delivered');
  };

  // nothing here asserts a duration: every wait ends when its condition holds (PATIENCE_MS only names a hang)
  test('two workers share the deliveries: none sent twice at once, each answered exactly once', async () => {
    workers.push(await startWorker(env()), await startWorker(env()));
    const batch = Array.from({ length: 60 }, () => newDelivery(pluginId, endpoint.url));
    for (let i = 0; i < batch.length; i += 10) await enqueue(t, batch.slice(i, i + 10));
    await until('60 deliveries', () => allDelivered(60), PATIENCE_MS, diagnose);
    assert.equal(endpoint.overlaps(), 0);
    for (const d of batch) assert.equal(endpoint.answered.get(d.claimAttemptId), 1, d.claimAttemptId);
  });

  test('workers SIGKILLed mid-delivery: after their leases expire a new worker delivers each one exactly once', async () => {
    endpoint.freeze();
    const batch = Array.from({ length: 30 }, () => newDelivery(pluginId, endpoint.url));
    await enqueue(t, batch);
    // both workers hold as many as they may send to one origin at once (leased, requests sent, no
    // answer yet); the rest of the batch waits, queued
    const holding = 2 * PER_ORIGIN;
    await until(`${holding} held requests`, () => endpoint.held.length >= holding, PATIENCE_MS);
    await Promise.all(workers.splice(0).map((w) => w.kill('SIGKILL')));
    // the answers go to dead connections: wait until the endpoint has seen every one close
    await Promise.all(endpoint.held.map((h) => h.closed));
    const heldIds = new Set(endpoint.held.map((h) => h.id));
    assert.equal(heldIds.size, holding, 'no delivery was sent twice');
    endpoint.unfreeze();
    const rowsBefore = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .select(['claim_attempt_id', 'status', 'attempts', 'lease_until'])
      .where(
        'claim_attempt_id',
        'in',
        batch.map((d) => d.claimAttemptId),
      )
      .execute();
    const leased = rowsBefore.filter((r) => heldIds.has(r.claim_attempt_id));
    assert.equal(leased.length, holding);
    assert.ok(
      leased.every((r) => r.status === 'pending' && r.lease_until !== null && Number(r.attempts) === 0),
      'the killed workers left leases, no results',
    );
    assert.ok(
      rowsBefore
        .filter((r) => !heldIds.has(r.claim_attempt_id))
        .every((r) => r.status === 'pending' && r.lease_until === null && Number(r.attempts) === 0),
      'the rest was never taken',
    );
    const leaseUntil = new Map(leased.map((r) => [r.claim_attempt_id, Number(r.lease_until)]));

    workers.push(await startWorker(env()));
    await until('90 deliveries', () => allDelivered(90), LEASE_MS + PATIENCE_MS, diagnose);
    assert.equal(endpoint.overlaps(), 0);
    for (const d of batch) assert.equal(endpoint.answered.get(d.claimAttemptId), 1, d.claimAttemptId);
    const rows = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .select(['claim_attempt_id', 'attempts', 'lease_owner', 'last_try_at'])
      .where(
        'claim_attempt_id',
        'in',
        batch.map((d) => d.claimAttemptId),
      )
      .execute();
    // the killed tries were never recorded: one recorded try each, no lease left behind, and the
    // new worker sent each one only once its killed holder's lease had expired
    assert.ok(
      rows.every((r) => r.attempts === 1 && r.lease_owner === null),
      JSON.stringify(rows.slice(0, 3)),
    );
    for (const r of rows.filter((x) => leaseUntil.has(x.claim_attempt_id)))
      assert.ok(
        Number(r.last_try_at) >= leaseUntil.get(r.claim_attempt_id)!,
        `${r.claim_attempt_id} was re-sent before its lease expired`,
      );
  });
});
