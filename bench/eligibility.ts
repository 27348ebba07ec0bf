// Eligibility (POST /api/v0/eligibility): 10,000 searchable claims of mixed plugin types (30 %
// must-own-badges over 500 collections, 20 % whitelists backed by 200 stores, public and private
// lists, passwords, codes, time windows, halted, username-set, url-clicker, plain), and addresses
// that each hold assets in 50 collections and sit in 20 stores. Per address, through HTTP (inject):
//   - the answer over all 10,000 claims: the list of eligible and after-input claims, walked page
//     by page (pageSize 1000), the first time for an address (cold: every claim the address
//     touches is evaluated) and again (warm: verdicts kept until what they read changes);
//   - one page of 25 answers, no filter;
// against the baseline in the same run: simulate (the route's own function, in-process) called
// claim by claim over the same claims. Prints p50, p99 and the ratios. The first answer builds the
// index; its time is printed apart.
//   node bench/eligibility.ts   (BENCH_DB=sqlite|postgres for one; BENCH_CLAIMS to size)
import { randomBytes } from 'node:crypto';
import { startApp, type TestApp } from '../test/helpers/app.ts';
import { addressOf, bal, balanceStore, collectionDoc } from '../test/helpers/fake-chain.ts';
import { importSnapshot, parseSnapshot } from '../src/chain/import.ts';
import { attemptClaim } from '../src/claims/attempts.ts';
import { createClaims, type ClaimInput } from '../src/claims/documents.ts';
import { toPlatformAddress } from '../src/shared/addresses.ts';
import type { Session } from '../src/shared/session.ts';
import { createStore } from '../src/stores/domain.ts';
import { addMembers, adjustSize } from '../src/stores/storage.ts';
import { benchDatabases, fmt, percentile } from './lib/harness.ts';

const CLAIMS = Number(process.env.BENCH_CLAIMS ?? 10_000);
const COLLECTIONS = 500;
const STORES = 200;
const ADDRESSES = 5;
const PAGE_RUNS = 200;
const WALKS = 4 * ADDRESSES;
const BASELINE_PAGE_RUNS = 40;
const BASELINE_WALKS = 2;

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

async function setup(t: TestApp): Promise<string[]> {
  const now = t.ctx.clock.now();
  const holders = Array.from({ length: ADDRESSES }, (_, i) => addressOf(1000 + i));
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
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const line = (label: string, xs: number[]) => {
  const s = sorted(xs);
  return `${label}: p50 ${fmt(percentile(s, 50), 2)} ms, p99 ${fmt(percentile(s, 99), 2)} ms (n=${xs.length})`;
};

for (const d of await benchDatabases()) {
  const database = d.make();
  const t = await startApp({ database, env: { RUN_WORKER: 'false', GUESS_LIMIT_PER_MINUTE: '0' } });
  try {
    let t0 = performance.now();
    const holders = await setup(t);
    console.log(
      `[${d.name}] setup: ${CLAIMS} claims, ${COLLECTIONS} collections, ${STORES} stores in ${fmt(ms(t0) / 1000, 1)} s`,
    );
    t0 = performance.now();
    await eligibility(t, { address: holders[0] });
    console.log(`[${d.name}] first answer (builds the index): ${fmt(ms(t0), 0)} ms`);

    // one page of 25 (the first; its claims are kept after the first request per address)
    const page: number[] = [];
    const pageIds = new Map<string, string[]>();
    for (let i = 0; i < PAGE_RUNS; i++) {
      const address = holders[i % ADDRESSES];
      t0 = performance.now();
      const r = await eligibility(t, { address });
      page.push(ms(t0));
      pageIds.set(
        address,
        r.docs.map((x) => x.claimId),
      );
    }
    const basePage: number[] = [];
    for (let i = 0; i < BASELINE_PAGE_RUNS; i++) {
      const address = holders[i % ADDRESSES];
      t0 = performance.now();
      await simulateAll(t, pageIds.get(address)!, address);
      basePage.push(ms(t0));
    }

    // the whole list of eligible and after-input claims
    const walk: number[] = [];
    const cold: number[] = [];
    const walkRequests: number[] = [];
    let found = 0;
    for (let i = 0; i < WALKS; i++) {
      const address = holders[i % ADDRESSES];
      const w0 = performance.now();
      let bookmark = '';
      found = 0;
      for (;;) {
        t0 = performance.now();
        const r = await eligibility(t, { address, states: ['eligible', 'afterInput'], bookmark, pageSize: 1000 });
        walkRequests.push(ms(t0));
        found += r.docs.length;
        if (!r.hasMore) break;
        bookmark = r.bookmark;
      }
      (i < ADDRESSES ? cold : walk).push(ms(w0));
    }
    const all = Array.from({ length: CLAIMS }, (_, j) => `b${String(j).padStart(6, '0')}`);
    const baseWalk: number[] = [];
    for (let i = 0; i < BASELINE_WALKS; i++) {
      t0 = performance.now();
      await simulateAll(t, all, holders[i % ADDRESSES]);
      baseWalk.push(ms(t0));
    }

    const p50 = (xs: number[]) => percentile(sorted(xs), 50);
    console.log(`[${d.name}] ${line('one page (25 answers)', page)}`);
    console.log(`[${d.name}]   ${line('baseline: simulate those 25 claims one by one', basePage)}`);
    console.log(`[${d.name}]   ratio (p50): ${fmt(p50(basePage) / p50(page), 1)}x`);
    console.log(`[${d.name}] answer over all ${CLAIMS} claims (${found} eligible or after input):`);
    console.log(`[${d.name}]   ${line('warm (verdicts kept)', walk)}`);
    console.log(`[${d.name}]   ${line('cold (first time for the address)', cold)}`);
    console.log(`[${d.name}]   ${line('per request of those walks (pageSize 1000)', walkRequests)}`);
    console.log(`[${d.name}]   ${line(`baseline: simulate all ${CLAIMS} claims one by one`, baseWalk)}`);
    console.log(
      `[${d.name}]   ratio (p50): warm ${fmt(p50(baseWalk) / p50(walk), 1)}x, cold ${fmt(p50(baseWalk) / p50(cold), 1)}x`,
    );
  } finally {
    await t.close();
  }
}
console.log('(figures as measured on a shared, loaded machine)');
