// A real service process (`platform serve`, or any command line that starts one) on a free port,
// waited on until /readyz answers.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { BIN, ROOT } from './cli.ts';
import { PATIENCE_MS } from './patience.ts';

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  port: number;
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** A port free right now (the kernel picks it; closed again before the service binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export async function startService(
  env: Record<string, string>,
  opts: { command?: string[]; cwd?: string; port?: number; readyPath?: string; timeoutMs?: number } = {},
): Promise<ServiceProcess> {
  const port = opts.port ?? (await freePort());
  const [cmd, ...args] = opts.command ?? [process.execPath, BIN, 'serve'];
  const child = spawn(cmd, args, {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (opts.timeoutMs ?? PATIENCE_MS); // however slowly a loaded machine starts
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}: ${err}`);
    try {
      const res = await fetch(url + (opts.readyPath ?? '/readyz'));
      if (res.status === 200) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service did not become ready: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    url,
    port,
    stdout: () => out,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
