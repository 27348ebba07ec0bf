// Swap estimation benchmark: 1,000 balancer pools over 200 denoms, 10,000 random quotes through the
// estimate domain logic (validation, the ranked route search with exact bigint quoting of the best
// routes, message building), p50/p99 latency and CPU time; then, in the same run, on a sample of the
// same quotes: the exhaustive baseline (every route up to 3 hops, all quoted; its best output is
// "the exhaustive optimum"), the ranked search, and the former SQS candidate search alone (the
// "before"): latency, CPU per quote and their ratios, and how often each came within 0.1% of the
// exhaustive optimum. Two market shapes: hub-and-spoke (how real DEX liquidity sits) and uniformly
// random pairs. Reserves follow one price per denom (±0.5%).
//
//   node bench/swap.ts            (SWAP_BENCH_QUOTES, SWAP_BENCH_BASELINE to resize; SWAP_BENCH_BUDGET_MS caps
//                                  the baseline's wall time, 25 s by default)
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { loadConfig } from '../src/config.ts';
import type { AppContext } from '../src/context.ts';
import { setAddressPrefix, toPlatformAddress } from '../src/shared/addresses.ts';
import { systemClock } from '../src/shared/clock.ts';
import { emptyRegistry } from '../src/swap/ibc.ts';
import { estimateSwap } from '../src/swap/estimate.ts';
import { buildPoolState, parsePool } from '../src/swap/pools.ts';
import { searchBest } from '../src/swap/ranked.ts';
import { allRoutes, bestQuote, findCandidateRoutes } from '../src/swap/router.ts';
import { SwapService } from '../src/swap/service.ts';
import { validateEstimate } from '../src/swap/validate.ts';
import { randInt, randomPools, rng } from '../test/swap/fixtures.ts';
import { record } from './lib/record.ts';

const POOLS = 1_000;
const DENOMS = 200;
const QUOTES = Number(process.env.SWAP_BENCH_QUOTES ?? 10_000);
const BASELINE = Number(process.env.SWAP_BENCH_BASELINE ?? 500);

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const ms = (x: number) => `${x.toFixed(3)} ms`;

const dataDir = mkdtempSync(join(tmpdir(), 'swap-bench-'));
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
setAddressPrefix(config.addressPrefix);
const ctx = {
  config,
  clock: systemClock,
  log: pino({ level: 'silent' }) as unknown as FastifyBaseLogger,
  onClose: [],
} as unknown as AppContext;
const svc = new SwapService(ctx, emptyRegistry());

const BASELINE_BUDGET_MS = Number(process.env.SWAP_BENCH_BUDGET_MS ?? 25_000);
/** CPU microseconds (user + system, this process) since `c`. */
const cpuSince = (c: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(c);
  return d.user + d.system;
};

