// node scripts/mutant-replay.mjs <report.json> <src file> <ids|survived|timeout|both> <test files…>
// Re-runs mutants of a Stryker JSON report one at a time, without a timeout: each mutant is planted
// by hand in a copy of src/ and test/ (.tmp/replay, so the worktree and a running Stryker sandbox
// are never touched), the tests run once on SQLite, and the line says KILLED (a test failed) or
// SURVIVED. Used for the "after" column of docs/contributing.md (timed-out mutants on a loaded
// machine, and survivors against tests written since the report). REPLAY_DB=postgres (with
// TEST_DATABASE_URL) judges on PostgreSQL: code only PostgreSQL runs is judged there.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const [report, file, which, ...tests] = process.argv.slice(2);
if (!tests.length) {
  console.error(
    'usage: node scripts/mutant-replay.mjs <report.json> <src file> <ids,…|survived|timeout|both> <test files…>',
  );
  process.exit(2);
}
const root = process.cwd();
const dir = resolve(process.env.REPLAY_DIR ?? '.tmp/replay'); // REPLAY_DIR: one per concurrent replay
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
cpSync('src', `${dir}/src`, { recursive: true });
cpSync('test', `${dir}/test`, { recursive: true });
// copies, not links: Node resolves a linked file to its real path, so bin/platform.js (the CLI the
// tests start) and clients/typescript/generate.ts (the OpenAPI document) would load the real src/
for (const d of ['bin', 'clients']) cpSync(d, `${dir}/${d}`, { recursive: true });
for (const f of ['package.json', 'tsconfig.json']) cpSync(f, `${dir}/${f}`);
for (const d of ['node_modules', 'docs', 'examples', 'portal', 'scripts'])
  if (existsSync(d)) symlinkSync(resolve(root, d), `${dir}/${d}`);

const f = JSON.parse(readFileSync(report, 'utf8')).files[file];
// When the file changed since the report, each mutant is planted in the current source at the place
// where the report's text around it (120 characters each side) occurs once; a mutant whose
// surroundings changed or repeat is listed as MOVED and not run.
const current = readFileSync(file, 'utf8');
const changed = current !== f.source;
if (changed)
  console.error(
    `note: ${file} changed since the report; mutants are relocated into the current source by their context`,
  );
const pick = {
  survived: ['Survived', 'NoCoverage'],
  timeout: ['Timeout'],
  both: ['Survived', 'NoCoverage', 'Timeout'],
}[which];
const ids = which.split(',');
const mutants = f.mutants.filter((m) => (pick ? pick.includes(m.status) : ids.includes(String(m.id))));
const lines = f.source.split('\n');
const offset = (p) => lines.slice(0, p.line - 1).reduce((a, l) => a + l.length + 1, 0) + p.column - 1;
const node = resolve(root, 'node_modules/.bin/node');
try {
  for (const m of mutants) {
    const [start, end] = [offset(m.location.start), offset(m.location.end)];
    let source = f.source;
    let at = start;
    if (changed) {
      const lead = f.source.slice(Math.max(0, start - 120), start);
      const context = lead + f.source.slice(start, Math.min(f.source.length, end + 120));
      const found = current.indexOf(context);
      if (found < 0 || current.indexOf(context, found + 1) >= 0) {
        console.log(
          [m.id, m.status, 'MOVED', '', `L${m.location.start.line}:${m.location.start.column}`, m.mutatorName].join(
            '\t',
          ),
        );
        continue;
      }
      [source, at] = [current, found + lead.length];
    }
    writeFileSync(`${dir}/${file}`, source.slice(0, at) + m.replacement + source.slice(at + (end - start)));
    const t0 = Date.now();
    const r = spawnSync(node, ['--test', '--test-isolation=none', '--test-timeout=60000', ...tests], {
      cwd: dir,
      env: {
        NODE_COMPILE_CACHE: join(tmpdir(), 'node-compile-cache'),
        ...process.env,
        TEST_DB: process.env.REPLAY_DB ?? 'sqlite',
      },
      encoding: 'utf8',
      timeout: 300_000,
    });
    const failed = [...`${r.stdout}${r.stderr}`.matchAll(/^\s*✖ (.*)$/gm)].map((x) => x[1]);
    const verdict = r.status === 0 ? 'SURVIVED' : 'KILLED';
    console.log(
      [
        m.id,
        m.status,
        verdict,
        `${((Date.now() - t0) / 1000).toFixed(1)}s`,
        `L${m.location.start.line}:${m.location.start.column}`,
        m.mutatorName,
        JSON.stringify(m.replacement).slice(0, 100),
        failed[0] ?? '',
      ].join('\t'),
    );
  }
} finally {
  writeFileSync(`${dir}/${file}`, changed ? current : f.source);
}
