// The egress client's edges, found by mutation testing: SNI on names and never on addresses,
// redirect and status boundaries, early refusal of a declared oversized body, bodies of zero or
// many chunks, a caller that gave up before its request left the queue, resolver failures, error
// texts, header rules, the bounded pool set, and the client's life with its AppContext.
// test-run: once (the egress client: no storage behaviour; scripts/test.mjs)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import { startApp } from '../helpers/app.ts';
import { startHttpsEndpoint, testCertificates, type HttpsEndpoint } from '../helpers/https-endpoint.ts';
import { freePort } from '../helpers/process.ts'; // a loopback port nothing listens on
import { Egress, EgressError, egressFor } from '../../src/egress/index.ts';

const egressError = (kind: EgressError['kind'], reason: RegExp) => (err: unknown) => {
  assert.ok(err instanceof EgressError, String(err));
  assert.equal(err.name, 'EgressError');
  assert.equal(err.kind, kind, err.reason);
  assert.match(err.reason, reason);
  return true;
};

/** A client for the loopback test endpoints; `resolve` answers every name with 127.0.0.1. */
const loopbackClient = (opts: { resolve?: (host: string) => Promise<string[]> } = {}) =>
  new Egress({
    allowPrivateCidrs: ['127.0.0.1/32'],
    extraCaPem: testCertificates().caPem,
    resolve: opts.resolve ?? (async () => ['127.0.0.1']),
  });

