// The README's quickstart is run as written: its shell block, against a real service on a private
// database, with the README's fixed URL pointed at this test's server. A quickstart that drifts
// from the service fails here.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
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
  const t = useApp({ listen: true, env: { SWAP_IMPORT_POLL_INTERVAL_MS: '200' } });

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
    // every step says in words what its answer meant, one line each
    const lines = r.stdout.trim().split('\n');
    const expected = [
      /^API key: [0-9a-f]{64}$/,
      /^Developer app: \S+$/,
      /^Signed in: a session token for the throwaway wallet$/,
      /^Claim launch-party created$/,
      /^Attempt [0-9a-f]{32} queued$/,
      /^Attempt succeeded for bb1[0-9a-z]+$/,
      /^Store \S+ created$/,
      /^Added 0x0{39}1 to the store$/,
      /^Claim vip-only created$/,
      /^Simulation passed: the store member may claim vip-only$/,
      /^Imported [1-9][0-9]* pools$/,
      /^Swap estimate: 1000000ubadge buys [1-9][0-9]* uosmo$/,
    ];
    assert.equal(lines.length, expected.length, r.stdout);
    lines.forEach((line, i) => assert.match(line, expected[i]));
  });
});
