// Status webhook delivery under a hanging endpoint: how long does a healthy origin's delivery wait
// while another origin has a backlog of deliveries that never get an answer? Before per-origin
// delivery (docs/security.md, "Webhook delivery concurrency") the loop leased 32 deliveries and
// waited for all of them, so every pass took the full 10 s deadline: 49 s behind 160.
//
// Per database, in one process (the real delivery loop, `startDeliveries`, and two local HTTPS
// endpoints on two origins: one that reads each request and never answers, one that answers 200):
//   1. baseline: no backlog; the delay of one healthy delivery (enqueue → the endpoint has it), three
//      times. It includes the loop's idle poll (up to 1 s), as it would in production;
//   2. backlog: BENCH_HANGING (default 160) deliveries to the hanging origin are queued and the loop
//      runs until that origin holds its first requests; then the healthy delivery's delay, three
//      times in a row, is printed beside the backlog still queued;
//   3. deliveries recorded as timed out that never reached the hanging endpoint (must be 0).
// Goal: the healthy delay behind the backlog within 2 s, like the baseline.
//
// `node bench/webhooks.ts` (BENCH_DB=sqlite|postgres for one).
import { createServer, type Server } from 'node:https';
import { startApp, type TestApp } from '../test/helpers/app.ts';
import { testCertificates } from '../test/helpers/https-endpoint.ts';
import { egressTestEnv, enqueue, insertPlugin, newDelivery } from '../test/webhooks/helpers.ts';
import { PER_ORIGIN, startDeliveries } from '../src/webhooks/deliver.ts';
import { benchDatabases, fmt, median } from './lib/harness.ts';
import type { TestDatabase } from '../test/helpers/app.ts';

const HANGING = Number(process.env.BENCH_HANGING ?? 160);
const ROUNDS = 3;
/** A healthy delivery not sent within this is reported as such (the old loop took ~50 s). */
const GIVE_UP_MS = 120_000;

interface Endpoint {
  port: number;
  /** claimAttemptIds received, in order. */
  received: string[];
  waitFor(attemptId: string): Promise<number>;
  close(): Promise<void>;
}

async function endpoint(answer: boolean): Promise<Endpoint> {
  const certs = testCertificates();
  const received: string[] = [];
  const waiters = new Map<string, (at: number) => void>();
  const server: Server = createServer(
    { key: certs.keyPem, cert: certs.certPem, keepAliveTimeout: 60_000 },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { claimAttemptId: string }).claimAttemptId;
        received.push(id);
        waiters.get(id)?.(performance.now());
        if (answer) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        // else: never answered; the caller's deadline ends the exchange
      });
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    received,
    waitFor: (id) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => resolve(NaN), GIVE_UP_MS);
        waiters.set(id, (at) => {
          clearTimeout(timer);
          resolve(at);
        });
      }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Enqueues one healthy delivery and returns the ms until its endpoint received it (NaN: never). */
async function healthyDelay(t: TestApp, pluginId: string, healthy: Endpoint): Promise<number> {
  const d = newDelivery(pluginId, `https://127.0.0.1:${healthy.port}/hook`);
  const arrived = healthy.waitFor(d.claimAttemptId);
  const t0 = performance.now();
  await enqueue(t, [d]);
  return (await arrived) - t0;
}

/** The hanging origin's deliveries not yet answered or timed out (queued or in flight). */
async function backlog(t: TestApp, url: string): Promise<number> {
  const r = await t.ctx.db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('url', '=', url)
    .where('attempts', '=', 0)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

const until = async (cond: () => boolean) => {
  while (!cond()) await new Promise((r) => setTimeout(r, 20));
};

const ms = (x: number) => (Number.isNaN(x) ? `not sent within ${GIVE_UP_MS / 1000} s` : `${fmt(x)} ms`);

async function run(name: string, make: () => TestDatabase): Promise<void> {
  const t = await startApp({ database: make(), env: { RUN_WORKER: 'false', ...egressTestEnv() } });
  const hanging = await endpoint(false);
  const healthy = await endpoint(true);
  const loop = startDeliveries(t.ctx);
  try {
    const { pluginId } = await insertPlugin(t, 'bench-owner');
    const baseline: number[] = [];
    for (let i = 0; i < ROUNDS; i++) baseline.push(await healthyDelay(t, pluginId, healthy));

    const hangingUrl = `https://localhost:${hanging.port}/hook`;
    await enqueue(
      t,
      Array.from({ length: HANGING }, () => newDelivery(pluginId, hangingUrl)),
    );
    // measured while the backlog's first deliveries hang, then after each of the next two waves
    // started (the previous one timed out), so the loop is seen in its steady state too
    await until(() => hanging.received.length > 0);
    const behind: Array<{ queued: number; hangingNow: number; delay: number }> = [];
    for (let i = 0; i < ROUNDS; i++) {
      if (i > 0) {
        const wave = hanging.received.length;
        await until(() => hanging.received.length >= wave + PER_ORIGIN);
      }
      await new Promise((r) => setTimeout(r, 300));
      const queued = await backlog(t, hangingUrl);
      behind.push({ queued, hangingNow: hanging.received.length, delay: await healthyDelay(t, pluginId, healthy) });
    }

    const timedOut = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .select('claim_attempt_id')
      .where('last_error', 'like', 'no complete response%')
      .execute();
    const reached = new Set(hanging.received);
    const spurious = timedOut.filter((r) => !reached.has(r.claim_attempt_id)).length;

    console.log(`${name}: healthy origin's delivery delay (enqueue → received), ${ROUNDS} rounds each`);
    console.log(
      `  no backlog (1st: idle poll)      ${baseline.map(ms).join('   ')}   (median ${ms(median(baseline))})`,
    );
    for (const b of behind)
      console.log(
        `  ${fmt(b.queued).padStart(4)} hanging deliveries waiting    ${ms(b.delay)}   (${b.hangingNow} of them sent so far)`,
      );
    const behindMedian = median(behind.map((b) => b.delay));
    console.log(
      `  median behind the backlog ${ms(behindMedian)} / median without ${ms(median(baseline))} = ${fmt(behindMedian / median(baseline), 2)} (both include the loop's idle poll of up to 1 s)`,
    );
    console.log(
      `  hanging endpoint: ${hanging.received.length} requests received so far; ${timedOut.length} tries recorded as timed out, ${spurious} of them never sent (must be 0)`,
    );
  } finally {
    await loop.stop();
    await hanging.close();
    await healthy.close();
    await t.close();
  }
}

console.log(
  `webhook deliveries: one healthy origin beside ${HANGING} hanging deliveries on another (goal: within 2 s)`,
);
for (const db of await benchDatabases()) await run(db.name, db.make);
