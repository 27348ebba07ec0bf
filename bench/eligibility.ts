// Eligibility (POST /api/v0/eligibility): 10,000 searchable claims of mixed plugin types (30 %
// must-own-badges over 500 collections, 20 % whitelists backed by 200 stores, public and private
// lists, passwords, codes, time windows, halted, username-set, url-clicker, plain), and addresses
// that each hold assets in 50 collections and sit in 20 stores. Per address, through HTTP (inject):
//   - one page: the first 25 answers, no filter (the request the portal's "What can I claim?" page
//     makes); the goals' p50 < 25 ms and p99 < 100 ms are of this request;
//   - the whole answer: every eligible and after-input claim out of all 10,000, walked page by page
//     (pageSize 1000), the first time for an address (cold: every claim the address touches is
//     evaluated) and again (warm: verdicts kept until what they read changes); the goal of at least
//     50 times the baseline is of this walk, cold and warm;
// against the baseline in the same round: simulate (the route's own function, in-process) called
// claim by claim over the same claims. Rounds (BENCH_ROUNDS, default 3) each use fresh addresses;
// the figures printed are the medians of the rounds. Before the rounds, the index is built and the
// claims' address-independent verdicts computed by walking the list for an address that holds
// nothing (printed apart: a running service has done this once, whoever asked first). Queries
// counted through Kysely for one cold and one warm walk.
//   node bench/eligibility.ts   (BENCH_DB=sqlite|postgres for one; BENCH_CLAIMS to size)
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { startApp, type TestApp } from '../test/helpers/app.ts';
import { addressOf, bal, balanceStore, collectionDoc } from '../test/helpers/fake-chain.ts';
import { importSnapshot, parseSnapshot } from '../src/chain/import.ts';
import { attemptClaim } from '../src/claims/attempts.ts';
import { createClaims, type ClaimInput } from '../src/claims/documents.ts';
import { toPlatformAddress } from '../src/shared/addresses.ts';
import type { Session } from '../src/shared/session.ts';
import { createStore } from '../src/stores/domain.ts';
import { addMembers, adjustSize } from '../src/stores/storage.ts';
import { benchDatabases, fmt, median, percentile } from './lib/harness.ts';
import { record } from './lib/record.ts';

