// How far behind a streaming replica is, measured: a row committed on the primary, then polled on
// the replica until it shows (every 1 ms); p50/p99/max of that delay over BENCH_N commits, idle and
// while a writer commits in the background. Makes its own replica of TEST_DATABASE_URL's server
// with pg_basebackup (test/helpers/standby.ts: root and the PostgreSQL binaries needed), so it is
// PostgreSQL only, and skipped when it cannot make one.
//   node bench/replica-lag.ts      BENCH_N=… commits per phase (default 300)
import { rmSync } from 'node:fs';
import pg from 'pg';
import { TEST_DATABASE_URL } from '../test/helpers/app.ts';
import { startStandby } from '../test/helpers/standby.ts';
import { percentile } from './lib/harness.ts';
import { record } from './lib/record.ts';

const N = Number(process.env.BENCH_N ?? 300);
if (process.getuid?.() !== 0 || process.env.BENCH_DB === 'sqlite') {
  console.log('replica-lag: skipped (needs root and PostgreSQL to make a replica)');
  process.exit(0);
}
const standby = await startStandby();
const primary = new pg.Client({ connectionString: TEST_DATABASE_URL });
const replica = new pg.Client({ connectionString: standby.url });
const writer = new pg.Client({ connectionString: TEST_DATABASE_URL });
await Promise.all([primary.connect(), replica.connect(), writer.connect()]);
const table = `replica_lag_${process.pid}`;
try {
  await primary.query(`create table ${table} (id int primary key, at bigint not null, pad text)`);
  // the table must exist on the replica before the timed phases
  for (;;) {
    const r = await replica.query('select 1 from pg_class where relname = $1', [table]);
    if (r.rowCount) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  let id = 0;
  const phase = async (label: string, background: boolean) => {
    let writing = background;
    const bg = (async () => {
      let n = 0;
      while (writing) {
        await writer.query(`insert into ${table} (id, at, pad) values ($1, 0, repeat('x', 2000))`, [-(++n + id * 10)]);
      }
    })();
    const delays: number[] = [];
    for (let i = 0; i < N; i++) {
      const mine = ++id;
      await primary.query(`insert into ${table} (id, at) values ($1, 0)`, [mine]);
      const t0 = performance.now();
      for (;;) {
        const r = await replica.query(`select 1 from ${table} where id = $1`, [mine]);
        if (r.rowCount) break;
        await new Promise((r) => setTimeout(r, 1));
      }
      delays.push(performance.now() - t0);
    }
    writing = false;
    await bg;
    delays.sort((a, b) => a - b);
    const ms = (x: number) => `${x.toFixed(1)} ms`;
    console.log(
      `${label.padEnd(34)} commit → visible on the replica: p50 ${ms(percentile(delays, 50))}  p99 ${ms(percentile(delays, 99))}  max ${ms(delays[delays.length - 1]!)}  (${N} commits)`,
    );
    record(`replica delay p99, ${label}`, percentile(delays, 99), { better: 'lower', unit: 'ms' });
  };
  console.log('# replica lag: one streaming replica (pg_basebackup) of the local server, on the same machine');
  await phase('idle primary', false);
  await phase('primary with a busy writer', true);
} finally {
  await primary.query(`drop table if exists ${table}`).catch(() => {});
  await Promise.all([primary.end(), replica.end(), writer.end()]);
  standby.stop('immediate');
  rmSync(standby.dir, { recursive: true, force: true });
}
