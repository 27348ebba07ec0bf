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

let inProcessQueue: Promise<unknown> = Promise.resolve();

/**
 * Runs a CLI command inside this test process: `main(args)` of src/cli.ts with `env` laid over the
 * environment, stdout and stderr captured. The same command code as `runCli`, without starting a
 * Node process per call (about a second of CPU each). Use it for what a command does; keep
 * `runCli` where the process boundary is the behaviour (exit codes seen by a shell, signals,
 * start-up failures, `serve` and the loops). Calls run one at a time (they share process.env).
 *
 * Only text chunks are captured: the test runner reports to its parent over this process's stdout
 * in binary chunks, which pass through untouched.
 */
export function runCliInProcess(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const run = inProcessQueue.then(async () => {
    const saved = { ...process.env };
    let stdout = '';
    let stderr = '';
    const out = process.stdout.write;
    const err = process.stderr.write;
    const capture =
      (original: typeof process.stdout.write, append: (s: string) => void) =>
      (chunk: unknown, ...rest: unknown[]) => {
        if (typeof chunk !== 'string')
          return (original as (...a: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
        append(chunk);
        const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
        done?.();
        return true;
      };
    process.stdout.write = capture(out, (s) => (stdout += s)) as typeof process.stdout.write;
    process.stderr.write = capture(err, (s) => (stderr += s)) as typeof process.stderr.write;
    Object.assign(process.env, { LOG_LEVEL: 'warn' }, env);
    try {
      const { main } = await import('../../src/cli.ts');
      const code = await main(args);
      return { code, stdout, stderr };
    } finally {
      process.stdout.write = out;
      process.stderr.write = err;
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    }
  });
  inProcessQueue = run.catch(() => undefined);
  return run;
}
