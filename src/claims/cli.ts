// `platform worker`: runs the claim queue worker alone (no HTTP). Pair it with `serve` and
// RUN_WORKER=false, or run several: they share the work through the database.
import { parseArgs } from 'node:util';
import { registerCommand } from '../cli.ts';
import { loadConfig } from '../config.ts';
import { createContext } from '../context.ts';
import { drainQueue, startWorker } from './queue.ts';

registerCommand({
  name: 'worker',
  usage: 'worker [--once]               run the claim queue worker (--once: drain the queue, then exit)',
  async run(args) {
    const { values } = parseArgs({ args, options: { once: { type: 'boolean' } }, strict: true });
    const ctx = await createContext(loadConfig());
    if (values.once) {
      try {
        process.stdout.write(JSON.stringify({ resolved: await drainQueue(ctx) }) + '\n');
      } finally {
        await ctx.close();
      }
      return;
    }
    startWorker(ctx);
    ctx.log.info('claim queue worker started');
    await new Promise<void>((resolve) => {
      process.once('SIGTERM', () => resolve());
      process.once('SIGINT', () => resolve());
    });
    ctx.log.info('claim queue worker stopping: finishing the current batch');
    await ctx.close();
  },
});
