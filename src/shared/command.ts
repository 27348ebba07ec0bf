// What a CLI command is, and the pieces a capability's commands share with the CLI (cli.ts). Kept
// apart from cli.ts so that a capability's commands do not import the CLI that lists them.
import { loadConfig } from '../config.ts';
import type { AppContext } from '../context.ts';
import type { BackgroundLoop } from '../worker/runtime.ts';

export class UsageError extends Error {}

/** A failure that is not a usage error (an unknown id): its one line on stderr, exit 1. */
export class CommandFailure extends Error {}

/** What the CLI hands a command besides its arguments. */
export interface CommandEnv {
  /** Loads every capability's background loops (`platform worker` runs them). */
  loops: () => Promise<readonly BackgroundLoop[]>;
}

export interface Command {
  /** e.g. `api-key create`. */
  name: string;
  /** One line: the synopsis, then what it does (the command list shows these). */
  usage: string;
  /** More lines for `--help`: options, examples. */
  details?: string;
  /** Whether the command opens the database (then the CLI names it on stderr first); default true. */
  usesDatabase?: boolean;
  run(args: string[], env: CommandEnv): Promise<number | undefined>;
}

/** Opens the database (migrated) for a one-shot command and closes it afterwards. */
export async function withContext<T>(fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // The service, the database layer and the API-key storage are imported when a command needs them.
  const { createContext, createLogger } = await import('../context.ts');
  // one-shot: no checkpointer thread; closing the connection checkpoints the WAL;
  // warnings and audit lines go to stderr, so stdout stays one JSON document
  const ctx = await createContext(
    { ...config, logLevel: 'warn' },
    { backgroundCheckpoints: false, log: createLogger({ logLevel: 'warn' }, 2) },
  );
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}
