// docs/tutorial-token-gate.md is run as written: its shell blocks, in order, in one shell, against
// a real service on a private database (the tutorial's fixed URL pointed at this test's server).
// A tutorial that drifts from the service fails here.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PATIENCE_MS } from '../helpers/patience.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

function tutorialScript(): string {
  const text = readFileSync(`${root}/docs/tutorial-token-gate.md`, 'utf8');
  const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(blocks.length >= 8, 'the tutorial has its shell steps');
  return blocks.join('\n');
}

describe('token-gate tutorial', () => {
  const t = useApp({ listen: true });

  test('runs end to end: chain snapshot, requirement, claim, a stranger refused, the holder claims once', async () => {
    const script = tutorialScript().replaceAll('http://127.0.0.1:3000', t.url);
    const r = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: root,
      encoding: 'utf8',
      timeout: PATIENCE_MS,
      env: { ...process.env, ...t.database.env, LOG_LEVEL: 'warn' },
    }).catch((err: { code?: number; stdout?: string; stderr?: string }) =>
      assert.fail(`the tutorial failed (${err.code}):\n${err.stdout}\n${err.stderr}`),
    );
    const refusal = 'Address does not own enough of IDs 1 in collection 1 to meet minimum balance requirement of 1';
    const expected = [
      /^API key: [0-9a-f]{64}$/,
      /^Chain data at height 100: 1 collection, 1 balance$/,
      /^0x0{38}a1 holds the pass$/,
      new RegExp(`^0x0{38}b2 does not: ${refusal}$`),
      /^Session for 0x…0001: [0-9a-f]{32}$/,
      /^Claim vip-reward created$/,
      new RegExp(`^Stranger refused: ${refusal}$`),
      /^Attempt [0-9a-f]{32} queued$/,
      /^The holder claimed the reward$/,
      /^The holder was #1 to claim \(claim number 0\)$/,
      /^Second try refused: User already exceeded max uses$/,
    ];
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, expected.length, r.stdout);
    lines.forEach((line, i) => assert.match(line, expected[i]));
  });
});
