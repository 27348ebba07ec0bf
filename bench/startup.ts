// How long the operator CLI takes to start: `platform app list` on a migrated SQLite database, run as a
// real process, with Node's compile cache (what bin/platform.js enables) against the same command
// with the cache turned off (NODE_DISABLE_COMPILE_CACHE=1), in alternating runs; the ratio is
// cache-off time over warm-cache time. The cache lives in a directory of this run, filled by one
// untimed run first. BENCH_RUNS (default 10) per variant.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, median } from './lib/harness.ts';

const runs = Number(process.env.BENCH_RUNS ?? 10);
const dir = mkdtempSync(join(tmpdir(), 'platform-bench-startup-'));
const BIN = join(import.meta.dirname, '..', 'bin', 'platform.js');
const base: NodeJS.ProcessEnv = {
  ...process.env,
  DATA_DIR: join(dir, 'data'),
  NODE_COMPILE_CACHE: join(dir, 'compile-cache'),
  LOG_LEVEL: 'warn',
};
delete base.DATABASE_URL;
delete base.NODE_DISABLE_COMPILE_CACHE;

/** Wall-clock milliseconds of one `platform app list`; fails the bench on a non-zero exit. */
function run(env: NodeJS.ProcessEnv): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, 'app', 'list'], { env, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`platform app list exited with ${r.status}: ${r.stderr}`);
  return ms;
}

try {
  run(base); // migrates the database and fills the cache
  const off: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < runs; i++) {
    off.push(run({ ...base, NODE_DISABLE_COMPILE_CACHE: '1' }));
    warm.push(run(base));
  }
  const [o, w] = [median(off), median(warm)];
  console.log(`platform app list, median of ${runs} runs each (wall clock, one process per run)`);
  console.log(`  compile cache off   ${fmt(o)} ms`);
  console.log(`  compile cache warm  ${fmt(w)} ms`);
  console.log(`  ratio off / warm    ${(o / w).toFixed(2)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
