// Machine-readable figures. A benchmark calls `record()` next to the line it prints; when it runs
// under `npm run bench`, the runner passes a file in BENCH_RECORD and gathers every bench's
// figures into one JSON file that `node scripts/bench-compare.ts old.json new.json` compares.
// Run alone (no BENCH_RECORD), `record()` does nothing.
import { appendFileSync } from 'node:fs';

export interface Figure {
  /** The bench file's name, without `.ts`. */
  bench: string;
  /** Stable key within the bench, e.g. `authenticated GET / bare (sqlite)`. */
  name: string;
  value: number;
  /** Which way is better: a ratio against a baseline is usually 'higher', a latency 'lower'. */
  better: 'higher' | 'lower';
  unit?: string;
  /** The goal from the issue table, when there is one (met when `value` is on its better side). */
  goal?: number;
}

const bench = (process.argv[1] ?? '').replace(/^.*[\\/]/, '').replace(/\.ts$/, '');

export function record(
  name: string,
  value: number,
  opts: { better?: 'higher' | 'lower'; unit?: string; goal?: number } = {},
): void {
  const file = process.env.BENCH_RECORD;
  if (!file || !Number.isFinite(value)) return;
  const figure: Figure = { bench, name, value, better: opts.better ?? 'higher' };
  if (opts.unit) figure.unit = opts.unit;
  if (opts.goal !== undefined) figure.goal = opts.goal;
  appendFileSync(file, `${JSON.stringify(figure)}\n`);
}
