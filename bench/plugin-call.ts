// Issue 33 micro-benchmark: the custom plugin's call path alone. One process drives the plugin
// call thread (src/plugin-documents/call-thread.ts) with signed calls to a local HTTPS endpoint in
// a child process (bench/plugins.ts --endpoint), N in flight, and prints the CPU per call by
// thread: the main thread (the handing over and the outcome; plus this driver's own small loop),
// the call thread, and V8's GC / compiler workers. No database and no HTTP server of ours, so
// the figures move only with the call path.
//
// `node bench/plugin-call.ts` (BENCH_CALLS per round, 10,000; BENCH_ROUNDS, 5; BENCH_CONCURRENCY,
// 64; BENCH_WARMUP, 3,000 calls). `node --cpu-prof --cpu-prof-dir=DIR bench/plugin-call.ts` writes a profile of the main
// thread and one of the call thread (worker threads inherit the flag).
import { randomBytes } from 'node:crypto';
import { loadavg as osLoadavg } from 'node:os';
import { testCertificates } from '../test/helpers/https-endpoint.ts';
import { versionConfig } from '../test/helpers/plugins.ts';
import { CallThread } from '../src/plugin-documents/call-thread.ts';
import type { CallContext } from '../src/plugin-documents/call.ts';
import type { PluginVersion } from '../src/plugin-documents/model.ts';
import { toPlatformAddress } from '../src/shared/addresses.ts';
import { fmt, median, startChild, threadCpuSeconds } from './lib/harness.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);

const certs = testCertificates();
const endpoint = await startChild('bench/plugins.ts', ['--endpoint'], {
  BENCH_KEY_PEM: certs.keyPem,
  BENCH_CERT_PEM: certs.certPem,
});
const uri = `https://127.0.0.1:${endpoint.port}/hook`;
// the version the service holds for bench/plugins.ts's plugin: one object, shared by every call
const version = {
  ...versionConfig(uri, {
    stateFunctionPreset: 'Stateless',
    verificationCall: { uri, hardcodedInputs: [], passAddress: true },
  }),
  version: 1,
  finalized: true,
  createdAt: 0,
  lastUpdated: 0,
} as PluginVersion;
const secret = randomBytes(32).toString('hex');
const claim = { claimId: 'custom', createdAt: 1_700_000_000_000, lastUpdated: 1_700_000_000_000 };
const context = (): CallContext => ({
  pluginId: 'bench-plugin',
  pluginSecret: secret,
  version,
  instanceId: 'cp',
  claim,
  claimAttemptId: '',
  isSimulation: true,
  attemptStatus: 'executing',
  platformAddress: toPlatformAddress(randomBytes(20)),
  isAddressSignedIn: false,
  locale: 'en',
  publicParams: {},
  privateParams: {},
  inputs: {},
});
const thread = new CallThread({ allowPrivateCidrs: ['127.0.0.1/32'], extraCaPem: certs.caPem });

async function run(n: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < n) {
        const outcome = await thread.call(context(), Date.now());
        if (!outcome.ok) throw new Error(`call failed: ${outcome.error}`);
      }
    }),
  );
}

try {
  console.log(`# plugin-call: ${ROUNDS} rounds of ${CALLS} calls, ${CONCURRENCY} in flight (load ${loadavg()})`);
  await run(Number(process.env.BENCH_WARMUP ?? 3000));
  const perThread = new Map<string, number[]>();
  const rates: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const before = threadCpuSeconds(process.pid);
    const t0 = performance.now();
    await run(CALLS);
    rates.push(CALLS / ((performance.now() - t0) / 1000));
    const after = threadCpuSeconds(process.pid);
    let total = 0;
    for (const [name, s] of after) {
      const us = ((s - (before.get(name) ?? 0)) / CALLS) * 1e6;
      total += us;
      if (!perThread.has(name)) perThread.set(name, []);
      perThread.get(name)!.push(us);
    }
    if (!perThread.has('total')) perThread.set('total', []);
    perThread.get('total')!.push(total);
  }
  const stats = await thread.stats();
  console.log(
    `calls/s (median) ${fmt(median(rates))}; TLS handshakes ${stats.tlsHandshakes} for ${stats.requests} calls`,
  );
  console.log(
    `CPU µs per call by thread, median (lowest) of rounds: ${[...perThread]
      .filter(([, xs]) => median(xs) > 0)
      .map(([name, xs]) => `${name} ${fmt(median(xs))} (${fmt(Math.min(...xs))})`)
      .join(', ')}`,
  );
  console.log(`(load ${loadavg()})`);
} finally {
  await thread.close();
  await endpoint.stop();
}

function loadavg(): string {
  return osLoadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
}
