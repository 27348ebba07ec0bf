// The egress client against real local HTTPS endpoints (a test CA): the test-only configuration
// (extra CA file, private-CIDR allow-list) reaches a loopback endpoint, the default configuration
// refuses the same one, and the exchange rules hold: DNS pinning with SNI and Host of the name,
// no redirects, the deadline, the body cap, keep-alive reuse.
// test-run: once (the egress client: no storage behaviour; scripts/test.mjs)
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { createServer } from 'node:https';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startHttpsEndpoint, testCertificates, type HttpsEndpoint } from '../helpers/https-endpoint.ts';
import { Egress, EgressError, egressFor } from '../../src/egress/index.ts';
import { loadConfig, ConfigError } from '../../src/config.ts';

const egressError = (kind: EgressError['kind'], reason: RegExp) => (err: unknown) => {
  assert.ok(err instanceof EgressError, String(err));
  assert.equal(err.kind, kind, err.reason);
  assert.match(err.reason, reason);
  return true;
};

describe('egress client', () => {
  let endpoint: HttpsEndpoint;
  const testEnv = () => ({
    EGRESS_EXTRA_CA_FILE: testCertificates().caFile,
    EGRESS_ALLOW_PRIVATE_CIDRS: '127.0.0.1/32',
  });

  before(async () => {
    endpoint = await startHttpsEndpoint();
  });
  const opened = useApp({ env: testEnv() });
  const defaults = useApp();
  after(() => endpoint.close());

  test('the test-only configuration reaches a loopback endpoint; the exact body arrives', async () => {
    endpoint.respond(() => ({ status: 200, body: { ok: true } }));
    const body = '{"b":2,"a":"é"}';
    const res = await egressFor(opened.ctx).request({
      url: `${endpoint.url}?q=1`,
      body,
      headers: { 'content-type': 'application/json', 'x-extra': 'v' },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body.toString()), { ok: true });
    const got = endpoint.requests.at(-1)!;
    assert.equal(got.method, 'POST');
    assert.equal(got.path, '/hook?q=1');
    assert.deepEqual(got.rawBody, Buffer.from(body));
    assert.equal(got.headers['x-extra'], 'v');
    assert.equal(got.headers.host, `127.0.0.1:${endpoint.port}`);
  });

  test('the default configuration refuses the same endpoint', async () => {
    const before = endpoint.requests.length;
    await assert.rejects(
      egressFor(defaults.ctx).request({ url: endpoint.url, body: '{}' }),
      egressError('refused', /127\.0\.0\.1 is a loopback address; only public addresses may be called/),
    );
    assert.equal(endpoint.requests.length, before);
  });

  test('the allow-list without the extra CA: the test certificate is not trusted', async () => {
    const e = new Egress({ allowPrivateCidrs: ['127.0.0.1/32'] });
    try {
      await assert.rejects(
        e.request({ url: endpoint.url }),
        egressError('network', /the call failed \(.*(certificate|CERT)/i),
      );
    } finally {
      await e.close();
    }
  });

  test('non-2xx statuses are answers, not errors', async () => {
    endpoint.respond(() => ({ status: 503, body: { message: 'down for maintenance' } }));
    const res = await egressFor(opened.ctx).request({ url: endpoint.url, body: '{}' });
    assert.equal(res.status, 503);
    assert.deepEqual(JSON.parse(res.body.toString()), { message: 'down for maintenance' });
  });

  test('redirects are not followed: to a private address, or anywhere', async () => {
    for (const location of [
      'https://169.254.169.254/latest/meta-data/',
      'https://127.0.0.1/admin',
      'https://plugin.example.com/next',
    ]) {
      endpoint.respond(() => ({ status: 302, headers: { location } }));
      const before = endpoint.requests.length;
      await assert.rejects(
        egressFor(opened.ctx).request({ url: endpoint.url, body: '{}' }),
        egressError(
          'redirect',
          new RegExp(
            `answered 302 \\(a redirect to ${location.replace(/[.?/]/g, '\\$&')}\\); redirects are not followed`,
          ),
        ),
      );
      assert.equal(endpoint.requests.length, before + 1, 'exactly the one request, no follow-up');
    }
  });

  test('the deadline covers the whole exchange', async () => {
    // a connection is opened first (on a loaded machine the handshake alone can take 200 ms, and a
    // call whose connection was not ready in time is "not sent", client-transport.test.ts)
    endpoint.respond((req) => ({ status: 200, body: {}, delayMs: req.path.endsWith('?slow') ? 3000 : 0 }));
    assert.equal((await egressFor(opened.ctx).request({ url: endpoint.url, body: '{}' })).status, 200);
    await assert.rejects(
      egressFor(opened.ctx).request({ url: `${endpoint.url}?slow`, body: '{}', timeoutMs: 200 }),
      egressError('timeout', /^no complete response within 200 ms$/),
    );
  });

  test('a declared oversized body is refused before reading', async () => {
    endpoint.respond(() => ({ status: 200, body: Buffer.alloc(2 * 1024 * 1024, 0x61) }));
    await assert.rejects(
      egressFor(opened.ctx).request({ url: endpoint.url, body: '{}' }),
      egressError('too-large', /the response body exceeds 1048576 bytes/),
    );
    endpoint.respond(() => ({ status: 200, body: Buffer.alloc(1024, 0x61) }));
    await assert.rejects(
      egressFor(opened.ctx).request({ url: endpoint.url, body: '{}', maxResponseBytes: 1000 }),
      egressError('too-large', /exceeds 1000 bytes/),
    );
    const ok = await egressFor(opened.ctx).request({ url: endpoint.url, body: '{}', maxResponseBytes: 1024 });
    assert.equal(ok.body.length, 1024);
  });

  test('an endless streamed body is cut at the cap', async () => {
    const certs = testCertificates();
    let chunksSent = 0;
    let closed = false;
    const server = createServer({ key: certs.keyPem, cert: certs.certPem }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }); // chunked: no length declared
      const chunk = Buffer.alloc(64 * 1024, 0x62);
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) chunksSent++;
        if (!res.destroyed) res.once('drain', pump);
      };
      res.on('close', () => (closed = true));
      pump();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      await assert.rejects(
        egressFor(opened.ctx).request({ url: `https://127.0.0.1:${port}/stream` }),
        egressError('too-large', /exceeds 1048576 bytes/),
      );
      for (let i = 0; i < 100 && !closed; i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(closed, 'the connection was aborted, not drained');
      assert.ok(chunksSent < 1000, `stopped reading early (${chunksSent} chunks written)`);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  test('keep-alive: many calls to one endpoint pay about one TLS handshake', async () => {
    endpoint.respond(() => ({ status: 200, body: {} }));
    const e = new Egress({ allowPrivateCidrs: ['127.0.0.1/32'], extraCaPem: testCertificates().caPem });
    const serverBefore = endpoint.handshakes();
    try {
      for (let i = 0; i < 50; i++) assert.equal((await e.request({ url: endpoint.url, body: '{}' })).status, 200);
      assert.deepEqual(e.stats(), { requests: 50, tlsHandshakes: 1, openPools: 1 });
      assert.equal(endpoint.handshakes() - serverBefore, 1);
      // bursts open a few more connections (up to the pool size), then reuse them
      await Promise.all(Array.from({ length: 20 }, () => e.request({ url: endpoint.url, body: '{}' })));
      const afterBurst = e.stats().tlsHandshakes;
      await Promise.all(Array.from({ length: 20 }, () => e.request({ url: endpoint.url, body: '{}' })));
      assert.equal(e.stats().tlsHandshakes, afterBurst, 'a second burst reuses the open connections');
      assert.equal(e.stats().requests, 90);
    } finally {
      await e.close();
    }
  });

  test('DNS pinning: the connection goes to the checked address with the name as SNI and Host; a later private answer is refused', async () => {
    endpoint.respond(() => ({ status: 200, body: {} }));
    const answers = [['127.0.0.1'], ['10.0.0.1']];
    const asked: string[] = [];
    const e = new Egress({
      allowPrivateCidrs: ['127.0.0.1/32'],
      extraCaPem: testCertificates().caPem,
      resolve: async (host) => {
        asked.push(host);
        return answers[Math.min(asked.length - 1, answers.length - 1)]!;
      },
    });
    try {
      // the certificate names localhost: TLS verifies only if SNI/verification used the name
      const res = await e.request({ url: `https://localhost:${endpoint.port}/pinned`, body: '{}' });
      assert.equal(res.status, 200);
      assert.equal(endpoint.requests.at(-1)!.headers.host, `localhost:${endpoint.port}`);
      assert.deepEqual(asked, ['localhost'], 'resolved once; the connection did not resolve again');
      const before = endpoint.requests.length;
      await assert.rejects(
        e.request({ url: `https://localhost:${endpoint.port}/pinned`, body: '{}' }),
        egressError('refused', /localhost resolves to 10\.0\.0\.1 is a private address/),
      );
      assert.equal(endpoint.requests.length, before);
    } finally {
      await e.close();
    }
  });

  test('a trailing-dot name connects with the bare name for SNI and certificate checks', async () => {
    endpoint.respond(() => ({ status: 200, body: {} }));
    const e = new Egress({
      allowPrivateCidrs: ['127.0.0.1/32'],
      extraCaPem: testCertificates().caPem,
      resolve: async () => ['127.0.0.1'],
    });
    try {
      assert.equal((await e.request({ url: `https://LOCALHOST.:${endpoint.port}/dot`, body: '{}' })).status, 200);
    } finally {
      await e.close();
    }
  });

  test('framing headers and Host cannot be set by the caller', async () => {
    for (const name of ['Host', 'content-length', 'Transfer-Encoding', 'connection']) {
      await assert.rejects(
        egressFor(opened.ctx).request({ url: endpoint.url, headers: { [name]: 'x' } }),
        egressError('invalid-request', new RegExp(`the header "${name}" may not be set`)),
      );
    }
    await assert.rejects(
      egressFor(opened.ctx).request({ url: endpoint.url, headers: { 'x-a': 'a\r\nb' } }),
      egressError('invalid-request', /invalid value/),
    );
  });

  test('configuration: bad EGRESS_* values name the variable', () => {
    const dir = join(tmpdir(), `egress-config-${process.pid}`);
    const notPem = `${dir}-not.pem`;
    writeFileSync(notPem, 'hello');
    const load = (env: Record<string, string>) => () => loadConfig({ DATA_DIR: opened.config.dataDir, ...env });
    assert.throws(
      load({ EGRESS_ALLOW_PRIVATE_CIDRS: '127.0.0.1/32,banana' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.variable === 'EGRESS_ALLOW_PRIVATE_CIDRS' &&
        /"banana" is not a CIDR range/.test(err.message),
    );
    assert.throws(
      load({ EGRESS_EXTRA_CA_FILE: `${dir}-missing.pem` }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.variable === 'EGRESS_EXTRA_CA_FILE' &&
        /cannot be read \(ENOENT/.test(err.message),
    );
    assert.throws(
      load({ EGRESS_EXTRA_CA_FILE: notPem }),
      (err: unknown) => err instanceof ConfigError && /must hold a PEM certificate/.test(err.message),
    );
    const c = loadConfig({ DATA_DIR: opened.config.dataDir });
    assert.equal(c.egressExtraCaPem, null);
    assert.deepEqual(c.egressAllowPrivateCidrs, []);
  });
});
