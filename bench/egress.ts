// What the SSRF-safe egress client costs per call, next to a bare undici Pool (the baseline) on
// the same local HTTPS endpoint (test CA, its own process, answers `{}` at once), in one run:
//   - p50 / p99 latency of sequential calls and the p50 added by egress (URL checks, address
//     classification, pinned pool lookup, deadline timer, capped body read);
//   - throughput with 16 calls in flight, and the ratio egress / baseline;
//   - TLS handshakes per 1,000 calls after warm-up (keep-alive pools: should be 0).
// No name resolution is involved (the URL is an address literal): this is the client's own cost.
//
// `node bench/egress.ts` (--full for 20,000 calls per figure instead of 2,000).
import { Pool } from 'undici';
import { rootCertificates } from 'node:tls';
import { testCertificates } from '../test/helpers/https-endpoint.ts';
import { Egress } from '../src/egress/index.ts';
import { fmt, median, percentile, startChild } from './lib/harness.ts';
import { record } from './lib/record.ts';

const FULL = process.argv.includes('--full');
const N = FULL ? 20_000 : 2_000;
const CONCURRENCY = 16;

async function endpoint(): Promise<void> {
  const { createServer } = await import('node:https');
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => process.exit(0));
  const server = createServer(
    { key: process.env.BENCH_KEY_PEM!, cert: process.env.BENCH_CERT_PEM!, keepAliveTimeout: 60_000 },
    (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 }).end('{}'));
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  console.log(`READY ${typeof addr === 'object' && addr ? addr.port : 0}`);
}

type Call = () => Promise<void>;

async function sequential(call: Call, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b);
}

async function throughput(call: Call, n: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < n) await call();
    }),
  );
  return n / ((performance.now() - t0) / 1000);
}

async function main(): Promise<void> {
  const certs = testCertificates();
  const child = await startChild('bench/egress.ts', ['--endpoint'], {
    BENCH_KEY_PEM: certs.keyPem,
    BENCH_CERT_PEM: certs.certPem,
  });
  const url = `https://127.0.0.1:${child.port}/hook`;
  const body = JSON.stringify({
    claimId: 'c',
    claimAttemptId: 'a',
    instanceId: 'p',
    pluginSecret: 'x'.repeat(64),
    _isSimulation: false,
  });
  const headers = { 'content-type': 'application/json' };

  const baselinePool = new Pool(`https://127.0.0.1:${child.port}`, {
    connections: 32,
    connect: { ca: [...rootCertificates, certs.caPem] },
  });
  const baseline: Call = async () => {
    const res = await baselinePool.request({ path: '/hook', method: 'POST', headers, body });
    await res.body.arrayBuffer();
    if (res.statusCode !== 200) throw new Error(`baseline: ${res.statusCode}`);
  };
  const egress = new Egress({ allowPrivateCidrs: ['127.0.0.1/32'], extraCaPem: certs.caPem });
  const viaEgress: Call = async () => {
    const res = await egress.request({ url, headers, body });
    if (res.status !== 200) throw new Error(`egress: ${res.status}`);
  };

  try {
    // warm-up: connections open, code paths compiled
    await throughput(baseline, 500);
    await throughput(viaEgress, 500);
    const handshakesBefore = egress.stats().tlsHandshakes;
    const callsBefore = egress.stats().requests;

    // interleaved rounds so drifting machine load hits both sides alike
    const rounds = 4;
    const seqBase: number[] = [];
    const seqEgress: number[] = [];
    const rpsBase: number[] = [];
    const rpsEgress: number[] = [];
    for (let r = 0; r < rounds; r++) {
      seqBase.push(...(await sequential(baseline, N / rounds)));
      seqEgress.push(...(await sequential(viaEgress, N / rounds)));
      rpsBase.push(await throughput(baseline, N / rounds));
      rpsEgress.push(await throughput(viaEgress, N / rounds));
    }
    seqBase.sort((a, b) => a - b);
    seqEgress.sort((a, b) => a - b);
    const handshakes = egress.stats().tlsHandshakes - handshakesBefore;
    const calls = egress.stats().requests - callsBefore;

    console.log(
      `egress client vs bare undici Pool, local HTTPS endpoint, ${fmt(N)} calls per figure${FULL ? '' : ' (--full: 20,000)'}`,
    );
    console.log(
      `  sequential p50   baseline ${fmt(percentile(seqBase, 50), 3)} ms   egress ${fmt(percentile(seqEgress, 50), 3)} ms   added ${fmt(percentile(seqEgress, 50) - percentile(seqBase, 50), 3)} ms`,
    );
    console.log(
      `  sequential p99   baseline ${fmt(percentile(seqBase, 99), 3)} ms   egress ${fmt(percentile(seqEgress, 99), 3)} ms`,
    );
    console.log(
      `  ${CONCURRENCY} in flight     baseline ${fmt(median(rpsBase))} calls/s   egress ${fmt(median(rpsEgress))} calls/s   ratio ${fmt(median(rpsEgress) / median(rpsBase), 2)} (median of ${rounds} rounds)`,
    );
    record(`egress / plain calls, rate with ${CONCURRENCY} in flight`, median(rpsEgress) / median(rpsBase));
    console.log(
      `  TLS handshakes per 1,000 calls after warm-up: ${fmt((handshakes / calls) * 1000, 2)} (${handshakes} over ${fmt(calls)} calls)`,
    );
  } finally {
    await egress.close();
    await baselinePool.close();
    await child.stop();
  }
}

if (process.argv[2] === '--endpoint') await endpoint();
else await main();
