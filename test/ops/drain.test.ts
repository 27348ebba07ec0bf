import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp } from '../helpers/app.ts';

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
});
