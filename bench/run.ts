// `npm run bench`: runs every benchmark in bench/ one after another (or those named:
// `npm run bench -- swap merkle`), each in its own process so figures do not interfere.
// The figures each bench records (bench/lib/record.ts) land in one JSON file:
// `.tmp/bench/<UTC time>.json`, or the path after `--json` (`npm run bench -- --json a.json swap`).
// `node scripts/bench-compare.ts old.json new.json` prints what regressed between two such files.
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Figure } from './lib/record.ts';

const dir = import.meta.dirname;
const args = process.argv.slice(2);
const jsonAt = args.indexOf('--json');
const out =
  jsonAt >= 0
    ? args[jsonAt + 1]
    : join(dir, '..', '.tmp', 'bench', `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
if (!out) throw new Error('--json needs a file path');
const wanted = args.filter((_, i) => i !== jsonAt && i !== jsonAt + 1);
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
  .map((f) => f.replace(/\.ts$/, ''))
  .filter((name) => wanted.length === 0 || wanted.includes(name))
  .sort((a, b) => (a === 'foundation' ? -1 : b === 'foundation' ? 1 : a.localeCompare(b)));
mkdirSync(dirname(out), { recursive: true });
const scratch = `${out}.lines`;
rmSync(scratch, { force: true });
const startedAt = new Date().toISOString();
const loadBefore = loadavg();
let failed = 0;
const failedBenches: string[] = [];
for (const name of benches) {
  console.log(`\n=== bench/${name}.ts`);
  const r = spawnSync(process.execPath, [join(dir, `${name}.ts`)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_RECORD: scratch },
  });
  if (r.status !== 0) {
    failed++;
    failedBenches.push(name);
  }
}
let figures: Figure[] = [];
try {
  figures = readFileSync(scratch, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Figure);
} catch {
  // no bench recorded anything
}
rmSync(scratch, { force: true });
writeFileSync(
  out,
  `${JSON.stringify(
    {
      startedAt,
      finishedAt: new Date().toISOString(),
      // how busy the machine was: ratios are robust to load, absolute rates are not
      cpus: cpus().length,
      loadAverage: { before: loadBefore, after: loadavg() },
      benches,
      failed: failedBenches,
      figures,
    },
    null,
    2,
  )}\n`,
);
console.log(`\n${figures.length} figures written to ${out}`);
process.exit(failed ? 1 : 0);
