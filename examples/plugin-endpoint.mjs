// A custom plugin endpoint (SPEC §4.25) in plain Node, no dependencies, no build.
//
//   PLUGIN_SECRET=<the plugin's pluginSecret> TLS_KEY_FILE=key.pem TLS_CERT_FILE=cert.pem PORT=8443 \
//     node examples/plugin-endpoint.mjs
//
// It serves HTTPS when TLS_KEY_FILE and TLS_CERT_FILE are set; without them it serves plain HTTP
// and must sit behind a TLS-terminating proxy (the service calls https URLs only).
// The plugin passes claimers that are signed in (its version sets verificationCall.passAddress),
// with the Stateless preset: 200 `{}` passes, any other status with `{ message }` fails.
// Status webhooks (_attemptStatus success / failure) are acknowledged once per claimAttemptId.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';

const secret = process.env.PLUGIN_SECRET;
if (!secret) throw new Error('PLUGIN_SECRET is required');
const MAX_SKEW_MS = 5 * 60_000;
const MAX_BODY = 64 * 1024;
const seenOutcomes = new Set(); // webhooks are retried: keep each attempt's outcome once

/** The reason a request is not from the service, or null. */
function verify(req, raw) {
  const ts = req.headers['x-platform-timestamp'];
  const sig = req.headers['x-platform-signature'];
  if (req.headers['x-platform-version'] !== '1') return 'unsupported signature version';
  if (typeof ts !== 'string' || !/^\d+$/.test(ts) || typeof sig !== 'string') return 'missing signature';
  if (Math.abs(Date.now() - Number(ts)) > MAX_SKEW_MS) return 'stale timestamp';
  const expected = createHmac('sha256', secret).update(`${ts}.`).update(raw).digest();
  const given = Buffer.from(sig, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected) ? null : 'bad signature';
}

function handle(req, res) {
  const reply = (status, body) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  if (req.method !== 'POST') return reply(405, { message: 'POST only' });
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size > MAX_BODY) req.destroy();
    else chunks.push(c);
  });
  req.on('end', () => {
    const raw = Buffer.concat(chunks); // verify the exact bytes, before parsing
    const problem = verify(req, raw);
    if (problem) return reply(401, { message: problem });
    let body;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return reply(400, { message: 'body is not JSON' });
    }
    if (body._attemptStatus === 'success' || body._attemptStatus === 'failure') {
      const key = `${body.claimAttemptId}/${body.instanceId}`;
      if (!seenOutcomes.has(key)) {
        seenOutcomes.add(key);
        console.log(
          JSON.stringify({ outcome: body._attemptStatus, claimId: body.claimId, claimAttemptId: body.claimAttemptId }),
        );
      }
      return reply(200, {});
    }
    // a real call or a dry run (_isSimulation): same answer, and this plugin changes no state
    if (body.isAddressSignedIn !== true) return reply(403, { message: 'Sign in with your wallet to claim.' });
    return reply(200, {});
  });
}

const tls = process.env.TLS_KEY_FILE && process.env.TLS_CERT_FILE;
const server = tls
  ? https.createServer(
      { key: readFileSync(process.env.TLS_KEY_FILE), cert: readFileSync(process.env.TLS_CERT_FILE) },
      handle,
    )
  : http.createServer(handle);
server.listen(Number(process.env.PORT ?? 8443), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address();
  console.log(`plugin endpoint listening on ${tls ? 'https' : 'http'}://${address}:${port}`);
});
