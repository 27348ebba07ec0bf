// `platform worker`: runs the background loops (claim queue, cleanup, and every loop a capability
// declares in src/capabilities.ts) without HTTP. Pair it with `serve` and RUN_WORKER=false, or run
// several: every loop shares its work with other processes through the database.
import { parseArgs } from 'node:util';
import { UsageError, type Command } from '../shared/command.ts';
import type { BackgroundLoop } from '../worker/runtime.ts';

// Loaded by the command that runs, so `--help` and the other commands load little.
const load = async () => ({
  ...(await import('../config.ts')),
  ...(await import('../context.ts')),
  ...(await import('../worker/runtime.ts')),
  ...(await import('./queue.ts')),
});

/** `--only a,b`: at least one name, each a known loop. */
function onlyLoops(value: string, loops: readonly BackgroundLoop[]): string[] {
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new UsageError('worker --only needs at least one loop name (comma-separated)');
  const known = loops.map((l) => l.name).sort();
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length)
    throw new UsageError(
      `worker --only: unknown background loop ${unknown.map((n) => `"${n}"`).join(', ')}; known: ${known.join(', ')}`,
    );
  return names;
}

export const claimCommands: Command[] = [
  {
    name: 'worker',
    usage: 'worker [--once | --only a,b]  run the background loops (--once: drain the claim queue, then exit)',
    details: [
      '--only a,b            run only the named loops (an unknown name is refused, naming the known ones)',
      '--once                drain the claim queue, print {"resolved": n} and exit; runs no loop, so takes no --only',
    ].join('\n'),
    async run(args, env) {
      const { loadConfig, createContext, runLoopsUntilSignal, drainQueue } = await load();
      const loops = await env.loops();
      const { values } = parseArgs({
        args,
        options: { once: { type: 'boolean' }, only: { type: 'string' } },
        strict: true,
      });
      const only = values.only === undefined ? undefined : onlyLoops(values.only, loops);
      if (values.once && only) throw new UsageError('worker --once drains the claim queue and takes no --only');
      const ctx = await createContext(loadConfig());
      if (values.once) {
        try {
          process.stdout.write(JSON.stringify({ resolved: await drainQueue(ctx) }) + '\n');
        } finally {
          await ctx.close();
        }
        return;
      }
      await runLoopsUntilSignal(ctx, loops, only, {
        started: 'worker started',
        stopping: 'worker stopping: finishing the current work',
      });
    },
  },
];
