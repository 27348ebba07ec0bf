// Tests are filed by capability, as docs/contributing.md says ("Where a new test goes"): every
// folder under test/ is a folder of src/ or one of the few with no src/ twin, and no test file is
// named by how its bug was found instead of by the behaviour it guards.
// test-run: once (no database: pure code; scripts/test.mjs)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const folders = (dir: string) =>
  readdirSync(`${root}/${dir}`, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);

/** test/ folders that mirror no src/ folder, and why they stand apart. */
const WITHOUT_SRC_TWIN = [
  'helpers', // shared test steps, no tests
  'security', // the access table walked with every credential
  'fuzz', // every route at once
  'docs', // the docs checked against the code
  'refclient', // the reference client against the service
];

test('every folder under test/ is a folder of src/ or a named exception', () => {
  const src = new Set(folders('src'));
  const strays = folders('test').filter(
    (f) =>
      !src.has(f) &&
      !WITHOUT_SRC_TWIN.includes(f) &&
      // a folder a checkout left empty holds no test
      readdirSync(`${root}/test/${f}`).some((n) => n.endsWith('.test.ts')),
  );
  assert.deepEqual(strays, [], 'file these tests under the src/ folder whose behaviour they guard');
});

test('no test file is named edges, bugs or hardening', () => {
  const named = folders('test').flatMap((f) =>
    readdirSync(`${root}/test/${f}`)
      .filter((n) => /(^|-)(edges|bugs|hardening)\.test\.ts$/.test(n))
      .map((n) => `test/${f}/${n}`),
  );
  assert.deepEqual(named, [], 'name a test file by the behaviour it guards');
});
