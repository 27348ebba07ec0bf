// The operator CLI (`platform <command>`). Output meant for scripts is one JSON document on stdout;
// diagnostics go to stderr. Exit codes: 0 success, 1 failure, 2 usage error.
import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError, describeDatabase, loadConfig, loadDotEnv, redactDatabaseUrl, type Config } from './config.ts';
// The service, the database layer and the API-key storage are imported when a command needs them:
// `--help`, `--version` and usage errors answer without loading the service.
import type { AppContext } from './context.ts';
import { CommandFailure, UsageError, withContext, type Command } from './shared/command.ts';

const print = (value: unknown) => process.stdout.write(JSON.stringify(value, null, 2) + '\n');

async function serve(): Promise<void> {
  const config = loadConfig();
  const [{ createContext }, { buildApp }] = await Promise.all([import('./context.ts'), import('./server.ts')]);
  const ctx = await createContext(config);
  let app: Awaited<ReturnType<typeof buildApp>>;
  try {
    app = await buildApp(ctx);
  } catch (err) {
    // the database and whatever started before the failure would keep the process alive
    await ctx.close().catch(() => undefined);
    throw (
      (config.metricsPort !== null &&
        listenProblem(err, 'METRICS_HOST', config.metricsHost, 'METRICS_PORT', config.metricsPort)) ||
      err
    );
  }
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
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    throw listenProblem(err, 'HOST', config.host, 'PORT', config.port) || err; // the app and context are closed (server.ts)
  }
  printBanner(ctx, app.server.address());
}

/** A listener that cannot start, as a configuration error naming the variable at fault (or null). */
function listenProblem(
  err: unknown,
  hostVariable: string,
  host: string,
  portVariable: string,
  port: number,
): ConfigError | null {
  const e = err as { code?: string; syscall?: string; hostname?: string; port?: number };
  if (e.syscall === 'getaddrinfo' && e.hostname === host)
    return new ConfigError(hostVariable, `"${host}" cannot be resolved (${e.code})`);
  if (e.syscall !== 'listen' || e.port !== port) return null;
  if (e.code === 'EADDRNOTAVAIL')
    return new ConfigError(hostVariable, `${host} is not an address of this machine (EADDRNOTAVAIL)`);
  if (e.code === 'EADDRINUSE') return new ConfigError(portVariable, `${port} is already in use on ${host}`);
  if (e.code === 'EACCES') return new ConfigError(portVariable, `${port} needs more privileges on ${host} (EACCES)`);
  return null;
}

/** How to start the CLI here: `./platform` from a checkout (its path when elsewhere), else the bin itself (a container). */
function cliCommand(): string {
  const script = fileURLToPath(new URL('../platform', import.meta.url));
  if (!existsSync(script)) return 'node bin/platform.js';
  const path = relative(process.cwd(), script);
  return path === 'platform' ? './platform' : script;
}

/** What an operator needs after `serve`: where it listens, the docs, the database, how to get a key. */
function printBanner(ctx: AppContext, address: ReturnType<import('node:net').Server['address']>) {
  const { config } = ctx;
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  const database = describeDatabase(config);
  ctx.log.info({ url, database, dataDir: config.dataDir }, 'platform started');
  if (testOnlyEgressLines(config).length)
    ctx.log.warn(
      { egressAllowPrivateCidrs: config.egressAllowPrivateCidrs, egressExtraCa: config.egressExtraCaPem !== null },
      'test-only egress settings are on',
    );
  process.stderr.write(
    [
      `platform ${VERSION} listening on ${url}`,
      `  API docs:   ${url}/docs  (OpenAPI: ${url}/openapi.json)`,
      `  Database:   ${database}`,
      `  Data dir:   ${config.dataDir}`,
      `  API key:    ${cliCommand()} api-key create --label <name>  (run with the same .env / DATA_DIR / DATABASE_URL as this server)`,
      ...testOnlyEgressLines(config),
      '',
    ].join('\n'),
  );
}

