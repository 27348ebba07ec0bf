// The runnable example endpoint (examples/plugin-endpoint.mjs), run as its own process over
// HTTPS with the test certificate: it accepts what the service signs, refuses tampered, unsigned
// and stale requests, and acknowledges status webhooks delivered by the service's worker pass.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { ROOT } from '../helpers/cli.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { testCertificates } from '../helpers/https-endpoint.ts';
import { Egress } from '../../src/egress/index.ts';
import { signRequest } from '../../src/egress/signature.ts';
import { deliverDue } from '../../src/webhooks/deliver.ts';
import { egressTestEnv, enqueue, insertPlugin, newDelivery } from './helpers.ts';

describe('examples/plugin-endpoint.mjs', () => {
  let t: TestApp;
  let child: ChildProcess;
  let output = '';
  let url = '';
  let secret = '';
  let pluginId = '';
  const egress = new Egress({ allowPrivateCidrs: ['127.0.0.1/32'], extraCaPem: testCertificates().caPem });

  before(async () => {
    t = await startApp({ env: { ...egressTestEnv(), RUN_WORKER: 'false' } });
    ({ pluginId, secret } = await insertPlugin(t, 'bb1owner'));
    const dir = mkdtempSync(join(tmpdir(), 'plugin-endpoint-'));
    const certs = testCertificates();
    writeFileSync(join(dir, 'key.pem'), certs.keyPem);
    writeFileSync(join(dir, 'cert.pem'), certs.certPem);
    child = spawn(process.execPath, [join(ROOT, 'examples', 'plugin-endpoint.mjs')], {
      env: {
        PATH: process.env.PATH,
        PLUGIN_SECRET: secret,
        TLS_KEY_FILE: join(dir, 'key.pem'),
        TLS_CERT_FILE: join(dir, 'cert.pem'),
        PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    url = await new Promise<string>((resolve, reject) => {
      const onData = (d: Buffer) => {
        output += d;
        const m = /listening on (https:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (m) resolve(`${m[1]}/plugin`);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('close', (code) => reject(new Error(`example exited (${code}):\n${output}`)));
    });
  });
  after(async () => {
    child.kill('SIGTERM');
    await egress.close();
    await t.close();
  });

  async function post(
    body: Record<string, unknown>,
    opts: { sign?: boolean; timestamp?: number; sendBody?: string } = {},
  ) {
    const raw = JSON.stringify(body);
    const headers = opts.sign === false ? {} : signRequest(secret, raw, opts.timestamp ?? Date.now());
    const res = await egress.request({
      url,
      headers: { ...headers, 'content-type': 'application/json' },
      body: opts.sendBody ?? raw,
    });
    return { status: res.status, json: JSON.parse(res.body.toString()) };
  }

  const call = (signedIn: boolean) => ({
    pluginSecret: secret,
    claimId: 'c1',
    claimAttemptId: 'a1',
    instanceId: 'p',
    _isSimulation: false,
    _attemptStatus: 'executing',
    isAddressSignedIn: signedIn,
  });

  test('a signed call passes (200 {}) or fails with a message, as the plugin decides', async () => {
    assert.deepEqual(await post(call(true)), { status: 200, json: {} });
    assert.deepEqual(await post({ ...call(true), _isSimulation: true, claimAttemptId: '' }), { status: 200, json: {} });
    assert.deepEqual(await post(call(false)), { status: 403, json: { message: 'Sign in with your wallet to claim.' } });
  });

  test('unsigned, tampered and stale requests are refused', async () => {
    assert.deepEqual(await post(call(true), { sign: false }), {
      status: 401,
      json: { message: 'unsupported signature version' },
    });
    assert.deepEqual(await post(call(false), { sendBody: JSON.stringify(call(true)) }), {
      status: 401,
      json: { message: 'bad signature' },
    });
    assert.deepEqual(await post(call(true), { timestamp: Date.now() - 6 * 60_000 }), {
      status: 401,
      json: { message: 'stale timestamp' },
    });
    assert.deepEqual(await post(call(true), { timestamp: Date.now() + 6 * 60_000 }), {
      status: 401,
      json: { message: 'stale timestamp' },
    });
  });

  test('a status webhook delivered by the service is verified and acknowledged once per attempt', async () => {
    const d = newDelivery(pluginId, url);
    await enqueue(t, [d]);
    assert.deepEqual(await deliverDue(t.ctx), { taken: 1, delivered: 1, failed: 0 });
    // the same outcome again (a retry): acknowledged, recorded once
    await t.ctx.db
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', next_try_at: t.ctx.clock.now() })
      .where('claim_attempt_id', '=', d.claimAttemptId)
      .execute();
    assert.deepEqual(await deliverDue(t.ctx), { taken: 1, delivered: 1, failed: 0 });
    await new Promise((r) => setTimeout(r, 100));
    const outcomes = output.split('\n').filter((l) => l.includes(d.claimAttemptId));
    assert.deepEqual(
      outcomes.map((l) => JSON.parse(l)),
      [{ outcome: 'success', claimId: 'claim-1', claimAttemptId: d.claimAttemptId }],
    );
  });
});
