// Issue 5 benchmark: dynamic stores.
//  1. Batch action throughput (addresses/s) through POST /api/v0/storeActions/batch for batches
//     of 1, 100 and 10,000 new addresses (API key + dataSecret; validation, transaction, history).
//  2. Membership check latency on a store of 1,000,000 addresses: the raw primary-key probe, the
//     whitelist plugin's readStoreMembership, and GET /dynamicStore/{id}/value over HTTP
//     (in-process inject), against a baseline measured in the same run: the same lookup done as
//     a scan of the store kept as one JSON array (select, JSON.parse, includes).
// Goal: membership check p50 < 1 ms at 1,000,000 addresses.
// BENCH_DB=sqlite|postgres picks one database (default: both when PostgreSQL is reachable).
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { sql } from 'kysely';
import { startApp, type TestApp } from '../test/helpers/app.ts';
import { toPlatformAddress } from '../src/shared/addresses.ts';
import type { Session } from '../src/shared/session.ts';
import { createStore } from '../src/stores/domain.ts';
import { addMembers, adjustSize } from '../src/stores/storage.ts';
import { readStoreMembership } from '../src/stores/claims-integration.ts';
import { benchDatabases, fmt, percentile } from './lib/harness.ts';

const MILLION = Number(process.env.BENCH_STORE_SIZE ?? 1_000_000);
const LOOKUPS = Number(process.env.BENCH_LOOKUPS ?? 5_000);
const BASELINE_LOOKUPS = 5;

const session: Session = {
  platformAddress: toPlatformAddress(randomBytes(20)),
  address: '0x',
  chain: 'ETH',
  scopes: ['manageDynamicStores'],
  clientId: 'bench',
  authorizationId: 'bench',
};

const fresh = (n: number) => Array.from({ length: n }, () => toPlatformAddress(randomBytes(20)));

async function timeEach(n: number, fn: (i: number) => Promise<unknown> | unknown): Promise<number[]> {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    out[i] = performance.now() - t0;
  }
  return out.sort((a, b) => a - b);
}

const ms = (v: number) => `${v < 0.1 ? v.toFixed(3) : v.toFixed(2)} ms`;
const stats = (sorted: number[]) => `p50 ${ms(percentile(sorted, 50))}  p99 ${ms(percentile(sorted, 99))}`;

async function throughput(t: TestApp, name: string): Promise<void> {
  const store = await createStore(t.ctx, session, { handlerId: 'addresses', label: 'throughput' });
  const send = (addresses: string[]) =>
    t.request('POST', '/api/v0/storeActions/batch', {
      body: {
        dynamicDataId: store.dynamicDataId,
        dataSecret: store.dataSecret,
        actions: addresses.map((address) => ({ actionName: 'add', payload: { address } })),
      },
    });
  for (const [size, requests] of [
    [1, 1000],
    [100, 100],
    [10_000, 5],
  ] as const) {
    const batches = Array.from({ length: requests + 1 }, () => fresh(size));
    const warm = await send(batches[0]);
    if (warm.statusCode !== 200) throw new Error(warm.body);
    const t0 = performance.now();
    for (let i = 1; i <= requests; i++) {
      const r = await send(batches[i]);
      if (r.statusCode !== 200) throw new Error(r.body);
    }
    const seconds = (performance.now() - t0) / 1000;
    console.log(
      `[${name}] batch of ${String(size).padStart(6)}: ${fmt((size * requests) / seconds).padStart(9)} addresses/s  (${fmt((seconds * 1000) / requests, 2)} ms per request, ${requests} requests)`,
    );
  }
}

