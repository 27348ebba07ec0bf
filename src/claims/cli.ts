// `platform worker`: runs the background loops (claim queue, cleanup, and every loop a capability
// registers in worker/loops.ts) without HTTP. Pair it with `serve` and RUN_WORKER=false, or run
// several: every loop shares its work with other processes through the database.
import { parseArgs } from 'node:util';
import { registerCommand } from '../cli.ts';
import { loadConfig } from '../config.ts';
import { createContext } from '../context.ts';
import { startLoops } from '../worker/runtime.ts';
import { drainQueue } from './queue.ts';

registerCommand({
  name: 'worker',
  usage: 'worker [--once] [--only a,b]  run the background loops (--once: drain the claim queue, then exit)',
  async run(args) {
    const { values } = parseArgs({ args, options: { once: { type: 'boolean' }, only: { type: 'string' } }, strict: true });
    const ctx = await createContext(loadConfig());
    if (values.once) {
      try {
        process.stdout.write(JSON.stringify({ resolved: await drainQueue(ctx) }) + '\n');
      } finally {
        await ctx.close();
      }
      return;
    }
    try {
      const only = values.only?.split(',').map((s) => s.trim()).filter(Boolean);
      const started = await startLoops(ctx, only);
      ctx.log.info({ loops: started }, 'worker started');
    } catch (err) {
      await ctx.close();
      throw err;
    }
    await new Promise<void>((resolve) => {
      process.once('SIGTERM', () => resolve());
      process.once('SIGINT', () => resolve());
    });
    ctx.log.info('worker stopping: finishing the current work');
    await ctx.close();
  },
});
