// The README's quickstart is run as written: its shell block, against a real service on a private
// database, with the README's fixed URL pointed at this test's server. A quickstart that drifts
// from the service fails here.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startApp, type TestApp } from '../helpers/app.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

function quickstartScript(): string {
  const readme = readFileSync(`${root}/README.md`, 'utf8');
  const section = readme.split('\n## Quickstart\n')[1]?.split('\n## ')[0];
  assert.ok(section, 'README has a "## Quickstart" section');
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  // the first block starts the service (the test does that); the second is the walkthrough
  assert.equal(blocks.length, 2, 'the quickstart has a start block and a walkthrough block');
  return blocks[1];
}

describe('README quickstart', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ listen: true, env: { SWAP_IMPORT_POLL_INTERVAL_MS: '200' } });
  });
  after(() => t.close());

  test('runs end to end: key, app, sign-in, claim, complete and status, store + whitelist, swap', async () => {
    const script = quickstartScript().replaceAll('http://127.0.0.1:3000', t.url);
    // asynchronously: the service answering the script runs in this process
    const r = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: root,
      encoding: 'utf8',
      timeout: PATIENCE_MS,
      env: { ...process.env, ...t.database.env, PLATFORM_URL: t.url, LOG_LEVEL: 'warn' },
    }).catch((err: { code?: number; stdout?: string; stderr?: string }) =>
      assert.fail(`quickstart failed (${err.code}):\n${err.stdout}\n${err.stderr}`),
    );
    const out = r.stdout;
    assert.match(out, /"success":true/, 'the completed attempt succeeded');
    assert.match(out, /\{"claimAttemptId":"0{32}"\}/, 'the store member passes the whitelist claim');
    assert.match(out, /^"[1-9][0-9]*"$/m, 'the swap estimate printed a positive tokenOutAmount');
    assert.doesNotMatch(out, /errorMessage/, 'no step answered an error');
  });
});
