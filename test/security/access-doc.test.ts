// docs/security.md shows the access table as the code declares it: regenerate it with
// `node scripts/access-table.ts` after changing src/shared/access.ts.
// test-run: once (no database: pure code; scripts/test.mjs)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ACCESS, ACCESS_TABLE_MARKERS, renderAccessTable } from '../../src/shared/access.ts';

test('docs/security.md renders the access table of src/shared/access.ts', () => {
  const doc = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');
  const [start, end] = ACCESS_TABLE_MARKERS;
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  assert.ok(from >= 0 && to > from, 'docs/security.md holds the access-table markers');
  const shown = doc.slice(from + start.length, to).trim();
  assert.ok(
    shown === renderAccessTable(),
    'docs/security.md shows a stale access table: run node scripts/access-table.ts',
  );
  // one row per route, and the row of the plugin error log names its scope and owner rule
  assert.equal(shown.split('\n').length, Object.keys(ACCESS).length + 2);
  assert.ok(
    shown.includes(
      '| `GET /api/v0/plugins/errors` | API key | required | `managePlugins` | signed-in | only the creator or manager of the plugin |',
    ),
  );
});
