import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../helpers/app.ts';
import { ROOT } from '../helpers/cli.ts';

// The package bin as the README tells users to reach it: `npx platform …` from the checkout
// (npm runs the package's own bin through its shebang, not as `node bin/platform.js`).
function runLinkedBin(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['platform', ...args], {
      cwd: ROOT,
      env: {
        ...process.env,
        PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH}`,
        LOG_LEVEL: 'warn',
        ...env,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('package bin (npx platform)', () => {
  let db: TestDatabase;
  before(() => {
    db = createTestDatabase();
  });
  after(() => db.drop());

  test('npx platform runs the CLI and prints its JSON', async () => {
    const r = await runLinkedBin(['api-key', 'create', '--label', 'via link'], db.env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).label, 'via link');
  });

  test('exit codes pass through npx', async () => {
    const r = await runLinkedBin(['no-such-command'], db.env);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Unknown command/);
  });
});
