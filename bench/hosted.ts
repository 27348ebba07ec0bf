// must-own-badges: one evaluation of 10 assets in $or groups (10 collections), with the read model
// warm, against the same check made by one chain REST read per asset (the fake chain server on
// loopback, keep-alive) in the same run. Prints p50/p99 per evaluation, the process CPU per
// evaluation of each side (the fake chain server runs in this process: its CPU counts for the
// baseline) and the ratios.
//   node bench/hosted.ts [--n 2000]
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { createContext } from '../src/context.ts';
import { ChainClient } from '../src/chain/client.ts';
import { importSnapshot, parseSnapshot } from '../src/chain/import.ts';
import { pluginEnv } from '../src/claims/plugin-env.ts';
import { mustOwnBadges } from '../src/plugins/mustOwnBadges.ts';
import { evaluateStandalone } from '../src/plugins/standalone.ts';
import { checkRequirement, parseRequirement } from '../src/plugins/ownership.ts';
import { balancesFromJson } from '../src/shared/balances.ts';
import { createTestDatabase } from '../test/helpers/app.ts';
import { addressOf, bal, balanceStore, collectionDoc, startFakeChain } from '../test/helpers/fake-chain.ts';
import { percentile } from './lib/harness.ts';
import { record } from './lib/record.ts';

const { values } = parseArgs({ options: { n: { type: 'string', default: '2000' } } });
const N = Number(values.n);
const ASSETS = 10;
const holder = addressOf(1);
const now = Date.now();

// the holder owns token 1 of collection 10 only: an $or over 10 collections tries all ten, the last passes
const collections = Array.from({ length: ASSETS }, (_, i) => String(i + 1));
const asset = (collectionId: string) => ({
  chain: 'BitBadges',
  collectionId,
  assetIds: [{ start: '1', end: '1' }],
  ownershipTimes: [],
  mustOwnAmounts: { start: '1', end: '1' },
});
const requirement = { $or: collections.map((c) => ({ assets: [asset(c)] })) };

const chain = await startFakeChain();
for (const c of collections) {
  chain.setCollection(c, collectionDoc(c, holder));
  chain.setBalance(c, holder, balanceStore(c === '10' ? [bal(1, 1)] : [bal(1, 2)]));
}
chain.advanceTo(2);

const database = createTestDatabase('sqlite');
const ctx = await createContext(loadConfig({ ...database.env, LOG_LEVEL: 'silent', CHAIN_REST_URL: chain.url }), {
  backgroundCheckpoints: false,
});
await importSnapshot(
  ctx.db,
  parseSnapshot({
    height: '2',
    blockTime: new Date(now).toISOString(),
    collections: collections.map((c) => collectionDoc(c, holder)),
    balances: collections.map((c) => ({
      collectionId: c,
      address: holder,
      balance: balanceStore(c === '10' ? [bal(1, 1)] : [bal(1, 2)]),
    })),
  }),
  now,
);

const publicParams = (
  await mustOwnBadges.validate(
    { ownershipRequirements: requirement },
    {},
    { path: 'p', claimId: 'bench', creator: holder, ...pluginEnv(ctx, ctx.clock.now()) },
  )
).publicParams;

/** Latencies of `n` evaluations (sorted) and the process CPU they took, per evaluation, in µs. */
async function time(fn: () => Promise<boolean>): Promise<{ ms: number[]; cpuUs: number }> {
  for (let i = 0; i < Math.min(200, N); i++) if (!(await fn())) throw new Error('the check must pass');
  const out: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const t0 = process.hrtime.bigint();
    const ok = await fn();
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (!ok) throw new Error('the check must pass');
  }
  const cpu = process.cpuUsage(cpu0);
  return { ms: out.sort((a, b) => a - b), cpuUs: (cpu.user + cpu.system) / N };
}

// ours: the plugin as the engine runs it (read model, warm)
const { ms: ours, cpuUs: oursCpu } = await time(
  async () =>
    (
      await evaluateStandalone(pluginEnv(ctx, ctx.clock.now()), mustOwnBadges, {
        publicParams,
        platformAddress: holder,
        instanceId: 'own',
      })
    ).success,
);
// baseline: the same math, each asset's balances read from the chain's REST API
const client = new ChainClient({ baseUrl: chain.url, timeoutMs: 5000 });
const parsed = parseRequirement(requirement, 'r');
const { ms: baseline, cpuUs: baselineCpu } = await time(
  async () =>
    (await checkRequirement(parsed, holder, now, async (c) =>
      balancesFromJson((await client.balance(c, holder)).balances),
    )) === null,
);

const fmt = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
console.log(`must-own-badges, ${ASSETS} assets in $or groups (all ${ASSETS} tried), ${N} evaluations each`);
console.log(
  `  read model (warm) : p50 ${fmt(percentile(ours, 50))}  p99 ${fmt(percentile(ours, 99))}  CPU ${oursCpu.toFixed(1)} µs/evaluation`,
);
console.log(
  `  chain REST / asset: p50 ${fmt(percentile(baseline, 50))}  p99 ${fmt(percentile(baseline, 99))}  CPU ${baselineCpu.toFixed(1)} µs/evaluation (the fake chain server's included: same process)  (${chain.requests.length} chain reads)`,
);
console.log(
  `  ratio (p50 baseline / p50 read model): ${(percentile(baseline, 50) / percentile(ours, 50)).toFixed(1)}x  (goal >= 20x, p50 < 1 ms); CPU ratio ${(baselineCpu / oursCpu).toFixed(1)}x; load average ${loadavg()[0].toFixed(2)}`,
);
record('must-own-badges, chain reads / read model, p50', percentile(baseline, 50) / percentile(ours, 50), { goal: 20 });
record('must-own-badges, read model p50', percentile(ours, 50), { better: 'lower', unit: 'ms' });
record('must-own-badges, read model CPU per evaluation', oursCpu, { better: 'lower', unit: 'µs' });

await client.close();
await ctx.close();
await chain.close();
await database.drop();
