// Issue 12 benchmark: the chain indexer and the owners view.
//  1. Indexing throughput over a synthetic chain served by the fake chain REST server on loopback:
//     blocks of 10 transfers (100 senders → 10,000 recipients, so each leg touches two balance
//     stores), indexed from genesis by the real indexer (reads pinned per block, one transaction
//     per block). Printed: blocks/s, transfers/s, the share of indexing time spent waiting on the
//     chain, and the baseline measured in the same run: the chain's own REST read time (the same
//     reads, same client and concurrency, with no database work).
//  2. Owners view p50/p99 on one collection with 1,000,000 owners (seeded straight into the read
//     model): successive pages by bookmark, oldestFirst pages, the address filter, and the same
//     page through POST /api/v0/collections (in-process inject).
// Goals: >= 500 transfers/s indexed on SQLite; p50 owners page < 5 ms.
// Default run: 1,000 blocks (10,000 transfers) and 100,000 owners. `--full`: 10,000 blocks
// (100,000 transfers) and 1,000,000 owners. BENCH_DB=sqlite|postgres picks one database.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { startApp, type TestApp } from '../test/helpers/app.ts';
import { addressOf, balanceStore, collectionDoc } from '../test/helpers/fake-chain.ts';
import { ChainClient } from '../src/chain/client.ts';
import { limiter, readBlock } from '../src/chain/read-block.ts';
import { createIndexer } from '../src/chain/loops.ts';
import { ownersView } from '../src/chain/views.ts';
import { toPlatformAddress } from '../src/shared/addresses.ts';
import { benchDatabases, fmt, percentile, startChild } from './lib/harness.ts';

const FULL = process.argv.includes('--full');
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? (FULL ? 10_000 : 1_000));
const PER_BLOCK = 10;
const OWNERS = Number(process.env.BENCH_OWNERS ?? (FULL ? 1_000_000 : 100_000));
const PAGES = 2_000;

const ms = (v: number) => `${v < 0.1 ? v.toFixed(3) : v.toFixed(2)} ms`;
const stats = (sorted: number[]) => `p50 ${ms(percentile(sorted, 50))}  p99 ${ms(percentile(sorted, 99))}`;

/** Baseline: every chain read the indexer makes, same client and concurrency, no database. */
async function chainReadTime(url: string, height: number): Promise<number> {
  const client = new ChainClient({ baseUrl: url, timeoutMs: 10_000 });
  const run = limiter(Number(process.env.BENCH_CONCURRENCY ?? 16));
  const t0 = performance.now();
  for (let from = 1; from <= height; from += 50) {
    const heights = Array.from({ length: Math.min(50, height - from + 1) }, (_, i) => from + i);
    await Promise.all(heights.map((h) => readBlock(client, h, async () => new Set(h === 1 ? [] : ['1']), run)));
  }
  const seconds = (performance.now() - t0) / 1000;
  await client.close();
  return seconds;
}

async function indexing(
  name: string,
  t: TestApp,
  height: number,
  transfers: number,
  baselineSeconds: number,
): Promise<void> {
  const indexer = createIndexer(t.ctx)!;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const blocks = await indexer.catchUp();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const s = indexer.stats;
  if (blocks !== height || s.transfers !== transfers)
    throw new Error(`indexed ${blocks} blocks / ${s.transfers} transfers, expected ${height} / ${transfers}`);
  const rate = transfers / seconds;
  console.log(
    `[${name}] indexed ${fmt(blocks)} blocks, ${fmt(transfers)} transfers in ${seconds.toFixed(2)} s: ${fmt(blocks / seconds)} blocks/s, ${fmt(rate)} transfers/s${name === 'sqlite' ? `   goal >= 500 transfers/s: ${rate >= 500 ? 'MET' : 'NOT MET'}` : ''}`,
  );
  console.log(
    `[${name}]   waiting on the chain: ${((s.waitMs / 1000 / seconds) * 100).toFixed(0)}% of the time; committing: ${((s.commitMs / 1000 / seconds) * 100).toFixed(0)}% (${ms(s.commitMs / blocks)} per block)`,
  );
  console.log(
    `[${name}]   indexer process CPU: ${cpuSeconds.toFixed(2)} s (${fmt(transfers / cpuSeconds)} transfers per CPU-second: the rate one idle core would sustain if the chain kept up)`,
  );
  console.log(
    `[${name}]   baseline, the chain's own REST read time for the same reads: ${baselineSeconds.toFixed(2)} s (${fmt(transfers / baselineSeconds)} transfers/s); indexing / reads = ${(seconds / baselineSeconds).toFixed(2)}x`,
  );
}

