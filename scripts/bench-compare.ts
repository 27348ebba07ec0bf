// Compares two files written by `npm run bench` (bench/run.ts) and prints what moved:
//
//   node scripts/bench-compare.ts old.json new.json [--threshold 0.10]
//
// A figure regressed when it moved the wrong way (per its `better`) by more than the threshold,
// relative to the old value (10 % by default: same-run ratios on a shared 2-core machine swing a
// few percent). It also lists figures whose goal is not met in the new file, and figures present
// in only one file. Exits 1 when anything regressed, so it can gate a script, not CI: timings on
// a CI runner are noise.
import { readFileSync } from 'node:fs';

interface Figure {
  bench: string;
  name: string;
  value: number;
  better: 'higher' | 'lower';
  unit?: string;
  goal?: number;
}
interface Run {
  startedAt?: string;
  loadAverage?: { before: number[]; after: number[] };
  figures: Figure[];
}

const args = process.argv.slice(2);
const t = args.indexOf('--threshold');
const threshold = t >= 0 ? Number(args[t + 1]) : 0.1;
const files = args.filter((_, i) => t < 0 || (i !== t && i !== t + 1));
if (files.length !== 2 || !(threshold >= 0)) {
  console.error('usage: node scripts/bench-compare.ts old.json new.json [--threshold 0.10]');
  process.exit(2);
}
const read = (file: string): Run => {
  const run = JSON.parse(readFileSync(file, 'utf8')) as Run;
  if (!Array.isArray(run.figures)) throw new Error(`${file}: no "figures" array (not written by npm run bench?)`);
  return run;
};
const [before, after] = files.map(read);
const key = (f: Figure) => `${f.bench}: ${f.name}`;
const oldByKey = new Map(before.figures.map((f) => [key(f), f]));
const newByKey = new Map(after.figures.map((f) => [key(f), f]));

const num = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2));
const load = (r: Run) => (r.loadAverage ? ` (load ${r.loadAverage.before[0]?.toFixed(1)})` : '');
console.log(`old: ${files[0]}${before.startedAt ? ` ${before.startedAt}` : ''}${load(before)}`);
console.log(`new: ${files[1]}${after.startedAt ? ` ${after.startedAt}` : ''}${load(after)}`);

const regressed: string[] = [];
const improved: string[] = [];
const same: string[] = [];
for (const [k, n] of newByKey) {
  const o = oldByKey.get(k);
  if (!o) continue;
  const change = o.value === 0 ? 0 : (n.value - o.value) / Math.abs(o.value);
  const worse = n.better === 'higher' ? -change : change;
  const line = `  ${k}: ${num(o.value)} -> ${num(n.value)}${n.unit ? ` ${n.unit}` : ''} (${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)} %)`;
  if (worse > threshold) regressed.push(line);
  else if (-worse > threshold) improved.push(line);
  else same.push(line);
}
const goalMissed = [...newByKey.values()]
  .filter((f) => f.goal !== undefined && (f.better === 'higher' ? f.value < f.goal : f.value > f.goal))
  .map((f) => `  ${key(f)}: ${num(f.value)}, goal ${f.better === 'higher' ? '>=' : '<='} ${num(f.goal!)}`);
const onlyOld = [...oldByKey.keys()].filter((k) => !newByKey.has(k));
const onlyNew = [...newByKey.keys()].filter((k) => !oldByKey.has(k));

const section = (title: string, lines: string[]) => {
  if (lines.length) console.log(`\n${title} (${lines.length}):\n${lines.join('\n')}`);
};
section(`REGRESSED by more than ${(threshold * 100).toFixed(0)} %`, regressed);
section('improved', improved);
section('within the threshold', same);
section('goal not met in the new run', goalMissed);
section(
  'only in the old run',
  onlyOld.map((k) => `  ${k}`),
);
section(
  'only in the new run',
  onlyNew.map((k) => `  ${k}`),
);
if (!regressed.length) console.log('\nno regression');
process.exit(regressed.length ? 1 : 0);
