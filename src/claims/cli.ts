// `platform worker`: runs the background loops (claim queue, cleanup, and every loop a capability
// registers in worker/loops.ts) without HTTP. Pair it with `serve` and RUN_WORKER=false, or run
// several: every loop shares its work with other processes through the database.
import { parseArgs } from 'node:util';
import { registerCommand, UsageError } from '../cli.ts';
import { loadConfig } from '../config.ts';
// Heavy modules are imported by the command that runs, so `--help` and other commands load little.

/** `--only a,b`: at least one name, each a known loop. */
async function onlyLoops(value: string): Promise<string[]> {
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new UsageError('worker --only needs at least one loop name (comma-separated)');
  const { listLoops } = await import('../worker/runtime.ts');
  const known = (await listLoops()).map((l) => l.name).sort();
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length)
    throw new UsageError(
      `worker --only: unknown background loop ${unknown.map((n) => `"${n}"`).join(', ')}; known: ${known.join(', ')}`,
    );
  return names;
}

registerCommand({
  name: 'worker',
  usage: 'worker [--once | --only a,b]  run the background loops (--once: drain the claim queue, then exit)',
  details: [
    '--only a,b            run only the named loops (an unknown name is refused, naming the known ones)',
    '--once                drain the claim queue, print {"resolved": n} and exit; runs no loop, so takes no --only',
  ].join('\n'),
  async run(args) {
    const { values } = parseArgs({
      args,
      options: { once: { type: 'boolean' }, only: { type: 'string' } },
      strict: true,
    });
    const only = values.only === undefined ? undefined : await onlyLoops(values.only);
    if (values.once && only) throw new UsageError('worker --once drains the claim queue and takes no --only');
    const [{ createContext }, { runLoopsUntilSignal }, { drainQueue }] = await Promise.all([
      import('../context.ts'),
      import('../worker/runtime.ts'),
      import('./queue.ts'),
    ]);
    const ctx = await createContext(loadConfig());
    if (values.once) {
      try {
        process.stdout.write(JSON.stringify({ resolved: await drainQueue(ctx) }) + '\n');
      } finally {
        await ctx.close();
      }
      return;
    }
    await runLoopsUntilSignal(ctx, only, {
      started: 'worker started',
      stopping: 'worker stopping: finishing the current work',
    });
  },
});
