// Token-endpoint throughput: authorization_code exchange and refresh_token rotation, this service on
// SQLite versus node-oidc-provider (in-memory adapter) measured in the same run, same load generator.
// Codes are minted through each server's own storage model (our authorization rows; oidc-provider's
// Grant + AuthorizationCode models, over a Map adapter), then exchanged over HTTP at each token endpoint.
//   node bench/signin.ts            (BENCH_N=… codes per measured round, BENCH_CONNECTIONS=…)
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { createApiKey } from '../src/api-keys/storage.ts';
import { loadConfig } from '../src/config.ts';
import { createContext, type AppContext } from '../src/context.ts';
import { buildApp } from '../src/server.ts';
import { createDeveloperApp } from '../src/signin/apps.ts';
import { CODE_TTL_MS } from '../src/signin/lifetimes.ts';
import type { SigninAuthorizationTable } from '../src/signin/storage.ts';
import { randomHex, sha256Hex } from '../src/shared/crypto.ts';

const N = Number(process.env.BENCH_N ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const REDIRECT = 'https://app.example/callback';

interface Target {
  name: string;
  origin: string;
  path: string;
  headers: Record<string, string>;
  mintCodes(n: number): Promise<string[]>;
  codeBody(code: string): string;
  refreshBody(refreshToken: string): string;
  close(): Promise<void>;
}

const form = (o: Record<string, string>) => new URLSearchParams(o).toString();

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function ours(): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-bench-'));
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', PORT: '0' });
  const ctx: AppContext = await createContext(config);
  const app = await buildApp(ctx);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const { key } = await createApiKey(ctx.db, 'bench', Date.now());
  const { app: client, clientSecret } = await createDeveloperApp(ctx.db, { name: 'Bench', redirectUris: [REDIRECT] }, Date.now());
  const creds = { client_id: client.clientId, client_secret: clientSecret };
  return {
    name: 'platform (SQLite)',
    origin,
    path: '/api/v0/signin/token',
    headers: { 'x-api-key': key, 'content-type': 'application/x-www-form-urlencoded' },
    async mintCodes(n) {
      const now = Date.now();
      const codes: string[] = [];
      const rows: SigninAuthorizationTable[] = [];
      for (let i = 0; i < n; i++) {
        const code = randomHex(32);
        codes.push(code);
        rows.push({
          authorization_id: randomHex(16), code_hash: sha256Hex(code), client_id: client.clientId, redirect_uri: REDIRECT,
          scopes: '["completeClaims"]', code_challenge: null, address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
          platform_address: 'bb17w0adeg64ky0daxwd2ugyuneellmjgnxqqnph3', chain: 'ETH', message: 'bench', created_at: now,
          code_expires_at: now + CODE_TTL_MS, code_consumed_at: null, expires_at: null, revoked_at: null,
          access_hash: null, access_scopes: null, access_expires_at: null, refresh_hash: null, refresh_expires_at: null,
        });
      }
      for (let i = 0; i < rows.length; i += 500) await ctx.db.insertInto('signin_authorizations').values(rows.slice(i, i + 500)).execute();
      return codes;
    },
    codeBody: (code) => form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...creds }),
    refreshBody: (refresh_token) => form({ grant_type: 'refresh_token', refresh_token, ...creds }),
    async close() {
      await app.close();
      await ctx.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// oidc-provider's bundled memory adapter is an LRU capped at 1000 entries (too small for a run of
// thousands of grants); this is the same idea, a plain in-memory Map, unbounded.
const memory = new Map<string, { payload: Record<string, unknown>; expiresAt: number }>();
const grantMembers = new Map<string, Set<string>>();
class MapAdapter {
  model: string;
  constructor(model: string) {
    this.model = model;
  }
  key = (id: string) => `${this.model}:${id}`;
  async upsert(id: string, payload: Record<string, unknown>, expiresIn?: number) {
    const key = this.key(id);
    memory.set(key, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : Infinity });
    if (typeof payload.grantId === 'string') {
      const members = grantMembers.get(payload.grantId) ?? new Set();
      members.add(key);
      grantMembers.set(payload.grantId, members);
    }
    if (typeof payload.uid === 'string') memory.set(`uid:${payload.uid}`, { payload: { id }, expiresAt: Infinity });
  }
  async find(id: string) {
    const e = memory.get(this.key(id));
    if (!e || e.expiresAt <= Date.now()) return undefined;
    return e.payload;
  }
  async findByUid(uid: string) {
    const e = memory.get(`uid:${uid}`);
    return e ? this.find(e.payload.id as string) : undefined;
  }
  async findByUserCode() {
    return undefined;
  }
  async consume(id: string) {
    const e = memory.get(this.key(id));
    if (e) e.payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string) {
    memory.delete(this.key(id));
  }
  async revokeByGrantId(grantId: string) {
    for (const key of grantMembers.get(grantId) ?? []) memory.delete(key);
    grantMembers.delete(grantId);
  }
}