/** The banner's loud warning while the egress module's test-only settings are on (empty otherwise). */
function testOnlyEgressLines(config: Pick<Config, 'egressExtraCaPem' | 'egressAllowPrivateCidrs'>): string[] {
  const on: string[] = [];
  if (config.egressAllowPrivateCidrs.length)
    on.push(
      `!!   EGRESS_ALLOW_PRIVATE_CIDRS=${config.egressAllowPrivateCidrs.join(',')}: outbound calls (plugins, webhooks) may reach these private addresses`,
    );
  if (config.egressExtraCaPem)
    on.push('!!   EGRESS_EXTRA_CA_FILE: outbound calls also trust the certificate authority in that file');
  if (!on.length) return [];
  return [
    '',
    '!! TEST-ONLY EGRESS SETTINGS ARE ON. Use them on one machine for development, never in production:',
    ...on,
  ];
}

const commands: Command[] = [
  {
    name: 'serve',
    usage: 'serve                         start the HTTP service (and the background loops unless RUN_WORKER=false)',
    details:
      'Configuration comes from the environment and an optional .env in the working directory (docs/operations.md).',
    usesDatabase: false, // names its database in the start banner and log
    async run(args) {
      parseArgs({ args, options: {}, strict: true });
      await serve();
    },
  },
  {
    name: 'migrate',
    usage: 'migrate                       apply pending database migrations',
    async run(args) {
      parseArgs({ args, options: {}, strict: true });
      const config = loadConfig();
      const [{ openStorage }, { migrateToLatest }] = await Promise.all([
        import('./db/index.ts'),
        import('./db/migrations/index.ts'),
      ]);
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
    usage: 'api-key create --label L [--trusted-backend]  create an API key (printed once)',
    details:
      '--trusted-backend: the key belongs to a backend of yours that calls for many end users from one address and names each\n' +
      "one's IP in the x-end-user-ip header; the guess throttle then limits each end user instead of the backend as a whole\n" +
      '(docs/security.md, "Guess throttle"). Without it the header is ignored.',
    async run(args) {
      const { values } = parseArgs({
        args,
        options: { label: { type: 'string' }, 'trusted-backend': { type: 'boolean' } },
        strict: true,
      });
      if (!values.label?.trim()) throw new UsageError('api-key create needs --label <text>');
      const label = values.label.trim();
      const trustedBackend = values['trusted-backend'] === true;
      const { createApiKey } = await import('./api-keys/storage.ts');
      print(await withContext((ctx) => createApiKey(ctx.db, label, ctx.clock.now(), null, { trustedBackend })));
    },
  },
  {
    name: 'api-key list',
    usage: 'api-key list                  list API keys (never their values)',
    async run(args) {
      parseArgs({ args, options: {}, strict: true });
      const { listApiKeys } = await import('./api-keys/storage.ts');
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
      const { revokeApiKey } = await import('./api-keys/storage.ts');
      const found = await withContext((ctx) => revokeApiKey(ctx.db, id, ctx.clock.now()));
      if (!found) {
        process.stderr.write(`No API key with id ${id}\n`);
        return 1;
      }
      print({ id, revoked: true });
    },
  },
];

const VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

function usage(): string {
  return (
    [
      'Usage: platform <command> [options]',
      '',
      ...commands.map((c) => '  ' + c.usage),
      '',
      "Every command takes --help. 'platform --version' prints the version.",
    ].join('\n') + '\n'
  );
}

function commandHelp(c: Command): string {
  return `Usage: platform ${c.usage}\n${c.details ? `\n${c.details.replace(/^/gm, '  ')}\n` : ''}`;
}

/** `platform app`: the subcommands of a group (the first word of multi-word commands). */
function groupHelp(group: string): string | null {
  const members = commands.filter((c) => c.name.startsWith(group + ' '));
  if (members.length === 0) return null;
  return (
    [
      `Usage: platform ${group} <command> [options]`,
      '',
      ...members.map((c) => '  ' + c.usage),
      '',
      `'platform ${group} <command> --help' describes one.`,
    ].join('\n') + '\n'
  );
}

const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  '28P01',
  '28000',
  '3D000',
]);

