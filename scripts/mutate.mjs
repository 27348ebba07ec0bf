// npm run mutate -- <folder or file> [test files…]
// Mutation testing of one folder (or one file) judged by that folder's own tests
// (test/<folder name>/*.test.ts unless test files are named). SQLite only; not part of CI.
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

const [target, ...tests] = process.argv.slice(2);
if (!target) {
  console.error('usage: npm run mutate -- <src folder or file> [test files…]   e.g. npm run mutate -- src/plugins');
  process.exit(2);
}
const file = target.replace(/:\d+-\d+$/, ''); // a line range of a file: src/plugins/whitelist.ts:96-127
const folder = file.endsWith('.ts') ? dirname(file) : target.replace(/\/$/, '');
const env = {
  ...process.env,
  TEST_DB: 'sqlite',
  // the sandbox's instrumented sources are the same for every mutant: compile them once
  NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? join(tmpdir(), 'node-compile-cache'),
  MUTATE_TARGETS: target.replace(/\/$/, ''),
  MUTATE_TESTS: tests.length ? tests.join(' ') : `test/${basename(folder)}/*.test.ts`,
};
console.log(`mutating ${env.MUTATE_TARGETS}, judged by ${env.MUTATE_TESTS}`);
const r = spawnSync(
  process.execPath,
  ['node_modules/@stryker-mutator/core/bin/stryker.js', 'run', 'stryker.config.mjs'],
  { stdio: 'inherit', env },
);
process.exit(r.status ?? 1);
