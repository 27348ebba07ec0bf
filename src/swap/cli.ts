// `platform import-pools FILE`: loads pools (the chain's `/osmosis/gamm/v1beta1/pools` JSON) into
// the database. Running services notice the new import revision within
// SWAP_IMPORT_POLL_INTERVAL_MS and switch to it.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { UsageError, withContext, type Command } from '../shared/command.ts';

// Loaded by the command that runs, so `--help` and the other commands load little.
const load = async () => ({
  ...(await import('./dec.ts')),
  ...(await import('./pools.ts')),
  ...(await import('./storage.ts')),
});

export const swapCommands: Command[] = [
  {
    name: 'import-pools',
    usage: 'import-pools FILE             replace the swap pools with FILE (chain REST pools JSON)',
    async run(args) {
      const { formatDec, PoolFormatError, parsePoolsDocument, replaceImportedPools } = await load();
      const { positionals } = parseArgs({ args, options: {}, strict: true, allowPositionals: true });
      if (positionals.length !== 1) throw new UsageError('import-pools needs exactly one FILE');
      const file = positionals[0];
      let doc: unknown;
      try {
        doc = JSON.parse(readFileSync(file, 'utf8'));
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        process.stderr.write(
          `Cannot import ${file}: ${e.code ? `cannot read the file (${e.code})` : 'not valid JSON'}\n`,
        );
        return 1;
      }
      let parsed;
      try {
        parsed = parsePoolsDocument(doc);
      } catch (err) {
        if (!(err instanceof PoolFormatError)) throw err;
        process.stderr.write(`Cannot import ${file}: ${err.message}\n`);
        return 1;
      }
      const { pools, skipped, takerFees } = parsed;
      const result = await withContext(async (ctx) => {
        if (ctx.config.chainRestUrl) {
          process.stderr.write(
            'Note: CHAIN_REST_URL is set; services configured with it read pools from the chain and ignore imported pools.\n',
          );
        }
        return replaceImportedPools(ctx.db, pools, takerFees, ctx.clock.now());
      });
      process.stdout.write(
        JSON.stringify(
          {
            imported: pools.length,
            skipped,
            revision: result,
            defaultTakerFee: formatDec(takerFees.defaultFee),
            pairTakerFees: takerFees.pairs.size,
          },
          null,
          2,
        ) + '\n',
      );
    },
  },
];