/** The parts of oidc-provider (untyped package) this benchmark uses. */
interface OidcProvider {
  callback(): (req: unknown, res: unknown) => void;
  Client: { find(id: string): Promise<unknown> };
  Grant: new (o: object) => { addOIDCScope(s: string): void; save(): Promise<string> };
  AuthorizationCode: new (o: object) => { save(): Promise<string> };
}

async function oidcProvider(): Promise<Target> {
  const { default: Provider } = (await import('oidc-provider' as string)) as { default: new (issuer: string, config: object) => OidcProvider };
  const server = createServer();
  const origin = await listen(server);
  const client = { client_id: 'bench', client_secret: randomHex(32), redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_post' };
  const provider = new Provider(origin, {
    adapter: MapAdapter,
    clients: [client],
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
    scopes: ['api'],
    pkce: { required: () => false },
    ttl: { AuthorizationCode: 600, AccessToken: 86_400, RefreshToken: 60 * 86_400, Grant: 60 * 86_400 },
    issueRefreshToken: () => true,
    rotateRefreshToken: true, // rotate on every use, as this service does
  });
  server.on('request', provider.callback());
  const p = provider;
  const found = await p.Client.find('bench');
  return {
    name: 'oidc-provider (in-memory)',
    origin,
    path: '/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    async mintCodes(n) {
      const codes: string[] = [];
      for (let i = 0; i < n; i++) {
        const accountId = `acct${i}`;
        const grant = new p.Grant({ accountId, clientId: 'bench' });
        grant.addOIDCScope('api');
        const grantId = await grant.save();
        codes.push(await new p.AuthorizationCode({ accountId, client: found, grantId, scope: 'api', redirectUri: REDIRECT }).save());
      }
      return codes;
    },
    codeBody: (code) => form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret }),
    refreshBody: (refresh_token) => form({ grant_type: 'refresh_token', refresh_token, client_id: client.client_id, client_secret: client.client_secret }),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/**
 * Sends every body once over CONNECTIONS keep-alive connections; returns requests/s and the JSON
 * answers. The load generator runs in a worker thread so it does not share the servers' event loop.
 */
async function drive(t: Target, bodies: string[]): Promise<{ rate: number; busyUs: number; answers: Record<string, string>[] }> {
  const cpu = process.threadCpuUsage();
  const worker = new Worker(new URL(import.meta.url), { workerData: { origin: t.origin, path: t.path, headers: t.headers, bodies, connections: CONNECTIONS } });
  const result = await new Promise<{ seconds: number; answers: string[]; failures: number; firstFailure: string }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const used = process.threadCpuUsage(cpu);
  await worker.terminate();
  if (result.failures) throw new Error(`${t.name}: ${result.failures} of ${bodies.length} requests failed; first: ${result.firstFailure}`);
  // CPU time of the server thread per request (user + system): what a request costs the server,
  // whatever else the machine is running at the time
  return { rate: bodies.length / result.seconds, busyUs: (used.user + used.system) / bodies.length, answers: result.answers.map((a) => JSON.parse(a)) };
}

async function loadGenerator(): Promise<void> {
  const { origin, path, headers, bodies, connections } = workerData as { origin: string; path: string; headers: Record<string, string>; bodies: string[]; connections: number };
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const answers: string[] = new Array(bodies.length);
  let next = 0;
  let failures = 0;
  let firstFailure = '';
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < bodies.length) {
        const i = next++;
        const res = await pool.request({ method: 'POST', path, headers, body: bodies[i] });
        const text = await res.body.text();
        if (res.statusCode !== 200) {
          failures++;
          firstFailure ||= `${res.statusCode} ${text}`;
        } else answers[i] = text;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  parentPort!.postMessage({ seconds, answers, failures, firstFailure });
}

