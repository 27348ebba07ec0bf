// `platform plugin review ID [--undo]`: the operator's review of a plugin document. A plugin the
// owner lists (toPublish) is published (in search, usable by anyone) once reviewed.
import { parseArgs } from 'node:util';
import { registerCommand, UsageError, withContext } from '../cli.ts';
import { ApiError } from '../shared/errors.ts';
// Heavy modules are imported by the command that runs, so `--help` and other commands load little.

registerCommand({
  name: 'plugin review',
  usage: 'plugin review ID [--undo]  mark a plugin document reviewed (published when toPublish); --undo clears it',
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      options: { undo: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length !== 1) throw new UsageError('plugin review needs exactly one plugin id');
    const pluginId = positionals[0]!;
    const { setReviewCompleted } = await import('./documents.ts');
    try {
      const p = await withContext((ctx) => setReviewCompleted(ctx, pluginId, !values.undo));
      process.stdout.write(
        JSON.stringify({ pluginId: p.pluginId, toPublish: p.toPublish, reviewCompleted: p.reviewCompleted }) + '\n',
      );
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      process.stderr.write(`${err.message}\n`);
      return 1;
    }
  },
});