const CLAIMS = Number(process.env.BENCH_CLAIMS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const COLLECTIONS = 500;
const STORES = 200;
/** Fresh addresses per round (each: assets in 50 collections, a member of 20 stores). */
const ADDRESSES = 5;
const PAGE_RUNS = 100;
const WARM_WALKS = 3 * ADDRESSES;
const BASELINE_PAGE_RUNS = 20;
const GOAL = { p50: 25, p99: 100, ratio: 50 };

const creator = toPlatformAddress(randomBytes(20));
const session: Session = {
  platformAddress: creator,
  address: '0x',
  chain: 'ETH',
  scopes: ['manageDynamicStores', 'manageClaims'],
  clientId: 'bench',
  authorizationId: 'bench',
};
const fresh = (n: number) => Array.from({ length: n }, () => toPlatformAddress(randomBytes(20)));
const range = (s: number, e = s) => ({ start: String(s), end: String(e) });

/** Sets up the claims; returns the holders: ADDRESSES per round, and one more (counted queries). */
async function setup(t: TestApp): Promise<string[]> {
  const now = t.ctx.clock.now();
  const holders = Array.from({ length: ADDRESSES * ROUNDS + 1 }, (_, i) => addressOf(1000 + i));
  const others = fresh(200);
  const collections = Array.from({ length: COLLECTIONS }, (_, i) => String(i + 1));
  // each holder: 5 of token 1 in collections 1-50; the others scattered over all collections
  await importSnapshot(
    t.ctx.db,
    parseSnapshot({
      height: '1',
      blockTime: new Date(now).toISOString(),
      collections: collections.map((c) => collectionDoc(c, creator)),
      balances: [
        ...holders.flatMap((address) =>
          collections.slice(0, 50).map((c) => ({ collectionId: c, address, balance: balanceStore([bal(5, 1)]) })),
        ),
        ...others.map((address, i) => ({
          collectionId: collections[i % COLLECTIONS],
          address,
          balance: balanceStore([bal(1, 1)]),
        })),
      ],
    }),
    now,
  );
  const stores: Array<{ dynamicDataId: string; dataSecret: string }> = [];
  for (let i = 0; i < STORES; i++) {
    const s = await createStore(t.ctx, session, { handlerId: 'addresses', label: `s${i}` });
    const members = [...fresh(100), ...(i < 20 ? holders : [])];
    await t.ctx.db.transaction().execute(async (tx) => {
      await adjustSize(tx, s.dynamicDataId, await addMembers(tx, s.dynamicDataId, members));
    });
    stores.push({ dynamicDataId: s.dynamicDataId, dataSecret: s.dataSecret! });
  }
  const plugins = (i: number): unknown[] => {
    const k = i % 20;
    const base = { pluginId: 'numUses', instanceId: 'n', publicParams: { maxUses: 1000 }, privateParams: {} };
    const one = (pluginId: string, publicParams: object = {}, privateParams: object = {}) => [
      base,
      { pluginId, instanceId: 'p', publicParams, privateParams },
    ];
    if (k < 6) {
      const req = {
        assets: [
          {
            chain: 'BitBadges',
            collectionId: collections[i % COLLECTIONS],
            assetIds: [range(1)],
            ownershipTimes: [],
            mustOwnAmounts: range(1 + (i % 7), 100),
          },
        ],
      };
      return one('must-own-badges', { ownershipRequirements: req });
    }
    if (k < 10) {
      const s = stores[i % STORES];
      return one('whitelist', {}, { useDynamicStore: true, dynamicDataId: s.dynamicDataId, dataSecret: s.dataSecret });
    }
    if (k === 10) return one('whitelist', { list: { addresses: fresh(3) } });
    if (k === 11) return one('whitelist', { hasPrivateList: true }, { list: { addresses: fresh(3) } });
    if (k === 12) return one('password', {}, { password: `pw${i}` });
    if (k === 13) return one('codes', { numCodes: 5 });
    if (k === 16) return one('transferTimes', { transferTimes: [range(now - 3_600_000, now + 86_400_000)] });
    if (k === 17) return one('halt');
    if (k === 18) return one('username-set');
    if (k === 19) return one('url-clicker', { url: 'https://example.com' });
    return [base];
  };
  for (let i = 0; i < CLAIMS; i += 100) {
    const batch: ClaimInput[] = [];
    for (let j = i; j < Math.min(CLAIMS, i + 100); j++)
      batch.push({
        claimId: `b${String(j).padStart(6, '0')}`,
        plugins: plugins(j) as ClaimInput['plugins'],
        showInSearchResults: true,
        metadata: { name: `claim ${j}` },
      });
    await createClaims(t.ctx, { platformAddress: creator }, batch);
  }
  return holders;
}

async function eligibility(t: TestApp, body: Record<string, unknown>) {
  const res = await t.request('POST', '/api/v0/eligibility', { body });
  if (res.statusCode !== 200) throw new Error(res.body);
  return res.json() as { docs: Array<{ claimId: string; state: string }>; bookmark: string; hasMore: boolean };
}

async function simulateAll(t: TestApp, claimIds: string[], address: string): Promise<number> {
  let ok = 0;
  for (const id of claimIds) {
    try {
      await attemptClaim(t.ctx, id, address, { _expectedVersion: -1 }, null, false);
      ok++;
    } catch {
      // a failing simulation is an answer too
    }
  }
  return ok;
}

const ms = (t0: number) => performance.now() - t0;
/** CPU milliseconds (user + system) this process has used: on SQLite all the work is in-process. */
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const p = (xs: number[], q: number) => percentile(sorted(xs), q);
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

/** The whole answer for one address: every eligible or after-input claim, page by page. */
async function walk(t: TestApp, address: string, requests: number[]): Promise<{ found: number; requests: number }> {
  let bookmark = '';
  let found = 0;
  let n = 0;
  for (;;) {
    const t0 = performance.now();
    const r = await eligibility(t, { address, states: ['eligible', 'afterInput'], bookmark, pageSize: 1000 });
    requests.push(ms(t0));
    n++;
    found += r.docs.length;
    if (!r.hasMore) return { found, requests: n };
    bookmark = r.bookmark;
  }
}

/** Counts the queries the app sends through Kysely while `fn` runs. */
async function countQueries(t: TestApp, fn: () => Promise<unknown>): Promise<number> {
  const ctx = t.ctx as { db: TestApp['ctx']['db'] };
  const db = ctx.db;
  let n = 0;
  ctx.db = db.withPlugin({
    transformQuery: (args) => {
      n++;
      return args.node;
    },
    transformResult: async (args) => args.result,
  });
  try {
    await fn();
  } finally {
    ctx.db = db;
  }
  return n;
}

interface Round {
  page: number[];
  firstPage: number[];
  basePage: number[];
  cold: number[];
  warm: number[];
  walkRequests: number[];
  baseWalk: number;
  coldCpu: number[];
  warmCpu: number[];
  baseWalkCpu: number;
}

const allIds = () => Array.from({ length: CLAIMS }, (_, j) => `b${String(j).padStart(6, '0')}`);

async function round(t: TestApp, addresses: string[]): Promise<Round> {
  const r: Round = {
    page: [],
    firstPage: [],
    basePage: [],
    cold: [],
    warm: [],
    walkRequests: [],
    baseWalk: 0,
    coldCpu: [],
    warmCpu: [],
    baseWalkCpu: 0,
  };
  let c0: number;
  const pageIds = new Map<string, string[]>();
  let t0: number;
  for (const address of addresses) {
    // the first request for the address: one page
    t0 = performance.now();
    const first = await eligibility(t, { address });
    r.firstPage.push(ms(t0));
    pageIds.set(
      address,
      first.docs.map((x) => x.claimId),
    );
    // then the whole answer, cold: the claims it touches are evaluated for it
    t0 = performance.now();
    c0 = cpuNow();
    await walk(t, address, r.walkRequests);
    r.cold.push(ms(t0));
    r.coldCpu.push(cpuNow() - c0);
  }
  for (let i = 0; i < PAGE_RUNS; i++) {
    t0 = performance.now();
    await eligibility(t, { address: addresses[i % addresses.length] });
    r.page.push(ms(t0));
  }
  for (let i = 0; i < WARM_WALKS; i++) {
    t0 = performance.now();
    c0 = cpuNow();
    await walk(t, addresses[i % addresses.length], r.walkRequests);
    r.warm.push(ms(t0));
    r.warmCpu.push(cpuNow() - c0);
  }
  for (let i = 0; i < BASELINE_PAGE_RUNS; i++) {
    const address = addresses[i % addresses.length];
    t0 = performance.now();
    await simulateAll(t, pageIds.get(address)!, address);
    r.basePage.push(ms(t0));
  }
  t0 = performance.now();
  c0 = cpuNow();
  await simulateAll(t, allIds(), addresses[0]);
  r.baseWalk = ms(t0);
  r.baseWalkCpu = cpuNow() - c0;
  return r;
}

const verdict = (ok: boolean) => (ok ? 'MET' : 'NOT MET');

for (const d of await benchDatabases()) {
  const database = d.make();
  const t = await startApp({ database, env: { RUN_WORKER: 'false', GUESS_LIMIT_PER_MINUTE: '0' } });
  const tag = `[${d.name}]`;
  try {
    let t0 = performance.now();
    const holders = await setup(t);
    console.log(
      `${tag} setup: ${CLAIMS} claims, ${COLLECTIONS} collections, ${STORES} stores, ${holders.length} addresses in ${fmt(ms(t0) / 1000, 1)} s`,
    );
    const nobody = toPlatformAddress(randomBytes(20));
    t0 = performance.now();
    await eligibility(t, { address: nobody });
    console.log(`${tag} first answer (builds the index): ${fmt(ms(t0), 0)} ms`);
    t0 = performance.now();
    await walk(t, nobody, []);
    console.log(`${tag} first whole answer (computes the address-independent verdicts): ${fmt(ms(t0), 0)} ms`);

    // query counts: one cold and one warm whole answer of an address the rounds do not use
    const counted = holders.pop()!;
    const coldQueries = await countQueries(t, () => walk(t, counted, []));
    const warmQueries = await countQueries(t, () => walk(t, counted, []));
    const walked = await walk(t, counted, []);
    console.log(
      `${tag} queries per whole answer (through Kysely): cold ${coldQueries}, warm ${warmQueries} (${walked.requests} requests, ${walked.found} claims listed)`,
    );

    const rounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const r = await round(t, holders.slice(i * ADDRESSES, (i + 1) * ADDRESSES));
      rounds.push(r);
      console.log(
        `${tag} round ${i + 1}/${ROUNDS} (load ${load()}): page p50 ${fmt(p(r.page, 50), 2)} / p99 ${fmt(p(r.page, 99), 2)} ms; ` +
          `whole answer warm p50 ${fmt(p(r.warm, 50), 0)} ms, cold p50 ${fmt(p(r.cold, 50), 0)} ms; ` +
          `baseline ${fmt(r.baseWalk, 0)} ms: warm ${fmt(r.baseWalk / p(r.warm, 50), 1)}x, cold ${fmt(r.baseWalk / p(r.cold, 50), 1)}x ` +
          `(CPU: warm ${fmt(r.baseWalkCpu / p(r.warmCpu, 50), 1)}x, cold ${fmt(r.baseWalkCpu / p(r.coldCpu, 50), 1)}x)`,
      );
    }
    const med = (f: (r: Round) => number) => median(rounds.map(f));
    const page50 = med((r) => p(r.page, 50));
    const page99 = med((r) => p(r.page, 99));
    const first50 = med((r) => p(r.firstPage, 50));
    const first99 = med((r) => p(r.firstPage, 99));
    const basePage50 = med((r) => p(r.basePage, 50));
    const warm50 = med((r) => p(r.warm, 50));
    const warm99 = med((r) => p(r.warm, 99));
    const cold50 = med((r) => p(r.cold, 50));
    const cold99 = med((r) => p(r.cold, 99));
    const req50 = med((r) => p(r.walkRequests, 50));
    const req99 = med((r) => p(r.walkRequests, 99));
    const baseWalk = med((r) => r.baseWalk);
    const warmRatio = med((r) => r.baseWalk / p(r.warm, 50));
    const coldRatio = med((r) => r.baseWalk / p(r.cold, 50));
    const pageRatio = med((r) => p(r.basePage, 50) / p(r.page, 50));
    const warmCpuRatio = med((r) => r.baseWalkCpu / p(r.warmCpu, 50));
    const coldCpuRatio = med((r) => r.baseWalkCpu / p(r.coldCpu, 50));
    const minRatio = Math.min(...rounds.flatMap((r) => [r.baseWalk / p(r.warm, 50), r.baseWalk / p(r.cold, 50)]));

    console.log(`${tag} ---- medians of ${ROUNDS} rounds (load average now ${load()}) ----`);
    console.log(
      `${tag} one page (25 answers, no filter): p50 ${fmt(page50, 2)} ms, p99 ${fmt(page99, 2)} ms (n=${PAGE_RUNS} per round)`,
    );
    console.log(
      `${tag}   first page for a new address: p50 ${fmt(first50, 2)} ms, p99 ${fmt(first99, 2)} ms (n=${ADDRESSES} per round)`,
    );
    console.log(
      `${tag}   baseline, simulate those 25 claims one by one: p50 ${fmt(basePage50, 2)} ms; ratio ${fmt(pageRatio, 1)}x`,
    );
    console.log(`${tag} whole answer over ${CLAIMS} claims (${walked.found} eligible or after input):`);
    console.log(`${tag}   warm: p50 ${fmt(warm50, 0)} ms, p99 ${fmt(warm99, 0)} ms (n=${WARM_WALKS} per round)`);
    console.log(`${tag}   cold: p50 ${fmt(cold50, 0)} ms, p99 ${fmt(cold99, 0)} ms (n=${ADDRESSES} per round)`);
    console.log(
      `${tag}   one request of those walks (pageSize 1000): p50 ${fmt(req50, 1)} ms, p99 ${fmt(req99, 1)} ms`,
    );
    console.log(`${tag}   baseline, simulate all ${CLAIMS} claims one by one: ${fmt(baseWalk, 0)} ms`);
    console.log(
      `${tag}   ratio to the baseline (p50): warm ${fmt(warmRatio, 1)}x, cold ${fmt(coldRatio, 1)}x (lowest of any round ${fmt(minRatio, 1)}x)`,
    );
    console.log(
      `${tag}   CPU time of this process (p50): warm ${fmt(
        med((r) => p(r.warmCpu, 50)),
        0,
      )} ms, cold ${fmt(
        med((r) => p(r.coldCpu, 50)),
        0,
      )} ms, baseline ${fmt(
        med((r) => r.baseWalkCpu),
        0,
      )} ms: ` +
        `ratio warm ${fmt(warmCpuRatio, 1)}x, cold ${fmt(coldCpuRatio, 1)}x (less sensitive to the machine's load than the times; on PostgreSQL the server's work is not in it)`,
    );
    console.log(`${tag} goals (on the times):`);
    console.log(
      `${tag}   one page p50 < ${GOAL.p50} ms: ${verdict(page50 < GOAL.p50)} (${fmt(page50, 2)} ms); first page for a new address: ${verdict(first50 < GOAL.p50)} (${fmt(first50, 2)} ms)`,
    );
    console.log(
      `${tag}   one page p99 < ${GOAL.p99} ms: ${verdict(page99 < GOAL.p99)} (${fmt(page99, 2)} ms); first page for a new address: ${verdict(first99 < GOAL.p99)} (${fmt(first99, 2)} ms)`,
    );
    console.log(
      `${tag}   whole answer >= ${GOAL.ratio}x the baseline, warm: ${verdict(warmRatio >= GOAL.ratio)} (${fmt(warmRatio, 1)}x); cold: ${verdict(coldRatio >= GOAL.ratio)} (${fmt(coldRatio, 1)}x); in every round: ${verdict(minRatio >= GOAL.ratio)} (lowest ${fmt(minRatio, 1)}x)`,
    );
    record(`one page p50 (${d.name})`, page50, { better: 'lower', unit: 'ms', goal: GOAL.p50 });
    record(`one page p99 (${d.name})`, page99, { better: 'lower', unit: 'ms', goal: GOAL.p99 });
    record(`whole answer warm / simulate (${d.name})`, warmRatio, { goal: GOAL.ratio });
    record(`whole answer cold / simulate (${d.name})`, coldRatio, { goal: GOAL.ratio });
    record(`whole answer warm / simulate, CPU (${d.name})`, warmCpuRatio, { goal: GOAL.ratio });
    record(`whole answer cold / simulate, CPU (${d.name})`, coldCpuRatio, { goal: GOAL.ratio });
    record(`queries per cold whole answer (${d.name})`, coldQueries, { better: 'lower' });
    record(`queries per warm whole answer (${d.name})`, warmQueries, { better: 'lower' });
  } finally {
    await t.close();
  }
}
console.log('(figures as measured on a shared machine; the load average is printed per round)');
