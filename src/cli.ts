// The operator CLI (`platform <command>`). Output meant for scripts is one JSON document on stdout;
// diagnostics go to stderr. Exit codes: 0 success, 1 failure, 2 usage error.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.ts';
import { createContext, type AppContext } from './context.ts';
import { migrateToLatest } from './db/migrations/index.ts';
import { openStorage } from './db/index.ts';
import { buildApp } from './server.ts';
import { createApiKey, listApiKeys, revokeApiKey } from './api-keys/storage.ts';

export class UsageError extends Error {}

export interface Command {
  /** e.g. `api-key create`. */
  name: string;
  usage: string;
  run(args: string[]): Promise<number | void>;
}

const print = (value: unknown) => process.stdout.write(JSON.stringify(value, null, 2) + '\n');

/** Opens the database (migrated) for a one-shot command and closes it afterwards. */
export async function withContext<T>(fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // one-shot: no checkpointer thread; closing the connection checkpoints the WAL
  const ctx = await createContext({ ...config, logLevel: 'warn' }, { backgroundCheckpoints: false });
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}

async function serve(): Promise<void> {
  const config = loadConfig();
  const ctx = await createContext(config);
  const app = await buildApp(ctx);
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    ctx.log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const timer = setTimeout(() => {
      ctx.log.error('shutdown took longer than 30 s; exiting');
      process.exit(1);
    }, 30_000);
    timer.unref();
    try {
      await app.close();
      await ctx.close();
      process.exit(0);
    } catch (err) {
      ctx.log.error({ err }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  await app.listen({ port: config.port, host: config.host });
}

const commands: Command[] = [
  { name: 'serve', usage: 'serve                         start the HTTP service', run: serve },
  {
    name: 'migrate',
    usage: 'migrate                       apply pending database migrations',
    async run() {
      const config = loadConfig();
      const storage = await openStorage(config, { backgroundCheckpoints: false });
      try {
        print({ applied: await migrateToLatest(storage.db, storage.schema) });
      } finally {
        await storage.close();
      }
    },
  },
  {
    name: 'api-key create',
    usage: 'api-key create --label L      create an API key (printed once)',
    async run(args) {
      const { values } = parseArgs({ args, options: { label: { type: 'string' } }, strict: true });
      if (!values.label?.trim()) throw new UsageError('api-key create needs --label <text>');
      const label = values.label.trim();
      print(await withContext((ctx) => createApiKey(ctx.db, label, ctx.clock.now())));
    },
  },
  {
    name: 'api-key list',
    usage: 'api-key list                  list API keys (never their values)',
    async run(args) {
      parseArgs({ args, options: {}, strict: true });
      print(await withContext((ctx) => listApiKeys(ctx.db)));
    },
  },
  {
    name: 'api-key revoke',
    usage: 'api-key revoke ID             revoke an API key',
    async run(args) {
      const { positionals } = parseArgs({ args, options: {}, strict: true, allowPositionals: true });
      if (positionals.length !== 1) throw new UsageError('api-key revoke needs exactly one key id');
      const id = positionals[0];
      const found = await withContext((ctx) => revokeApiKey(ctx.db, id, ctx.clock.now()));
      if (!found) {
        process.stderr.write(`No API key with id ${id}\n`);
        return 1;
      }
      print({ id, revoked: true });
    },
  },
];

/** Capabilities add their commands here (e.g. `app create`, `worker`, `import-pools`). */
export function registerCommand(command: Command): void {
  commands.push(command);
}

function usage(): string {
  return ['Usage: platform <command>', '', ...commands.map((c) => '  ' + c.usage)].join('\n') + '\n';
}

export async function main(argv: string[]): Promise<number> {
  await import('./commands.ts');
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help') {
    process.stdout.write(usage());
    return argv.length === 0 ? 2 : 0;
  }
  // longest command name matching the leading words wins ("api-key create" before "api-key")
  const match = commands
    .filter((c) => c.name.split(' ').every((w, i) => argv[i] === w))
    .sort((a, b) => b.name.length - a.name.length)[0];
  if (!match) {
    process.stderr.write(`Unknown command: ${argv.join(' ')}\n\n${usage()}`);
    return 2;
  }
  try {
    const code = await match.run(argv.slice(match.name.split(' ').length));
    return code ?? 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(err.message + '\n');
      return 1;
    }
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(err as Error).message}\n\n${usage()}`);
      return 2;
    }
    process.stderr.write(`Error: ${(err as Error).message}\n`);
    return 1;
  }
}
