// A real local HTTPS server for tests of outbound calls (custom plugins, status webhooks): a test
// CA generated once per process with the machine's `openssl`, a leaf certificate for 127.0.0.1,
// ::1 and localhost signed by it, and a server that records every request with its exact body
// bytes. Point the service at it with the egress module's test-only trust settings (extra CA
// file, private-CIDR allow-list) via startApp({ env }).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificates {
  /** PEM of the test CA; trust it (and only in tests). */
  caPem: string;
  /** Path of a file holding caPem, for a config variable that names a CA file. */
  caFile: string;
  /** The server's key and certificate (SAN: 127.0.0.1, ::1, localhost, plugin.localhost). */
  keyPem: string;
  certPem: string;
}

let certificates: TestCertificates | undefined;

/** The test CA and server certificate, generated on first use and shared by the whole process. */
export function testCertificates(): TestCertificates {
  if (certificates) return certificates;
  const dir = mkdtempSync(join(tmpdir(), 'platform-test-ca-'));
  const p = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.pem'),
    '-days',
    '30',
    '-subj',
    '/CN=platform test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  openssl('req', '-new', ...ec, '-keyout', p('server.key'), '-out', p('server.csr'), '-subj', '/CN=localhost');
  writeFileSync(
    p('server.ext'),
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost,DNS:plugin.localhost',
    ].join('\n'),
  );
  openssl(
    'x509',
    '-req',
    '-in',
    p('server.csr'),
    '-CA',
    p('ca.pem'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-out',
    p('server.pem'),
    '-days',
    '30',
    '-extfile',
    p('server.ext'),
  );
  certificates = {
    caPem: readFileSync(p('ca.pem'), 'utf8'),
    caFile: p('ca.pem'),
    keyPem: readFileSync(p('server.key'), 'utf8'),
    certPem: readFileSync(p('server.pem'), 'utf8'),
  };
  return certificates;
}

export interface RecordedRequest {
  method: string;
  /** Path and query, as sent. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact body bytes received. */
  rawBody: Buffer;
  /** rawBody parsed as JSON, or undefined when it is not JSON. */
  json: any;
}

export interface EndpointResponse {
  status?: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string or Buffer as is. */
  body?: unknown;
  /** Wait this long before answering (a timeout test waits longer than the caller's deadline). */
  delayMs?: number;
}

export type EndpointHandler = (req: RecordedRequest) => EndpointResponse | Promise<EndpointResponse>;

export interface HttpsEndpoint {
  /** https://127.0.0.1:<port> */
  origin: string;
  /** origin + '/hook' (any path is answered by the handler). */
  url: string;
  port: number;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** TLS handshakes completed by the server (a keep-alive pool keeps this flat). */
  handshakes(): number;
  /** The SNI name of each handshake, in order (false: the client sent none). */
  servernames: Array<string | false>;
  /** Replaces the handler (default: 200 `{}`). */
  respond(handler: EndpointHandler): void;
  close(): Promise<void>;
}

/** Starts an HTTPS server on 127.0.0.1, port 0, signed by the test CA. */
export async function startHttpsEndpoint(opts: { handler?: EndpointHandler } = {}): Promise<HttpsEndpoint> {
  const certs = testCertificates();
  let handler: EndpointHandler = opts.handler ?? (() => ({ status: 200, body: {} }));
  const requests: RecordedRequest[] = [];
  let handshakes = 0;
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer(
    { key: certs.keyPem, cert: certs.certPem, keepAliveTimeout: 60_000 },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const rawBody = Buffer.concat(chunks);
        let json: unknown;
        try {
          json = JSON.parse(rawBody.toString('utf8'));
        } catch {
          json = undefined;
        }
        const recorded: RecordedRequest = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          rawBody,
          json,
        };
        requests.push(recorded);
        let answer: EndpointResponse;
        try {
          answer = await handler(recorded);
        } catch (err) {
          answer = { status: 500, body: { message: String(err) } };
        }
        const send = () => {
          if (res.destroyed) return;
          const body =
            answer.body === undefined
              ? Buffer.alloc(0)
              : Buffer.isBuffer(answer.body)
                ? answer.body
                : typeof answer.body === 'string'
                  ? Buffer.from(answer.body)
                  : Buffer.from(JSON.stringify(answer.body));
          const headers: Record<string, string | number> = { 'content-length': body.length, ...answer.headers };
          if (
            answer.body !== undefined &&
            !Buffer.isBuffer(answer.body) &&
            typeof answer.body !== 'string' &&
            !('content-type' in headers)
          ) {
            headers['content-type'] = 'application/json';
          }
          res.writeHead(answer.status ?? 200, headers);
          res.end(body);
        };
        if (answer.delayMs) {
          const t = setTimeout(() => {
            timers.delete(t);
            send();
          }, answer.delayMs);
          timers.add(t);
        } else send();
      });
    },
  );
  const servernames: Array<string | false> = [];
  server.on('secureConnection', (socket) => {
    handshakes++;
    servernames.push(socket.servername ?? false);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  const origin = `https://127.0.0.1:${port}`;
  return {
    origin,
    url: `${origin}/hook`,
    port,
    requests,
    handshakes: () => handshakes,
    servernames,
    respond(h) {
      handler = h;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