async function ownersPages(name: string, t: TestApp): Promise<void> {
  const db = t.ctx.db;
  const addresses = Array.from({ length: OWNERS }, () => toPlatformAddress(randomBytes(20)));
  const store = JSON.stringify(
    balanceStore([
      {
        amount: '1',
        tokenIds: [{ start: '1', end: '1' }],
        ownershipTimes: [{ start: '1', end: '18446744073709551615' }],
      },
    ]),
  );
  const history = JSON.stringify([{ txHash: '', block: '1', blockTimestamp: '0', timestamp: '0' }]);
  let t0 = performance.now();
  await db
    .insertInto('chain_collections')
    .values({
      collection_id: '2',
      doc_json: JSON.stringify(collectionDoc('2', addressOf(1))),
      manager: addressOf(1),
      created_by: addressOf(1),
      created_block: 1,
      created_time: 0,
      updated_block: 1,
      update_history: history,
    })
    .execute();
  const CHUNK = 20_000;
  for (let i = 0; i < addresses.length; i += CHUNK) {
    await db.transaction().execute(async (tx) => {
      for (let j = i; j < Math.min(i + CHUNK, addresses.length); j += 500) {
        await tx
          .insertInto('chain_balances')
          .values(
            addresses.slice(j, Math.min(j + 500, i + CHUNK)).map((address, k) => ({
              collection_id: '2',
              address,
              store_json: store,
              has_balance: 1,
              first_block: 1 + Math.floor((j + k) / 100),
              updated_block: 1,
              update_history: history,
            })),
          )
          .execute();
      }
    });
  }
  if (name === 'postgres') await sql`vacuum analyze chain_balances`.execute(db);
  else await sql`analyze`.execute(db);
  console.log(
    `[${name}] seeded ${fmt(OWNERS)} owners of collection 2 in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  const walk = async (oldestFirst: boolean) => {
    const times: number[] = [];
    let bookmark = '';
    for (let i = 0; i < PAGES; i++) {
      t0 = performance.now();
      const page = await ownersView(t.ctx, '2', { bookmark, oldestFirst });
      times.push(performance.now() - t0);
      if (page.docs.length !== 25) throw new Error(`page ${i} held ${page.docs.length} owners`);
      bookmark = page.bookmark;
    }
    return times.sort((a, b) => a - b);
  };
  const newest = await walk(false);
  const oldest = await walk(true);
  const one: number[] = [];
  for (let i = 0; i < PAGES; i++) {
    const address = addresses[Math.floor(Math.random() * addresses.length)];
    t0 = performance.now();
    const page = await ownersView(t.ctx, '2', { bookmark: '', address });
    one.push(performance.now() - t0);
    if (page.docs.length !== 1) throw new Error('address filter missed');
  }
  one.sort((a, b) => a - b);
  const http: number[] = [];
  let bookmark = '';
  for (let i = 0; i < 500; i++) {
    t0 = performance.now();
    const res = await t.request('POST', '/api/v0/collections', {
      body: {
        collectionsToFetch: [{ collectionId: '2', viewsToFetch: [{ viewType: 'owners', viewId: 'o', bookmark }] }],
      },
    });
    http.push(performance.now() - t0);
    if (res.statusCode !== 200) throw new Error(res.body);
    bookmark = res.json().collections[0].views.o.pagination.bookmark;
  }
  http.sort((a, b) => a - b);
  const p50 = percentile(newest, 50);
  console.log(`[${name}] owners view on ${fmt(OWNERS)} owners, ${fmt(PAGES)} successive pages of 25:`);
  console.log(
    `[${name}]   newest first                       ${stats(newest)}   goal p50 < 5 ms: ${p50 < 5 ? 'MET' : 'NOT MET'}`,
  );
  console.log(`[${name}]   oldestFirst                        ${stats(oldest)}`);
  console.log(`[${name}]   address filter (one owner)         ${stats(one)}`);
  console.log(`[${name}]   POST /api/v0/collections (inject)  ${stats(http)}  (500 pages)`);
}

console.log(
  `# chain: indexing ${fmt(BLOCKS)} blocks (${fmt(BLOCKS * PER_BLOCK)} transfers) from the fake chain on loopback; owners view on ${fmt(OWNERS)} owners${FULL ? '' : '  (--full: 10,000 blocks, 1,000,000 owners)'}`,
);
const t0 = performance.now();
const server = await startChild('bench/lib/fake-chain-server.ts', [String(BLOCKS), String(PER_BLOCK)]);
const [height, transfers] = server.extra.map(Number);
const url = `http://127.0.0.1:${server.port}`;
console.log(
  `synthetic chain (own process): ${fmt(height)} blocks, ${fmt(transfers)} transfers, built in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);
const baseline = await chainReadTime(url, height);
for (const d of await benchDatabases()) {
  const t = await startApp({
    database: d.make(),
    env: { CHAIN_REST_URL: url, RUN_WORKER: 'false', CHAIN_INDEX_BATCH: '50' },
  });
  try {
    await indexing(d.name, t, height, transfers, baseline);
    await ownersPages(d.name, t);
  } finally {
    await t.close();
  }
}
await server.stop();