async function membership(t: TestApp, name: string, database: { env: Record<string, string> }): Promise<void> {
  const { db, keyring } = t.ctx;
  const store = await createStore(t.ctx, session, { handlerId: 'addresses', label: 'million' });
  const id = store.dynamicDataId;

  let t0 = performance.now();
  const all = fresh(MILLION).sort();
  const genSeconds = (performance.now() - t0) / 1000;
  t0 = performance.now();
  const CHUNK = 50_000;
  for (let i = 0; i < all.length; i += CHUNK) {
    await db.transaction().execute(async (tx) => {
      const added = await addMembers(tx, id, all.slice(i, i + CHUNK));
      await adjustSize(tx, id, added);
    });
  }
  if (name === 'postgres') await sql`vacuum analyze dynamic_store_members`.execute(db); // settle the bulk load before timing
  const insertSeconds = (performance.now() - t0) / 1000;
  const size = (
    await db.selectFrom('dynamic_stores').select('size').where('dynamic_data_id', '=', id).executeTakeFirstOrThrow()
  ).size;
  console.log(
    `[${name}] store of ${fmt(size)} addresses: generated in ${genSeconds.toFixed(1)} s, bulk-inserted in ${insertSeconds.toFixed(1)} s (${fmt(size / insertSeconds)} rows/s)`,
  );

  // Lookup keys: half members, half not, in random order.
  const keys = Array.from({ length: LOOKUPS }, (_, i) =>
    i % 2 ? all[Math.floor(Math.random() * all.length)] : toPlatformAddress(randomBytes(20)),
  );
  const expectedHits = keys.filter((_, i) => i % 2).length;

  // Floor: the bare primary-key probe on a driver-level prepared statement.
  let raw: number[];
  let hits = 0;
  if (name === 'sqlite') {
    const conn = new SQLite(join(database.env.DATA_DIR, 'platform.sqlite'), { readonly: true });
    const stmt = conn.prepare('select 1 from dynamic_store_members where dynamic_data_id = ? and address = ?');
    raw = await timeEach(LOOKUPS, (i) => {
      if (stmt.get(id, keys[i])) hits++;
    });
    conn.close();
  } else {
    const client = new pg.Client({
      connectionString: database.env.DATABASE_URL.replace(/[?&]schema=([^&]+)/, ''),
      options: `-c search_path=${new URL(database.env.DATABASE_URL).searchParams.get('schema')}`,
    });
    await client.connect();
    raw = await timeEach(LOOKUPS, async (i) => {
      const r = await client.query({
        name: 'probe',
        text: 'select 1 from dynamic_store_members where dynamic_data_id = $1 and address = $2',
        values: [id, keys[i]],
      });
      if (r.rowCount) hits++;
    });
    await client.end();
  }
  if (hits !== expectedHits) throw new Error(`raw probe found ${hits} members, expected ${expectedHits}`);

  hits = 0;
  const plugin = await timeEach(LOOKUPS, async (i) => {
    const r = await readStoreMembership(db, keyring, store, keys[i]);
    if ('inStore' in r && r.inStore) hits++;
  });
  if (hits !== expectedHits) throw new Error(`readStoreMembership found ${hits} members, expected ${expectedHits}`);

  hits = 0;
  const http = await timeEach(LOOKUPS, async (i) => {
    const r = await t.request('GET', `/api/v0/dynamicStore/${id}/value?key=${keys[i]}&dataSecret=${store.dataSecret}`);
    if (r.statusCode !== 200) throw new Error(r.body);
    if (r.json().inStore) hits++;
  });
  if (hits !== expectedHits) throw new Error(`HTTP lookup found ${hits} members, expected ${expectedHits}`);

  // Baseline: the store kept as one JSON array in a row; a lookup loads, parses and scans it.
  await sql`create table bench_json_store (id text primary key, data text not null)`.execute(db);
  await sql`insert into bench_json_store (id, data) values (${id}, ${JSON.stringify(all)})`.execute(db);
  hits = 0;
  const baseline = await timeEach(BASELINE_LOOKUPS, async (i) => {
    const row = await sql<{ data: string }>`select data from bench_json_store where id = ${id}`.execute(db);
    if ((JSON.parse(row.rows[0].data) as string[]).includes(keys[i])) hits++;
  });

  const p50 = percentile(plugin, 50);
  console.log(`[${name}] membership check on ${fmt(size)} addresses (${fmt(LOOKUPS)} lookups, half hits):`);
  console.log(`[${name}]   raw primary-key probe (driver)          ${stats(raw)}`);
  console.log(
    `[${name}]   readStoreMembership (whitelist plugin)  ${stats(plugin)}   goal p50 < 1 ms: ${p50 < 1 ? 'MET' : 'NOT MET'}`,
  );
  console.log(`[${name}]   GET /dynamicStore/{id}/value (inject)   ${stats(http)}`);
  console.log(
    `[${name}]   baseline: JSON array scan               p50 ${ms(percentile(baseline, 50))}  (${BASELINE_LOOKUPS} lookups)`,
  );
  console.log(
    `[${name}]   ratio baseline p50 / readStoreMembership p50: ${fmt(percentile(baseline, 50) / p50)}x faster`,
  );
}

console.log(
  `# dynamic stores: batch action throughput; membership check on ${fmt(MILLION)} addresses vs a JSON-array scan`,
);
for (const d of await benchDatabases()) {
  const database = d.make();
  const t = await startApp({ database });
  try {
    await throughput(t, d.name);
    await membership(t, d.name, database);
  } finally {
    await t.close();
  }
}
