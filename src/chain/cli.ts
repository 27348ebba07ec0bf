// `platform indexer` (runs only the chain-indexer loop), `platform indexer status` (prints the lag)
// and `platform import-chain FILE` (starts the read model from a snapshot).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { UsageError, withContext, type Command } from '../shared/command.ts';

// Loaded by the command that runs, so `--help` and the other commands load little.
const load = async () => ({
  ...(await import('../config.ts')),
  ...(await import('../context.ts')),
  ...(await import('../worker/runtime.ts')),
  ...(await import('./client.ts')),
  ...(await import('./import.ts')),
  ...(await import('./loops.ts')),
  ...(await import('./status.ts')),
  ...(await import('./storage.ts')),
});

const print = (value: unknown) => process.stdout.write(JSON.stringify(value, null, 2) + '\n');

export const chainCommands: Command[] = [
  {
    name: 'indexer',
    usage: 'indexer                       follow chain blocks into the read model (only this loop)',
    async run(args) {
      const { loadConfig, createContext, runLoopsUntilSignal, CHAIN_INDEXER_LOOP, chainLoops } = await load();
      parseArgs({ args, options: {}, strict: true });
      const ctx = await createContext(loadConfig());
      if (!ctx.config.chainRestUrl) {
        await ctx.close();
        process.stderr.write('Cannot index: CHAIN_REST_URL is not set\n');
        return 1;
      }
      await runLoopsUntilSignal(ctx, chainLoops, [CHAIN_INDEXER_LOOP], {
        started: 'indexer started',
        stopping: 'indexer stopping: finishing the current block',
      });
    },
  },

  {
    name: 'indexer status',
    usage: 'indexer status                print indexed height, chain height and lag',
    async run(args) {
      const { chainClientFor, indexerLag, readIndexState } = await load();
      parseArgs({ args, options: {}, strict: true });
      const out = await withContext(async (ctx) => {
        const state = await readIndexState(ctx.db);
        const client = chainClientFor(ctx);
        let live: number | undefined;
        let chainError: string | undefined;
        if (client) {
          try {
            live = (await client.latestBlock()).height;
          } catch (err) {
            chainError = (err as Error).message;
          }
        }
        const lag = await indexerLag(ctx.db, live);
        return {
          indexedHeight: lag?.indexedHeight ?? null,
          chainHeight: lag ? lag.chainHeight : (live ?? null),
          lag: lag?.lag ?? null,
          updatedAt: lag?.updatedAt ?? null,
          leaseHolder: state && state.leaseExpiresAt > Date.now() ? state.holder : null,
          ...(client ? {} : { note: 'CHAIN_REST_URL is not set: chain height as last recorded' }),
          ...(chainError ? { chainError } : {}),
        };
      });
      print(out);
    },
  },

  {
    name: 'import-chain',
    usage: 'import-chain FILE             replace the chain read model with a snapshot (JSON) at a height',
    async run(args) {
      const { importSnapshot, parseSnapshot, SnapshotError } = await load();
      const { positionals } = parseArgs({ args, options: {}, strict: true, allowPositionals: true });
      if (positionals.length !== 1) throw new UsageError('import-chain needs exactly one FILE');
      const file = positionals[0];
      let snapshot;
      try {
        snapshot = parseSnapshot(JSON.parse(readFileSync(file, 'utf8')));
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        const why =
          err instanceof SnapshotError ? e.message : e.code ? `cannot read the file (${e.code})` : 'not valid JSON';
        process.stderr.write(`Cannot import ${file}: ${why}\n`);
        return 1;
      }
      const s = snapshot;
      print(await withContext((ctx) => importSnapshot(ctx.db, s, Date.now())));
    },
  },
];
