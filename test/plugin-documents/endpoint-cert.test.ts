// `platform plugin endpoint-cert`: a local CA and an endpoint certificate made without openssl,
// with the exact settings and command it prints. Followed as printed, the example endpoint serves
// HTTPS with the certificate and the service's egress (configured from the printed variables)
// reaches it and gets the plugin's answer; without the CA it refuses the endpoint. The start
// banner says loudly that these test-only settings are on.
// test-run: once (certificates, egress TLS and the start banner: no storage behaviour; scripts/test.mjs)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliJson, ROOT, runCli } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/app.ts';
import { freePort, startService } from '../helpers/process.ts';
import { loadConfig } from '../../src/config.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';
import { Egress } from '../../src/egress/index.ts';
import { signRequest } from '../../src/egress/signature.ts';

/** A subprocess limit no slow machine reaches: the CLI is judged by its answer, not its speed. */
const CLI_LIMIT_MS = PATIENCE_MS;

describe('platform plugin endpoint-cert', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'endpoint-cert-')), 'tls');
  let port = 0;
  let out: {
    files: { ca: string; cert: string; key: string };
    hosts: string[];
    notAfter: string;
    serviceEnv: Record<string, string>;
    uri: string;
    endpointEnv: Record<string, string>;
    endpointCommand: string;
  };
  let child: ChildProcess | undefined;
  const secret = randomBytes(32).toString('hex');

  before(async () => {
    port = await freePort();
    out = cliJson(
      await runCli(['plugin', 'endpoint-cert', '--dir', dir, '--port', String(port), '--json'], {}, CLI_LIMIT_MS),
    );
  });
  after(() => {
    child?.kill('SIGTERM');
    rmSync(join(dir, '..'), { recursive: true, force: true });
  });

  test('writes the CA, the certificate and a private key only its owner reads; prints the settings and the command', () => {
    const files = { ca: join(dir, 'ca.pem'), cert: join(dir, 'endpoint.pem'), key: join(dir, 'endpoint.key') };
    assert.deepEqual(out.files, files);
    assert.equal(statSync(files.key).mode & 0o777, 0o600);
    assert.deepEqual(out.hosts, ['127.0.0.1', '::1', 'localhost']);
    assert.deepEqual(out.serviceEnv, {
      EGRESS_EXTRA_CA_FILE: files.ca,
      EGRESS_ALLOW_PRIVATE_CIDRS: '127.0.0.1/32,::1/128',
    });
    assert.equal(out.uri, `https://127.0.0.1:${port}/`);
    assert.deepEqual(out.endpointEnv, { TLS_KEY_FILE: files.key, TLS_CERT_FILE: files.cert, PORT: String(port) });
    assert.equal(
      out.endpointCommand,
      `PLUGIN_SECRET=paste-the-plugin-secret-here TLS_KEY_FILE=${files.key} TLS_CERT_FILE=${files.cert} PORT=${port} node ${join(ROOT, 'examples', 'plugin-endpoint.mjs')}`,
    );
    const ca = new X509Certificate(readFileSync(files.ca));
    const cert = new X509Certificate(readFileSync(files.cert));
    assert.equal(ca.ca, true);
    assert.equal(cert.ca, false);
    assert.equal(cert.checkIssued(ca), true);
    assert.equal(cert.verify(ca.publicKey), true);
    assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(cert.checkIP('::1'), '::1');
    assert.equal(cert.checkHost('localhost'), 'localhost');
    assert.equal(new Date(cert.validTo).toISOString().slice(0, 10), out.notAfter.slice(0, 10));
    // the CA's private key is nowhere
    assert.equal(existsSync(join(dir, 'ca.key')), false);
  });

  test('the example endpoint, run as printed, is reached by the service with the printed settings (and not without the CA)', async () => {
    child = spawn(process.execPath, [join(ROOT, 'examples', 'plugin-endpoint.mjs')], {
      env: { PATH: process.env.PATH, PLUGIN_SECRET: secret, ...out.endpointEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (d: Buffer) => {
        output += d;
        if (output.includes(`listening on https://127.0.0.1:${port}`)) resolve();
      };
      child!.stdout!.on('data', onData);
      child!.stderr!.on('data', onData);
      child!.once('close', (code) => reject(new Error(`example exited (${code}):\n${output}`)));
    });
    const config = loadConfig({ ...createTestDatabase().env, ...out.serviceEnv });
    const call = JSON.stringify({ claimId: 'c1', instanceId: 'p', _isSimulation: true, isAddressSignedIn: true });
    const send = (egress: Egress) =>
      egress.request({
        url: out.uri,
        headers: { ...signRequest(secret, call, Date.now()), 'content-type': 'application/json' },
        body: call,
      });
    const trusted = new Egress({
      allowPrivateCidrs: config.egressAllowPrivateCidrs,
      extraCaPem: config.egressExtraCaPem,
    });
    const untrusted = new Egress({ allowPrivateCidrs: config.egressAllowPrivateCidrs });
    try {
      const res = await send(trusted);
      assert.equal(res.status, 200);
      assert.deepEqual(JSON.parse(res.body.toString()), {});
      await assert.rejects(send(untrusted));
    } finally {
      await trusted.close();
      await untrusted.close();
    }
  });

  test('it does not overwrite a certificate without --force', async () => {
    const r = await runCli(['plugin', 'endpoint-cert', '--dir', dir], {}, CLI_LIMIT_MS);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /already exist: pass --force to replace, or another --dir/);
    assert.equal(r.stdout, '');
  });

  test('the start banner says loudly that the test-only egress settings are on', async () => {
    const db = createTestDatabase();
    const service = await startService({ ...db.env, ...out.serviceEnv }, { timeoutMs: CLI_LIMIT_MS });
    try {
      const banner = service.stderr();
      assert.ok(
        banner.includes(
          '!! TEST-ONLY EGRESS SETTINGS ARE ON. Use them on one machine for development, never in production:',
        ),
        banner,
      );
      assert.ok(
        banner.includes(
          '!!   EGRESS_ALLOW_PRIVATE_CIDRS=127.0.0.1/32,::1/128: outbound calls (plugins, webhooks) may reach these private addresses',
        ),
      );
      assert.ok(
        banner.includes('!!   EGRESS_EXTRA_CA_FILE: outbound calls also trust the certificate authority in that file'),
      );
    } finally {
      await service.stop();
      await db.drop();
    }
  });
});