/** An HTTPS server on 127.0.0.1 with a raw handler (for answers the shared endpoint cannot give). */
async function rawServer(
  handler: Parameters<typeof createServer>[1],
): Promise<{ server: Server; port: number; close: () => Promise<void> }> {
  const certs = testCertificates();
  const server = createServer({ key: certs.keyPem, cert: certs.certPem }, handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    port: (server.address() as { port: number }).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('egress client: edges', () => {
  let endpoint: HttpsEndpoint;
  let e: Egress;
  before(async () => {
    endpoint = await startHttpsEndpoint();
    e = loopbackClient();
  });
  after(async () => {
    await e.close();
    await endpoint.close();
  });

  test('SNI carries the name (without its trailing dot), and nothing for an address literal', async () => {
    endpoint.respond(() => ({ status: 200, body: {} }));
    for (const [url, sni] of [
      [`https://plugin.localhost.:${endpoint.port}/sni`, 'plugin.localhost'],
      [`https://localhost:${endpoint.port}/sni`, 'localhost'],
      [`https://127.0.0.1:${endpoint.port}/sni`, false],
    ] as const) {
      const client = loopbackClient();
      try {
        const before = endpoint.servernames.length;
        assert.equal((await client.request({ url, body: '{}' })).status, 200, url);
        assert.deepEqual(endpoint.servernames.slice(before), [sni], url);
      } finally {
        await client.close();
      }
    }
  });

  test('the system resolver is used by default: its answers are checked and pinned', async () => {
    const client = new Egress({ allowPrivateCidrs: ['127.0.0.1/32'], extraCaPem: testCertificates().caPem });
    try {
      assert.deepEqual(
        await client.checkUrl(`https://localhost:${endpoint.port}/`).then((t) => t.address),
        '127.0.0.1',
      );
      assert.equal(
        (await client.request({ url: `https://localhost:${endpoint.port}/system`, body: '{}' })).status,
        200,
      );
    } finally {
      await client.close();
    }
    // not opened, the same answer is refused with the resolved address named
    const closedRanges = new Egress({ allowPrivateCidrs: ['10.0.0.0/8'], resolve: async () => ['127.0.0.1'] });
    await assert.rejects(
      closedRanges.request({ url: 'https://plugin.example.com/' }),
      egressError('refused', /plugin\.example\.com resolves to 127\.0\.0\.1 is a loopback address/),
    );
  });

  test('resolver failures: no answer, an answer past the deadline, an error', async () => {
    const none = new Egress({ resolve: async () => [] });
    await assert.rejects(
      none.request({ url: 'https://plugin.example.com/' }),
      egressError('network', /^plugin\.example\.com has no address$/),
    );
    const slow = new Egress({ resolve: () => new Promise(() => {}) });
    await assert.rejects(
      slow.request({ url: 'https://plugin.example.com/', timeoutMs: 100 }),
      egressError('timeout', /^no complete response within 100 ms$/),
    );
    const broken = new Egress({
      resolve: async () => {
        throw new Error('resolver exploded');
      },
    });
    await assert.rejects(
      broken.request({ url: 'https://plugin.example.com/' }),
      egressError('network', /^plugin\.example\.com could not be resolved \(resolver exploded\)$/),
    );
  });

  test('3xx is a redirect from 300 to 399; 400 is an answer; a redirect without Location, or a long one, is named', async () => {
    endpoint.respond(() => ({ status: 300, headers: { location: 'https://plugin.example.com/a' } }));
    await assert.rejects(
      e.request({ url: endpoint.url, body: '{}' }),
      egressError(
        'redirect',
        /^the endpoint answered 300 \(a redirect to https:\/\/plugin\.example\.com\/a\); redirects are not followed$/,
      ),
    );
    endpoint.respond(() => ({ status: 302 }));
    await assert.rejects(
      e.request({ url: endpoint.url, body: '{}' }),
      egressError('redirect', /^the endpoint answered 302 \(a redirect\); redirects are not followed$/),
    );
    const long = `https://plugin.example.com/${'x'.repeat(400)}`;
    endpoint.respond(() => ({ status: 307, headers: { location: long } }));
    await assert.rejects(e.request({ url: endpoint.url, body: '{}' }), (err: unknown) => {
      assert.ok(err instanceof EgressError);
      assert.ok(err.reason.includes(`a redirect to ${long.slice(0, 200)})`), err.reason);
      return true;
    });
    endpoint.respond(() => ({ status: 400, body: { message: 'bad input' } }));
    const res = await e.request({ url: endpoint.url, body: '{}' });
    assert.equal(res.status, 400);
    assert.deepEqual(JSON.parse(res.body.toString()), { message: 'bad input' });
  });

  test('a declared Content-Length over the cap is refused at the headers, without waiting for the body', async () => {
    const s = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-length': 5_000_000 });
      res.write('only a few bytes, then nothing'); // the rest never comes
    });
    try {
      await assert.rejects(
        e.request({ url: `https://127.0.0.1:${s.port}/declared`, timeoutMs: 5000 }),
        egressError('too-large', /exceeds 1048576 bytes/),
      );
      // the body never comes: a call that waited for it would end in a timeout, not 'too-large'
    } finally {
      await s.close();
    }
  });

  test('bodies: empty, and sent in several chunks, arrive whole', async () => {
    endpoint.respond(() => ({ status: 204 }));
    const empty = await e.request({ url: endpoint.url, body: '{}' });
    assert.equal(empty.status, 204);
    assert.ok(Buffer.isBuffer(empty.body));
    assert.equal(empty.body.length, 0);
    const s = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }); // chunked
      res.write('a'.repeat(10));
      setTimeout(() => res.write('b'.repeat(10)), 30);
      setTimeout(() => res.end('c'.repeat(10)), 60);
    });
    try {
      const res = await e.request({ url: `https://127.0.0.1:${s.port}/chunks` });
      assert.equal(res.body.toString(), `${'a'.repeat(10)}${'b'.repeat(10)}${'c'.repeat(10)}`);
    } finally {
      await s.close();
    }
  });

  test('a call whose deadline passed while it waited for a free connection is never sent', async () => {
    const client = loopbackClient();
    const slow = await startHttpsEndpoint({ handler: () => ({ status: 200, body: {}, delayMs: 800 }) });
    try {
      // the pool's 32 connections are all busy; the 33rd call waits in the queue and gives up
      const busy = Array.from({ length: 32 }, (_, i) => client.request({ url: `${slow.url}?busy=${i}`, body: '{}' }));
      // its error says it was never sent (a webhook delivery records it as is)
      await assert.rejects(
        client.request({ url: `${slow.url}?late`, body: '{}', timeoutMs: 150 }),
        egressError('timeout', /^not sent: no connection to the endpoint was ready within 150 ms$/),
      );
      await Promise.all(busy);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(slow.requests.length, 32);
      assert.ok(!slow.requests.some((r) => r.path.endsWith('?late')), 'the abandoned call did not reach the endpoint');
    } finally {
      await client.close();
      await slow.close();
    }
  });

  test('network failures name the system code; undici-internal codes stay out of the text', async () => {
    const port = await freePort();
    const client = loopbackClient();
    try {
      await assert.rejects(
        client.request({ url: `https://127.0.0.1:${port}/` }),
        egressError('network', /^the call failed \(ECONNREFUSED: connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/),
      );
      assert.equal(client.stats().tlsHandshakes, 0, 'a failed connection is no handshake');
    } finally {
      await client.close();
    }
    const s = await rawServer((req) => req.socket.destroy()); // hangs up without an answer
    try {
      await assert.rejects(e.request({ url: `https://127.0.0.1:${s.port}/` }), (err: unknown) => {
        assert.ok(err instanceof EgressError);
        assert.equal(err.kind, 'network');
        assert.match(err.reason, /^the call failed \(/);
        assert.doesNotMatch(err.reason, /UND_ERR/);
        return true;
      });
    } finally {
      await s.close();
    }
  });

  test("a TLS failure names OpenSSL's reason, not its source files", async () => {
    // plain HTTP where HTTPS is expected: OpenSSL's message carries "../deps/openssl/…c:NNN"
    const { createServer: createHttpServer } = await import('node:http');
    const plain = createHttpServer((_req, res) => res.end('{}'));
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    const port = (plain.address() as { port: number }).port;
    const client = loopbackClient();
    try {
      await assert.rejects(
        client.request({ url: `https://127.0.0.1:${port}/` }),
        egressError('network', /^the call failed \(ERR_SSL_[A-Z_]+: TLS [a-z ]+\)$/),
      );
    } finally {
      await client.close();
      plain.closeAllConnections();
      await new Promise((r) => plain.close(r));
    }
  });

  test('header rules: every framing header is ours; names must be tokens; values must be strings', async () => {
    for (const name of ['keep-alive', 'Upgrade', 'TE', 'trailer', 'Expect', 'proxy-connection']) {
      await assert.rejects(
        e.request({ url: endpoint.url, headers: { [name]: 'x' } }),
        egressError('invalid-request', new RegExp(`^the header "${name}" may not be set$`)),
      );
    }
    for (const name of ['x y', 'x-a:', 'x(', '']) {
      await assert.rejects(
        e.request({ url: endpoint.url, headers: { [name]: 'x' } }),
        egressError('invalid-request', new RegExp(`^"${name.replace(/[()]/g, '\\$&')}" is not a valid header name$`)),
      );
    }
    await assert.rejects(
      e.request({ url: endpoint.url, headers: { 'x-n': 5 as never } }),
      egressError('invalid-request', /^the header "x-n" has an invalid value$/),
    );
    endpoint.respond(() => ({ status: 200, body: {} }));
    await e.request({ url: endpoint.url, headers: { "x-Token_1.!#$%&'*+^`|~": 'ok' }, body: '{}' });
    assert.equal(endpoint.requests.at(-1)!.headers["x-token_1.!#$%&'*+^`|~"], 'ok');
  });

  test('at most 256 pools stay open; the least recently used one is closed', async () => {
    const client = loopbackClient();
    try {
      const distinct = new Set<number>(); // the system may hand out a freed port again
      while (distinct.size < 258) distinct.add(await freePort());
      const ports = [...distinct];
      endpoint.respond(() => ({ status: 200, body: {} }));
      await client.request({ url: endpoint.url, body: '{}' }); // the endpoint's pool, used first
      for (const port of ports.slice(0, 200))
        await client.request({ url: `https://127.0.0.1:${port}/` }).catch(() => {});
      await client.request({ url: endpoint.url, body: '{}' }); // used again: now the most recent
      for (const port of ports.slice(200)) await client.request({ url: `https://127.0.0.1:${port}/` }).catch(() => {});
      assert.equal(client.stats().openPools, 256);
      // the endpoint's pool survived the evictions: no second handshake
      const handshakes = client.stats().tlsHandshakes;
      await client.request({ url: endpoint.url, body: '{}' });
      assert.equal(client.stats().tlsHandshakes, handshakes);
    } finally {
      await client.close();
    }
  });

  test('a closed client refuses calls and has closed its connections; an AppContext has one client, closed with it', async () => {
    const client = loopbackClient();
    const s = await rawServer((_req, res) => res.writeHead(200, { 'content-length': 2 }).end('{}'));
    const connections = () => new Promise<number>((r, j) => s.server.getConnections((err, n) => (err ? j(err) : r(n))));
    try {
      await client.request({ url: `https://127.0.0.1:${s.port}/`, body: '{}' });
      assert.equal(await connections(), 1, 'kept alive after the call');
      await client.close();
      for (let i = 0; i < 50 && (await connections()) > 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(await connections(), 0, 'closing the client closed its kept-alive connection');
    } finally {
      await s.close();
    }
    assert.equal(client.stats().openPools, 0);
    await assert.rejects(
      client.request({ url: endpoint.url, body: '{}' }),
      egressError('invalid-request', /^the egress client is closed$/),
    );

    const app = await startApp({
      env: { EGRESS_EXTRA_CA_FILE: testCertificates().caFile, EGRESS_ALLOW_PRIVATE_CIDRS: '127.0.0.1/32' },
    });
    const own = egressFor(app.ctx);
    assert.equal(egressFor(app.ctx), own, 'one client per context: its pools are shared');
    await own.request({ url: endpoint.url, body: '{}' });
    await app.close();
    await assert.rejects(own.request({ url: endpoint.url, body: '{}' }), egressError('invalid-request', /closed/));
  });
});