async function scenario(name: string, hubs: number): Promise<void> {
  const r = rng(42);
  const t0 = performance.now();
  const pools = randomPools(r, POOLS, DENOMS, { hubs }).map((p) => parsePool(p)!);
  svc.state = buildPoolState(pools, { defaultFee: 10n ** 15n, pairs: new Map() }, 'import', Date.now());
  const loadMs = performance.now() - t0;
  const denoms = [...svc.state.byDenom.keys()];
  const biggest = Math.max(...denoms.map((d) => svc.state.byDenom.get(d)!.length));

  // quote requests: random ordered pairs, amounts 0.01%–1% of the deepest pool side of the input denom
  const requests = Array.from({ length: QUOTES }, () => {
    const a = denoms[randInt(r, 0, denoms.length - 1)];
    let b = denoms[randInt(r, 0, denoms.length - 2)];
    if (b === a) b = denoms[denoms.length - 1];
    const side = svc.state.byDenom.get(a)![0].reserves.get(a)!;
    const amount = (side * BigInt(randInt(r, 1, 100))) / 10_000n + 1n;
    return {
      tokenIn: `${amount}${a}`,
      tokenOutDenom: b,
      chainIdsToAddresses: { 'platform-1': sender },
      slippageTolerancePercent: '1',
    };
  });

  // warm-up (JIT) on other pairs, so the measured run starts with a cold route cache
  for (let i = 0; i < 300; i++) {
    const a = denoms[(i * 13 + 5) % denoms.length];
    const b = denoms[(i * 7 + 3) % denoms.length];
    if (a === b) continue;
    try {
      await estimateSwap(svc, validateEstimate({ ...requests[0], tokenIn: `1000000${a}`, tokenOutDenom: b }));
    } catch {
      // no route: fine for warm-up
    }
  }
  svc.routes.hits = svc.routes.misses = 0;

  const times: number[] = [];
  let ok = 0;
  const errors = new Map<string, number>();
  const cpuTimes: number[] = [];
  for (const body of requests) {
    const c0 = process.cpuUsage();
    const start = performance.now();
    try {
      await estimateSwap(svc, validateEstimate(body));
      ok++;
    } catch (err) {
      const m = (err as Error).message.split(':')[0];
      errors.set(m, (errors.get(m) ?? 0) + 1);
    }
    times.push(performance.now() - start);
    const c1 = process.cpuUsage(c0);
    cpuTimes.push((c1.user + c1.system) / 1000);
  }
  cpuTimes.sort((x, y) => x - y);
  // Load-robust tail: each request twice more, keeping its fastest run. On a shared machine most
  // of a slow run is time spent descheduled; the fastest of three keeps the request's own cost
  // (GC pauses included when they repeat), though it drops one-off pauses.
  const fastest = times.slice();
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < requests.length; i++) {
      const start = performance.now();
      try {
        await estimateSwap(svc, validateEstimate(requests[i]));
      } catch {
        // counted above
      }
      fastest[i] = Math.min(fastest[i], performance.now() - start);
    }
  }
  fastest.sort((x, y) => x - y);
  times.sort((x, y) => x - y);
  const p50 = pct(times, 50);
  const p99 = pct(times, 99);

  // exhaustive baseline on the first requests (same inputs, same process), within a time budget:
  // the search the estimate uses (ranked), the former SQS candidate search alone, and every route
  const fastT: number[] = [];
  const sqsT: number[] = [];
  const bruteT: number[] = [];
  const cpu = { fast: 0, sqs: 0, brute: 0 };
  let compared = 0;
  let matched = 0;
  let within = 0;
  let sqsWithin = 0;
  let worst = 1;
  let sqsWorst = 1;
  const shortfalls: number[] = [];
  const budgetEnd = performance.now() + BASELINE_BUDGET_MS;
  const shortOf = (x: bigint, best: bigint) => 1 - Number((x * 1_000_000_000n) / best) / 1e9;
  for (const body of requests.slice(0, BASELINE)) {
    if (performance.now() > budgetEnd) break;
    const v = validateEstimate(body);
    const a = v.tokenIn.denom;
    let c = process.cpuUsage();
    let start = performance.now();
    const fast = searchBest(svc.state, a, v.tokenOutDenom, v.tokenIn.amount);
    fastT.push(performance.now() - start);
    cpu.fast += cpuSince(c);
    c = process.cpuUsage();
    start = performance.now();
    const sqs = bestQuote(svc.state, findCandidateRoutes(svc.state, a, v.tokenOutDenom), a, v.tokenIn.amount);
    sqsT.push(performance.now() - start);
    cpu.sqs += cpuSince(c);
    c = process.cpuUsage();
    start = performance.now();
    const brute = bestQuote(svc.state, allRoutes(svc.state, a, v.tokenOutDenom, 3), a, v.tokenIn.amount);
    bruteT.push(performance.now() - start);
    cpu.brute += cpuSince(c);
    if (!brute.ok) continue;
    compared++;
    const f = fast.ok ? fast.quote.amountOut : 0n;
    const q = sqs.ok ? sqs.quote.amountOut : 0n;
    if (shortOf(q, brute.quote.amountOut) <= 0.001) sqsWithin++;
    sqsWorst = Math.min(sqsWorst, 1 - Math.max(0, shortOf(q, brute.quote.amountOut)));
    if (f >= brute.quote.amountOut) matched++;
    else {
      const short = shortOf(f, brute.quote.amountOut);
      shortfalls.push(short);
      worst = Math.min(worst, 1 - short);
    }
    if (shortOf(f, brute.quote.amountOut) <= 0.001) within++;
  }
  record(`candidate search shortfall, worst, ${hubs ? 'hub-and-spoke' : 'uniform'}`, 1 - worst, {
    better: 'lower',
    goal: 0.001,
  });
  record(
    `cases within 0.1% of the exhaustive optimum, ${hubs ? 'hub-and-spoke' : 'uniform'}`,
    within / Math.max(1, compared),
    {
      better: 'higher',
      goal: 1,
    },
  );
  record(
    `CPU per quote, exhaustive / ranked, ${hubs ? 'hub-and-spoke' : 'uniform'}`,
    cpu.brute / Math.max(1, cpu.fast),
  );
  fastT.sort((x, y) => x - y);
  bruteT.sort((x, y) => x - y);
  shortfalls.sort((x, y) => x - y);

  console.log(
    `\n[${name}] ${POOLS} pools over ${denoms.length} denoms (deepest denom in ${biggest} pools; built in ${loadMs.toFixed(0)} ms), ${QUOTES} random quotes`,
  );
  console.log(
    `  estimate (validate + candidate routes + exact quotes + messages): p50 ${ms(p50)}  p99 ${ms(p99)}  max ${ms(times[times.length - 1])}`,
  );
  console.log(
    `    fastest of 3 runs per request (load-robust): p50 ${ms(pct(fastest, 50))}  p99 ${ms(pct(fastest, 99))}  max ${ms(fastest[fastest.length - 1])}`,
  );
  console.log(
    `    CPU time per estimate (process, GC threads included; load average ${loadavg()[0].toFixed(1)}): p50 ${ms(pct(cpuTimes, 50))}  p99 ${ms(pct(cpuTimes, 99))}`,
  );
  const tag = hubs ? 'hub-and-spoke' : 'uniform';
  record(`estimate p99, ${tag}`, p99, { better: 'lower', unit: 'ms', goal: tag === 'hub-and-spoke' ? 2 : undefined });
  record(`estimate p99, fastest of 3 runs, ${tag}`, pct(fastest, 99), { better: 'lower', unit: 'ms' });
  const p99Goal = hubs ? 2 : 10;
  console.log(
    `    goal p50 < 1 ms: ${p50 < 1 ? 'met' : 'MISSED'}; goal p99 < ${p99Goal} ms: ${p99 < p99Goal ? 'met' : 'MISSED'}`,
  );
  console.log(
    `    ${ok} quoted, ${[...errors].map(([m, n]) => `${n} "${m}"`).join(', ') || 'no errors'}; route cache ${svc.routes.hits} hits / ${svc.routes.misses} misses`,
  );
  const n = Math.max(1, fastT.length);
  const us = (x: number) => `${(x / n).toFixed(0)} µs`;
  console.log(
    `  baseline on ${fastT.length} of the same quotes (route search + quotes, no cache on any side; load average ${loadavg()[0].toFixed(1)}):`,
  );
  console.log(
    `    ranked search (≤3 hops ranked in float, exact on the best)  p50 ${ms(pct(fastT, 50))}  p99 ${ms(pct(fastT, 99))}  CPU ${us(cpu.fast)}/quote`,
  );
  sqsT.sort((x, y) => x - y);
  console.log(
    `    SQS candidates (≤4 hops, ≤20 routes)  p50 ${ms(pct(sqsT, 50))}  p99 ${ms(pct(sqsT, 99))}  CPU ${us(cpu.sqs)}/quote`,
  );
  console.log(
    `    exhaustive search (all routes ≤3 hops)  p50 ${ms(pct(bruteT, 50))}  p99 ${ms(pct(bruteT, 99))}  CPU ${us(cpu.brute)}/quote`,
  );
  console.log(
    `    ratio exhaustive / ranked: p50 ×${(pct(bruteT, 50) / pct(fastT, 50)).toFixed(1)}  p99 ×${(pct(bruteT, 99) / pct(fastT, 99)).toFixed(1)}  CPU ×${(cpu.brute / Math.max(1, cpu.fast)).toFixed(1)};  SQS / ranked CPU ×${(cpu.sqs / Math.max(1, cpu.fast)).toFixed(2)}`,
  );
  console.log(
    `    best output: ranked search ≥ exhaustive in ${matched}/${compared}, within 0.1% in ${within}/${compared}` +
      (shortfalls.length
        ? `; otherwise median shortfall ${(100 * pct(shortfalls, 50)).toFixed(4)}%, worst ${(100 * (1 - worst)).toFixed(4)}%`
        : ''),
  );
  console.log(
    `    SQS candidates alone (before): within 0.1% in ${sqsWithin}/${compared}, worst shortfall ${(100 * (1 - sqsWorst)).toFixed(3)}%`,
  );
}

const sender = toPlatformAddress(new Uint8Array(20).fill(7));
await scenario('hub-and-spoke market: 75% of pools pair with one of 10 hub denoms', 10);
await scenario('uniform random pairs', 0);
rmSync(dataDir, { recursive: true, force: true });
