// Runs the operator CLI as a real child process, on the pinned Node.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PATIENCE_MS } from './patience.ts';

export const ROOT = join(import.meta.dirname, '..', '..');
export const BIN = join(ROOT, 'bin', 'platform.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `timeoutMs` only turns a hung process into a failure (it is killed, `code` null): leave it at
 * PATIENCE_MS, no slow machine reaches it. `opts.cwd`: where the CLI runs (it reads `.env` from there); `opts.node`: another Node binary. */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = PATIENCE_MS,
  opts: { cwd?: string; node?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(opts.node ?? process.execPath, [BIN, ...args], {
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The one JSON document a successful command prints; fails the test (with its stderr) on any other exit. */
export function cliJson(r: CliResult): any {
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stdout.endsWith('\n'), 'the document ends its line');
  return JSON.parse(r.stdout);
}
