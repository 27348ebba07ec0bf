// `platform plugin review ID [--undo]`: the operator's review of a plugin document. A plugin the
// owner lists (toPublish) is published (in search, usable by anyone) once reviewed.
// `platform plugin endpoint-cert`: a local CA and certificate to run a custom plugin endpoint on
// the same machine as the service, with the exact settings and command to use them.
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { UsageError, withContext, type Command } from '../shared/command.ts';
import { ApiError } from '../shared/errors.ts';

// Loaded by the command that runs, so `--help` and the other commands load little.
const load = async () => ({
  ...(await import('./documents.ts')),
  ...(await import('./local-tls.ts')),
});

/** A path as a shell word (quoted when it holds anything but safe characters). */
const shellWord = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

const endpointCert: Command = {
  name: 'plugin endpoint-cert',
  usage:
    'plugin endpoint-cert [--dir D] [--host H]…  make a local CA and a certificate for a plugin endpoint on this machine',
  details: [
    '--dir D               where to write ca.pem, endpoint.pem and endpoint.key (default ./plugin-endpoint-tls)',
    '--host H              a name or IP address of the endpoint (repeat; default 127.0.0.1, ::1 and localhost)',
    '--days N              validity in days (default 30, at most 397)',
    '--port P              the port the printed endpoint command uses (default 8443)',
    '--force               replace the files if they exist',
    '--json                print one JSON document instead of the recipe',
    'Prints the two test-only settings the service needs to call the endpoint (EGRESS_EXTRA_CA_FILE,',
    'EGRESS_ALLOW_PRIVATE_CIDRS) and the command that runs examples/plugin-endpoint.mjs with the',
    "certificate. The CA's private key is never written: the CA vouches for this endpoint only.",
  ].join('\n'),
  usesDatabase: false,
  async run(args) {
    const { createLocalTls } = await load();
    const { values } = parseArgs({
      args,
      options: {
        dir: { type: 'string' },
        host: { type: 'string', multiple: true },
        days: { type: 'string' },
        port: { type: 'string' },
        force: { type: 'boolean' },
        json: { type: 'boolean' },
      },
      strict: true,
    });
    const hosts = values.host?.length
      ? [...new Set(values.host.map((h) => h.trim()))]
      : ['127.0.0.1', '::1', 'localhost'];
    for (const h of hosts)
      if (
        !isIP(h) &&
        !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(h)
      )
        throw new UsageError(`--host ${JSON.stringify(h)} is neither an IP address nor a DNS name`);
    const days = values.days === undefined ? 30 : Number(values.days);
    if (!Number.isInteger(days) || days < 1 || days > 397)
      throw new UsageError('--days must be a whole number of days from 1 to 397');
    const port = values.port === undefined ? 8443 : Number(values.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new UsageError('--port must be a port from 1 to 65535');
    const dir = resolve(values.dir ?? 'plugin-endpoint-tls');
    const files = { ca: join(dir, 'ca.pem'), cert: join(dir, 'endpoint.pem'), key: join(dir, 'endpoint.key') };
    const present = Object.values(files).filter((f) => existsSync(f));
    if (present.length && !values.force)
      throw new UsageError(
        `${present.join(', ')} already exist${present.length === 1 ? 's' : ''}: pass --force to replace, or another --dir`,
      );

    const tls = createLocalTls(hosts, days);
    mkdirSync(dir, { recursive: true });
    writeFileSync(files.ca, tls.caPem);
    writeFileSync(files.cert, tls.certPem);
    writeFileSync(files.key, tls.keyPem, { mode: 0o600 });
    chmodSync(files.key, 0o600); // also when --force replaced an older file

    const cidrs = [
      ...new Set(
        hosts.flatMap((h) =>
          isIP(h) === 4
            ? [`${h}/32`]
            : isIP(h) === 6
              ? [`${h}/128`]
              : h === 'localhost'
                ? ['127.0.0.1/32', '::1/128']
                : [],
        ),
      ),
    ];
    const serviceEnv: Record<string, string> = { EGRESS_EXTRA_CA_FILE: files.ca };
    if (cidrs.length) serviceEnv.EGRESS_ALLOW_PRIVATE_CIDRS = cidrs.join(',');
    const first = hosts[0]!;
    const uri = `https://${isIP(first) === 6 ? `[${first}]` : first}:${port}/`;
    const example = fileURLToPath(new URL('../../examples/plugin-endpoint.mjs', import.meta.url));
    const endpointEnv = { TLS_KEY_FILE: files.key, TLS_CERT_FILE: files.cert, PORT: String(port) };
    const endpointCommand = `PLUGIN_SECRET=paste-the-plugin-secret-here ${Object.entries(endpointEnv)
      .map(([k, v]) => `${k}=${shellWord(v)}`)
      .join(' ')} node ${shellWord(example)}`;
    if (values.json) {
      process.stdout.write(
        JSON.stringify(
          { files, hosts, notAfter: tls.notAfter.toISOString(), serviceEnv, uri, endpointEnv, endpointCommand },
          null,
          2,
        ) + '\n',
      );
      return;
    }
    process.stdout.write(
      [
        `Wrote a local CA and a certificate for ${hosts.join(', ')} (valid until ${tls.notAfter.toISOString().slice(0, 10)}):`,
        `  ${files.ca}      the CA certificate (its private key was never stored)`,
        `  ${files.cert}  the endpoint's certificate`,
        `  ${files.key}  the endpoint's private key (readable by you only)`,
        '',
        '1. Start the service with these test-only settings (in .env, or before `npx platform serve`):',
        ...Object.entries(serviceEnv).map(([k, v]) => `   ${k}=${shellWord(v)}`),
        '',
        `2. Create the plugin (console: Plugins, New plugin) with the endpoint URI ${uri}`,
        "   and copy the plugin's secret.",
        '',
        '3. Run the example endpoint with that secret:',
        `   ${endpointCommand}`,
        '',
        'These settings let the service call private addresses and trust this CA: use them on this',
        'machine only. The start banner warns while they are on.',
        '',
      ].join('\n'),
    );
  },
};

export const pluginDocumentCommands: Command[] = [
  {
    name: 'plugin review',
    usage: 'plugin review ID [--undo]  mark a plugin document reviewed (published when toPublish); --undo clears it',
    async run(args) {
      const { setReviewCompleted } = await load();
      const { values, positionals } = parseArgs({
        args,
        options: { undo: { type: 'boolean' } },
        allowPositionals: true,
        strict: true,
      });
      if (positionals.length !== 1) throw new UsageError('plugin review needs exactly one plugin id');
      const pluginId = positionals[0]!;
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
  },
  endpointCert,
];
