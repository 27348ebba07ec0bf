// Mutation testing (`npm run mutate -- <folder or file> [test files…]`, see docs/contributing.md).
// scripts/mutate.mjs picks what to mutate and which tests judge it and passes both in the
// environment. node:test has no Stryker runner, so the command runner runs the chosen test files
// on SQLite once per mutant; mutant switching means nothing is rebuilt between runs.
const mutate = (process.env.MUTATE_TARGETS ?? 'src/plugins').split(' ');
const tests = process.env.MUTATE_TESTS ?? 'test/plugins/*.test.ts';
const reportName = mutate.join('+').replace(/[^A-Za-z0-9.+-]+/g, '_');

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'command',
  // One process for all the files (--test-isolation=none): a third of the CPU time of one process per file.
  commandRunner: { command: `node --test --test-isolation=none --test-timeout=60000 ${tests}` },
  // a file, a line range of one (`src/plugins/whitelist.ts:96-127`) or a folder
  mutate: mutate.map((m) => (/\.ts(:\d+-\d+)?$/.test(m) ? m : `${m}/**/*.ts`)),
  // the machine is shared: two sandboxes at most
  concurrency: Number(process.env.MUTATE_CONCURRENCY ?? 2),
  coverageAnalysis: 'off',
  // a hung mutant (an attempt that never resolves) is a kill; do not wait long for it
  // (MUTATE_TIMEOUT_MS raises it on a loaded machine, where a normal run overruns 4 s and is miscounted as a hang)
  timeoutMS: Number(process.env.MUTATE_TIMEOUT_MS ?? 4_000),
  timeoutFactor: 1.25,
  reporters: ['clear-text', 'progress-append-only', 'json', 'html'],
  jsonReporter: { fileName: `.tmp/mutation/${reportName}.json` },
  htmlReporter: { fileName: `.tmp/mutation/${reportName}.html` },
  tempDirName: '.tmp/stryker',
  // only the mutated sources get `// @ts-nocheck`: by default every TypeScript file does, and then
  // the committed clients/typescript/schema.d.ts no longer matches what generate.ts writes
  disableTypeChecks: 'src/**/*.ts',
  ignorePatterns: ['data', '.tmp', 'bench'],
  cleanTempDir: 'always',
  // tsconfig.json needs no rewriting in the sandbox (no extends/references), and Stryker's rewriter
  // calls the TypeScript 5 API, which TypeScript 7 (the Go compiler) does not have.
  tsconfigFile: 'no-tsconfig-rewrite.json',
};
