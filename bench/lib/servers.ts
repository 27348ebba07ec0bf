// Child-process servers for load benchmarks, so the load generator and the server do not share
// one event loop. Usage: node bench/lib/servers.ts <kind> ; prints "READY <port>" when listening.
//   bare  – a bare Fastify route
//   gated – the real application (API-key gate, error model, validators, logging off) with the
//           same handler behind /api/ (and at /ping-public without the gate)
// first, as in bin/platform.js: keeps process.nextTick on V8's fast path
import '../../src/shared/async-context.ts';
import Fastify from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { buildApp } from '../../src/server.ts';
import { createApiKey } from '../../src/api-keys/storage.ts';

const kind = process.argv[2];
// exit normally on signals so --cpu-prof and other exit hooks run
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => process.exit(0));
const payload = { pong: true };

if (kind === 'bare') {
  const app = Fastify();
  app.get('/ping', async () => payload);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  console.log(`READY ${typeof addr === 'object' && addr ? addr.port : 0}`);
} else if (kind === 'gated') {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', PORT: '0' });
  // BENCH_CHECKPOINTS=false: no SQLite checkpointer thread (its wake-ups are counted under callgrind)
  const ctx = await createContext(config, { backgroundCheckpoints: process.env.BENCH_CHECKPOINTS !== 'false' });
  // /api/v0/ping behind the gate; /ping-public through the same pipeline without it (breakdown)
  const app = await buildApp(ctx, {
    extend: (a) => {
      a.get('/api/v0/ping', async () => payload);
      a.get('/ping-public', async () => payload);
    },
  });
  const { key } = await createApiKey(ctx.db, 'bench');
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  console.log(`READY ${typeof addr === 'object' && addr ? addr.port : 0} ${key}`);
} else {
  console.error('usage: servers.ts bare|gated');
  process.exit(2);
}
