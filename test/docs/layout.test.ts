// docs/design.md's layout block names every folder and top-level module under src/, and nothing
// that is not there: a capability added, moved or removed without the map fails here.
// test-run: once (no database: pure code; scripts/test.mjs)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

function layoutBlock(): string[] {
  const design = readFileSync(`${root}/docs/design.md`, 'utf8');
  const section = design.split('\n## Layout\n')[1]?.split('\n## ')[0];
  assert.ok(section, 'docs/design.md has a "## Layout" section');
  const block = section.match(/```\nsrc\/\n([\s\S]*?)```/)?.[1];
  assert.ok(block, 'the layout section has a block starting with src/');
  // the lines under src/ are indented; the block goes on with test/ and bench/ at the margin
  const lines = block.split('\n');
  return lines.slice(
    0,
    lines.findIndex((l) => !l.startsWith('  ')),
  );
}

test('the layout block lists exactly the folders under src/, each once', () => {
  const listed = layoutBlock().flatMap((l) => l.match(/^ {2}([a-z0-9-]+)\/ /)?.[1] ?? []);
  const folders = readdirSync(`${root}/src`, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  assert.deepEqual([...listed].sort(), [...new Set(listed)].sort(), 'no folder is listed twice');
  assert.deepEqual([...listed].sort(), folders.sort());
});

test('the layout block names exactly the modules at the top of src/', () => {
  const files = layoutBlock().find((l) => /^ {2}[a-z-]+\.ts,/.test(l));
  assert.ok(files, 'a line lists the top-level modules');
  const listed = files
    .trim()
    .split(/\s{2,}/)[0]
    .split(/,\s*/);
  const modules = readdirSync(`${root}/src`, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => e.name);
  assert.deepEqual(listed.sort(), modules.sort());
});
