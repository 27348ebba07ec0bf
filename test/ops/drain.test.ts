import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp } from '../helpers/app.ts';
import { freePort } from '../helpers/process.ts';

describe('draining on shutdown', () => {
  test('a request that arrives on an open connection while the service drains gets a 503 in the error shape, with Retry-After', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const t = await startApp({
      listen: true,
      extend(app) {
        app.get('/healthz/held', async () => (await held, { ok: true }));
      },
    });
    try {
      const { connect } = await import('node:net');
      const { port } = new URL(t.url);
      const socket = connect(Number(port), '127.0.0.1');
      let raw = '';
      socket.on('data', (d) => (raw += d));
      await new Promise((r) => socket.once('connect', r));
      // an in-flight request keeps the connection busy, so closing the server does not reap it
      socket.write('GET /healthz/held HTTP/1.1\r\nhost: x\r\n\r\n');
      for (let i = 0; i < 100 && !t.app.server.listening; i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 50));
      const closing = t.app.close();
      await new Promise((r) => setTimeout(r, 50));
      socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
      await new Promise((r) => setTimeout(r, 100));
      release();
      await closing;
      for (let i = 0; i < 100 && !/\r\n\r\n\{[^}]*\}\s*$/.test(raw.split('HTTP/1.1 503')[1] ?? ''); i++)
        await new Promise((r) => setTimeout(r, 10));
      socket.destroy();
      const [first, second] = raw.split(/(?=HTTP\/1\.1 )/);
      assert.match(first!, /^HTTP\/1\.1 200 /, 'the request in flight is finished');
      assert.match(second!, /^HTTP\/1\.1 503 /);
      assert.match(second!, /\r\nretry-after: 1\r\n/i);
      assert.match(second!, /\r\nconnection: close\r\n/i);
      assert.deepEqual(JSON.parse(second!.slice(second!.indexOf('\r\n\r\n') + 4)), {
        errorMessage: 'The service is shutting down; retry shortly',
      });
    } finally {
      release();
      await t.ctx.close();
      await t.database.drop();
    }
  });

  test('with metrics on, the 503 of a draining service is counted', async () => {
    // two requests held: the first lets the refused one through (a connection answers in order),
    // the second keeps close() pending, and with it the metrics listener, until the scrape
    const releases: Array<() => void> = [];
    const holds = [0, 1].map(() => new Promise<void>((r) => releases.push(r)));
    const metricsPort = await freePort();
    const t = await startApp({
      listen: true,
      env: { METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.1' },
      extend(app) {
        app.get(
          '/healthz/held/:n',
          async (req) => (await holds[Number((req.params as { n: string }).n)], { ok: true }),
        );
      },
    });
    const { connect } = await import('node:net');
    const open = async () => {
      const socket = connect(Number(new URL(t.url).port), '127.0.0.1');
      const c = { socket, raw: '' };
      socket.on('data', (d) => (c.raw += d));
      await new Promise((r) => socket.once('connect', r));
      return c;
    };
    const a = await open();
    const b = await open();
    try {
      a.socket.write('GET /healthz/held/0 HTTP/1.1\r\nhost: x\r\n\r\n');
      b.socket.write('GET /healthz/held/1 HTTP/1.1\r\nhost: x\r\n\r\n');
      await new Promise((r) => setTimeout(r, 50));
      const closing = t.app.close();
      await new Promise((r) => setTimeout(r, 50));
      a.socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
      releases[0]!();
      for (let i = 0; i < 500 && !/HTTP\/1\.1 503 [\s\S]*\r\n\r\n\{[^}]*\}/.test(a.raw); i++)
        await new Promise((r) => setTimeout(r, 10));
      assert.match(a.raw, /HTTP\/1\.1 503 /);
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      releases[1]!();
      // its connection would otherwise stay open until the keep-alive timeout, and close() with it
      for (let i = 0; i < 500 && !/\r\n\r\n\{[^}]*\}/.test(b.raw); i++) await new Promise((r) => setTimeout(r, 10));
      b.socket.destroy();
      await closing;
      const counted = text
        .split('\n')
        .filter(
          (l) => l.startsWith('platform_http_request_duration_seconds_count{') && l.includes('status_code="503"'),
        );
      assert.equal(counted.length, 1, text);
      assert.match(counted[0]!, / 1$/);
    } finally {
      for (const r of releases) r();
      a.socket.destroy();
      b.socket.destroy();
      await t.ctx.close();
      await t.database.drop();
    }
  });
});