/** DATA_DIR that cannot be created or used, in one line naming it (config.ts reports the fs error itself). */
function dataDirProblem(err: unknown): string | null {
  const e = err as { code?: string; path?: string };
  const dataDir = resolve(process.env.DATA_DIR?.trim() || './data');
  if (!e.code || !e.path || (e.path !== dataDir && !e.path.startsWith(dataDir + sep))) return null;
  if ((e.code === 'EEXIST' && e.path === dataDir) || e.code === 'ENOTDIR')
    return `Invalid configuration: DATA_DIR is not a directory: ${dataDir}`;
  return `Invalid configuration: DATA_DIR cannot be used (${e.code}): ${e.path}`;
}

/** A PostgreSQL connection failure, in one line naming DATABASE_URL (never its password). */
function databaseProblem(err: unknown): string | null {
  const url = process.env.DATABASE_URL?.trim();
  if (!url) return null;
  const e = err as { code?: string; message?: string; errors?: Array<{ code?: string; message?: string }> };
  const code = e.code ?? e.errors?.[0]?.code;
  if (!code || !CONNECTION_ERRORS.has(code)) return null;
  const reason = e.message || e.errors?.map((x) => x.message).join('; ') || code;
  return `Cannot connect to the database named by DATABASE_URL (${redactDatabaseUrl(url)}): ${reason}`;
}

export async function main(argv: string[]): Promise<number> {
  if (argv[0] === '--version' || argv[0] === '-V') {
    process.stdout.write(VERSION + '\n');
    return 0;
  }
  // the capabilities' commands (`app create`, `worker`, `import-pools`, …) follow the CLI's own
  // (added once: tests call main() many times in one process)
  const { capabilities, loadLoops } = await import('./capabilities.ts');
  for (const c of capabilities)
    for (const command of c.commands ?? []) if (!commands.includes(command)) commands.push(command);
  const help = argv.includes('--help') || argv.includes('-h');
  if (argv.length === 0 || argv[0] === 'help' || (help && (argv[0] === '--help' || argv[0] === '-h'))) {
    process.stdout.write(usage());
    return argv.length === 0 ? 2 : 0;
  }
  // longest command name matching the leading words wins ("api-key create" before "api-key")
  const match = commands
    .filter((c) => c.name.split(' ').every((w, i) => argv[i] === w))
    .sort((a, b) => b.name.length - a.name.length)[0];
  if (!match) {
    const group = groupHelp(argv[0]);
    if (group && (argv.length === 1 || (argv.length === 2 && help))) {
      process.stdout.write(group);
      return help ? 0 : 2;
    }
    const where = group ? `'platform ${argv[0]}' lists its commands` : `'platform --help' lists the commands`;
    process.stderr.write(`Unknown command: ${argv.join(' ')} (${where})\n`);
    return 2;
  }
  if (help) {
    process.stdout.write(commandHelp(match));
    return 0;
  }
  try {
    loadDotEnv();
    if (match.usesDatabase !== false) process.stderr.write(`Database: ${describeDatabase(loadConfig())}\n`);
    const code = await match.run(argv.slice(match.name.split(' ').length), { loops: loadLoops });
    return code ?? 0;
  } catch (err) {
    if (err instanceof ConfigError || err instanceof CommandFailure) {
      process.stderr.write(err.message + '\n');
      return 1;
    }
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      // UsageError texts name their command already; parseArgs' do not
      const text = err instanceof UsageError ? err.message : `platform ${match.name}: ${(err as Error).message}`;
      process.stderr.write(`${text} ('platform ${match.name} --help' shows the usage)\n`);
      return 2;
    }
    const unreachable = dataDirProblem(err) ?? databaseProblem(err);
    if (unreachable) {
      process.stderr.write(unreachable + '\n');
      return 1;
    }
    process.stderr.write(`Error: ${(err as Error).message}\n`);
    return 1;
  }
}
