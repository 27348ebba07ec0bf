// Issue 2 benchmark: the cost of the real request pipeline (API-key gate with a database lookup,
// error model, validators) over a bare Fastify route with the same handler, measured in one run.
// Goal: the authenticated route keeps at least 70% of the bare route's request rate.
import { benchDatabases, fmt, load, startChild } from './lib/harness.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
console.log(`# foundation: authenticated GET vs bare Fastify (autocannon, 50 connections, ${seconds}s each)`);

const bare = await startChild('bench/lib/servers.ts', ['bare']);
await load({ url: `http://127.0.0.1:${bare.port}/ping`, seconds: 1 }); // warm-up
const baseline = await load({ url: `http://127.0.0.1:${bare.port}/ping`, seconds });
await bare.stop();
console.log(`bare Fastify route           ${fmt(baseline.rps)} req/s  p50 ${baseline.p50} ms  p99 ${baseline.p99} ms`);

for (const db of await benchDatabases()) {
  const database = db.make();
  const gated = await startChild('bench/lib/servers.ts', ['gated'], database.env);
  const headers = { 'x-api-key': gated.extra[0] };
  const url = `http://127.0.0.1:${gated.port}/api/v0/ping`;
  await load({ url, headers, seconds: 1 });
  const r = await load({ url, headers, seconds });
  await gated.stop();
  await database.drop();
  const bad = r.errors + r.non2xx;
  console.log(
    `authenticated route (${db.name.padEnd(8)}) ${fmt(r.rps)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  ratio ${fmt(r.rps / baseline.rps, 2)} (goal >= 0.70)${bad ? `  FAILED REQUESTS: ${bad}` : ''}`,
  );
}