/** A bare Fastify route answering a fixed token response: what this harness can measure at most. */
async function ceiling(): Promise<Target> {
  const { default: Fastify } = await import('fastify');
  const { default: formbody } = await import('@fastify/formbody');
  const app = Fastify();
  await app.register(formbody);
  const answer = { access_token: 'a'.repeat(64), refresh_token: 'b'.repeat(64), token_type: 'Bearer', expires_in: 86400 };
  app.post('/token', async () => answer);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    name: 'bare Fastify (no work)',
    origin: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`,
    path: '/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    mintCodes: async (n) => Array.from({ length: n }, () => randomHex(32)),
    codeBody: (code) => form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: 'x', client_secret: 'y' }),
    refreshBody: (refresh_token) => form({ grant_type: 'refresh_token', refresh_token, client_id: 'x', client_secret: 'y' }),
    close: () => app.close(),
  };
}

interface Figures {
  rate: number[];
  cpuUs: number[];
}

async function main() {
  // BENCH_ONLY=platform profiles this service alone (no ratio).
  const only = process.env.BENCH_ONLY === 'platform';
  const targets = only ? [await ours()] : [await ours(), await oidcProvider(), await ceiling()];
  const exchange = new Map<string, Figures>();
  const refresh = new Map<string, Figures>();
  const add = (m: Map<string, Figures>, name: string, r: { rate: number; busyUs: number }) => {
    const f = m.get(name) ?? { rate: [], cpuUs: [] };
    f.rate.push(r.rate);
    f.cpuUs.push(r.busyUs);
    m.set(name, f);
  };
  try {
    for (const t of targets) {
      // warm-up: JIT, connection setup, SQLite page cache
      const warm = await drive(t, (await t.mintCodes(300)).map(t.codeBody));
      await drive(t, warm.answers.map((a) => t.refreshBody(a.refresh_token)));
      if ('id_token' in warm.answers[0]) throw new Error(`${t.name} issued an id_token: the comparison would not be like for like`);
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of round % 2 ? [...targets].reverse() : targets) {
        const codes = await t.mintCodes(N);
        const ex = await drive(t, codes.map(t.codeBody));
        const rf = await drive(t, ex.answers.map((a) => t.refreshBody(a.refresh_token)));
        add(exchange, t.name, ex);
        add(refresh, t.name, rf);
        if (process.env.BENCH_VERBOSE) console.log(`  ${t.name}: exchange ${ex.rate.toFixed(0)}/s (${ex.busyUs.toFixed(0)} µs server-thread CPU per request), refresh ${rf.rate.toFixed(0)}/s (${rf.busyUs.toFixed(0)} µs)`);
      }
    }
  } finally {
    for (const t of targets) await t.close();
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const [a, b, c] = targets.map((t) => t.name);
  console.log(`signin token endpoint: ${N} requests x ${ROUNDS} rounds, ${CONNECTIONS} connections; servers in the main thread, load generator in a worker thread (${process.version})`);
  for (const [label, m] of [['code exchange', exchange], ['refresh rotation', refresh]] as const) {
    const fa = m.get(a)!;
    if (only) {
      console.log(`  ${label.padEnd(17)} ${a}: ${mean(fa.rate).toFixed(0)} req/s, ${mean(fa.cpuUs).toFixed(0)} µs server CPU per request`);
      continue;
    }
    const fb = m.get(b)!;
    console.log(
      `  ${label.padEnd(17)} ${a}: ${mean(fa.rate).toFixed(0).padStart(5)} req/s (${mean(fa.cpuUs).toFixed(0)} µs CPU/req)   ` +
        `${b}: ${mean(fb.rate).toFixed(0).padStart(5)} req/s (${mean(fb.cpuUs).toFixed(0)} µs CPU/req)   ` +
        `rate ratio ${(mean(fa.rate) / mean(fb.rate)).toFixed(2)}x, CPU-per-request ratio ${(mean(fb.cpuUs) / mean(fa.cpuUs)).toFixed(2)}x`,
    );
  }
  if (only) return;
  const fc = exchange.get(c)!;
  console.log(`  harness ceiling   ${c}: ${mean(fc.rate).toFixed(0)} req/s (${mean(fc.cpuUs).toFixed(0)} µs CPU/req): rates near it are bounded by the load generator, not the server`);
  const ratio = mean(exchange.get(a)!.rate) / mean(exchange.get(b)!.rate);
  console.log(`  goal: ≥ 2x oidc-provider's exchange rate on SQLite — ${ratio >= 2 ? 'met' : 'NOT met'} (${ratio.toFixed(2)}x)`);
}

if (isMainThread) await main();
else await loadGenerator();
