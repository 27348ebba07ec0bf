// The portal build prints each entry's gzipped JavaScript and fails when an entry is over budget.
// test-run: once (no database: pure code; scripts/test.mjs)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const build = (env: Record<string, string>) =>
  spawnSync(process.execPath, ['portal/build.mjs'], { encoding: 'utf8', env: { ...process.env, ...env } });

test('the build prints the budgets, emits hashed assets and no inline script', () => {
  const out = mkdtempSync(join(tmpdir(), 'portal-build-'));
  try {
    const r = build({ PORTAL_OUT_DIR: out });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /claim\s+[\d.]+ KB gzipped JS \(budget 30 KB\)/);
    assert.match(r.stdout, /console\s+[\d.]+ KB gzipped JS \(budget 300 KB\)/);
    for (const page of ['index.html', 'claim.html']) {
      const html = readFileSync(join(out, page), 'utf8');
      assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, `${page} has an inline script`);
      assert.match(html, /src="\/assets\/[\w-]+-[\w-]{8}\.js"/);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('an entry over its budget fails the build', () => {
  const out = mkdtempSync(join(tmpdir(), 'portal-build-'));
  try {
    const r = build({ PORTAL_OUT_DIR: out, PORTAL_BUDGET_KB_CLAIM: '1' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /JavaScript budget exceeded: claim: [\d.]+ KB > 1 KB/);
    assert.equal(existsSync(join(out, 'claim.html')), false);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
