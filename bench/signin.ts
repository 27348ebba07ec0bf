// Token-endpoint throughput: authorization_code exchange and refresh_token rotation, and an exchange
// that returns an OpenID Connect id_token (the `openid` scope, a nonce; both servers sign ES256),
// this service on SQLite (or PostgreSQL: BENCH_DB=postgres) versus node-oidc-provider (in-memory
// adapter) measured in the same run, same load generator.
// Codes are minted through each server's own storage model (our authorization rows; oidc-provider's
// Grant + AuthorizationCode models, over a Map adapter) before the timed phase, then exchanged over
// HTTP at each token endpoint; the refresh phase rotates the refresh tokens the exchange returned.
// Each server is measured alone, in alternating order, several rounds; figures are medians.
//   node bench/signin.ts
//   BENCH_N=… requests per phase, BENCH_ROUNDS=…, BENCH_CONNECTIONS=…, BENCH_VERBOSE=1 (every round),
//   BENCH_ONLY=platform|oidc-provider|bare (one server), BENCH_PROFILE=dir (CPU profiles of the timed phases),
//   BENCH_DB=sqlite|postgres (this service's database; postgres: a private schema in TEST_DATABASE_URL,
//   default postgres://postgres@127.0.0.1:5432/test, dropped at the end), DATABASE_POOL_SIZE=… (its pool).
// On PostgreSQL it also reports the CPU of the pool's backend processes per request (/proc; the
// database must be the run's alone, as the backends are found by database name).
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { connect, type Socket } from 'node:net';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { createApiKey } from '../src/api-keys/storage.ts';
import { loadConfig } from '../src/config.ts';
import { createContext, type AppContext } from '../src/context.ts';
import { buildApp } from '../src/server.ts';
import { createDeveloperApp } from '../src/signin/apps.ts';
import { randomHex } from '../src/shared/crypto.ts';
import { createTestDatabase } from '../test/helpers/app.ts';
import { record } from './lib/record.ts';
import { mintSigninCodes } from './lib/signin-codes.ts';

const N = Number(process.env.BENCH_N ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const REDIRECT = 'https://app.example/callback';
const DB = (process.env.BENCH_DB ?? 'sqlite') as 'sqlite' | 'postgres';
if (DB !== 'sqlite' && DB !== 'postgres') throw new Error('BENCH_DB must be sqlite or postgres');
const DB_LABEL = DB === 'sqlite' ? 'SQLite' : 'PostgreSQL';

interface Target {
  name: string;
  origin: string;
  path: string;
  headers: Record<string, string>;
  /** `openid`: codes whose exchange returns an id_token (the openid scope and a nonce). */
  mintCodes(n: number, openid?: boolean): Promise<string[]>;
  /** PostgreSQL: the process ids of the database's backends (the pool's connections). */
  backends?(): Promise<number[]>;
  /** Whether it issues id_tokens (the bare ceiling does not: it has no id_token phase). */
  openid: boolean;
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
  const database = createTestDatabase(DB);
  const config = loadConfig({
    ...database.env,
    LOG_LEVEL: 'silent',
    PORT: '0',
    DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE,
  });
  const ctx: AppContext = await createContext(config);
  const app = await buildApp(ctx);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const { key } = await createApiKey(ctx.db, 'bench', Date.now());
  const { app: client, clientSecret } = await createDeveloperApp(
    ctx.db,
    { name: 'Bench', redirectUris: [REDIRECT] },
    Date.now(),
  );
  const creds = { client_id: client.clientId, client_secret: clientSecret };
  return {
    name: `platform (${DB_LABEL})`,
    openid: true,
    origin,
    path: '/api/v0/signin/token',
    headers: { 'x-api-key': key, 'content-type': 'application/x-www-form-urlencoded' },
    ...(ctx.pool
      ? {
          async backends() {
            const r = await ctx.pool!.query<{ pid: number }>(
              'select pid from pg_stat_activity where datname = current_database()',
            );
            return r.rows.map((x) => x.pid);
          },
        }
      : {}),
    async mintCodes(n, openid = false) {
      return mintSigninCodes(ctx.db, client.clientId, REDIRECT, n, openid);
    },
    codeBody: (code) => form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...creds }),
    refreshBody: (refresh_token) => form({ grant_type: 'refresh_token', refresh_token, ...creds }),
    async close() {
      await app.close();
      await ctx.close();
      await database.drop();
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
  const { default: Provider } = (await import('oidc-provider' as string)) as {
    default: new (issuer: string, config: object) => OidcProvider;
  };
  const server = createServer();
  const origin = await listen(server);
  const client = {
    client_id: 'bench',
    client_secret: randomHex(32),
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_post',
    id_token_signed_response_alg: 'ES256', // the algorithm this service signs with
  };
  const provider = new Provider(origin, {
    adapter: MapAdapter,
    clients: [client],
    // the same identity claims as this service's id_token, in the id_token too (not only userinfo)
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({
        sub: id,
        address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
        chain: 'ETH',
        platformAddress: id,
      }),
    }),
    claims: { openid: ['sub', 'address', 'chain', 'platformAddress'] },
    conformIdTokenClaims: false,
    scopes: ['openid', 'api'],
    pkce: { required: () => false },
    ttl: { AuthorizationCode: 600, AccessToken: 86_400, RefreshToken: 60 * 86_400, Grant: 60 * 86_400, IdToken: 3600 },
    issueRefreshToken: () => true,
    rotateRefreshToken: true, // rotate on every use, as this service does
    // its own signing key and no development login pages: the token endpoint does the same work,
    // and the quick-start warnings stay out of the output
    jwks: {
      keys: [
        generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
        generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }),
      ],
    },
    features: { devInteractions: { enabled: false } },
  });
  server.on('request', provider.callback());
  const p = provider;
  const found = await p.Client.find('bench');
  return {
    name: 'oidc-provider (in-memory)',
    openid: true,
    origin,
    path: '/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    async mintCodes(n, openid = false) {
      const codes: string[] = [];
      const scope = openid ? 'openid api' : 'api';
      for (let i = 0; i < n; i++) {
        const accountId = `acct${i}`;
        const grant = new p.Grant({ accountId, clientId: 'bench' });
        grant.addOIDCScope(scope);
        const grantId = await grant.save();
        const nonce = openid ? { nonce: `nonce-${i}`, authTime: Math.floor(Date.now() / 1000) } : {};
        codes.push(
          await new p.AuthorizationCode({
            accountId,
            client: found,
            grantId,
            scope,
            redirectUri: REDIRECT,
            ...nonce,
          }).save(),
        );
      }
      return codes;
    },
    codeBody: (code) =>
      form({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        client_id: client.client_id,
        client_secret: client.client_secret,
      }),
    refreshBody: (refresh_token) =>
      form({
        grant_type: 'refresh_token',
        refresh_token,
        client_id: client.client_id,
        client_secret: client.client_secret,
      }),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

// BENCH_PROFILE=dir writes a CPU profile of the server thread for each timed phase (nothing else:
// no setup, no minting), e.g. for `node bench/signin.ts` with BENCH_ONLY=platform.
const PROFILE_DIR = process.env.BENCH_PROFILE;
let profiles = 0;
async function startProfiler() {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return {
    async stop(file: string) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/**
 * Sends every body once over CONNECTIONS keep-alive connections; returns requests/s, the server's
 * CPU per request (all threads but the load generator's; and the main thread's alone), the load
 * generator's CPU per request and the JSON answers. The load generator runs in a worker thread so
 * it does not share the servers' event loop.
 */
/** utime + stime of the processes, in µs (a process gone by now counts 0). */
function procCpuUs(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]); // fields 14 and 15: utime, stime
    } catch {
      // exited
    }
  }
  return ticks * 10_000; // USER_HZ = 100
}

async function drive(
  t: Target,
  bodies: string[],
  label = 'warm-up',
): Promise<{
  rate: number;
  busyUs: number;
  mainUs: number;
  clientUs: number;
  dbUs: number;
  answers: Record<string, string>[];
}> {
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { origin: t.origin, path: t.path, headers: t.headers, bodies, connections: CONNECTIONS },
  });
  // the worker says when its requests are built and its connections open; only then does the clock start
  type Result = { seconds: number; clientUs: number; answers: string[]; failures: number; firstFailure: string };
  const messages: Array<(m: unknown) => void> = [];
  worker.on('message', (m) => messages.shift()?.(m));
  let failed: (e: unknown) => void = () => {};
  const crashed = new Promise<never>((_, reject) => (failed = reject));
  worker.once('error', (e) => failed(e));
  const ready = new Promise((r) => messages.push(r));
  const done = new Promise<Result>((r) => messages.push(r as (m: unknown) => void));
  await Promise.race([ready, crashed]);
  const profiler = PROFILE_DIR && label !== 'warm-up' ? await startProfiler() : null;
  const pids = (await t.backends?.()) ?? [];
  const dbCpu = procCpuUs(pids);
  const cpu = process.cpuUsage();
  const mainCpu = process.threadCpuUsage();
  worker.postMessage('go');
  const result = await Promise.race([done, crashed]);
  const used = process.cpuUsage(cpu);
  const usedMain = process.threadCpuUsage(mainCpu);
  const usedDb = procCpuUs(pids) - dbCpu;
  if (profiler)
    await profiler.stop(join(PROFILE_DIR!, `${t.name.replace(/\W+/g, '-')}-${label}-${++profiles}.cpuprofile`));
  await worker.terminate();
  if (result.failures)
    throw new Error(`${t.name}: ${result.failures} of ${bodies.length} requests failed; first: ${result.firstFailure}`);
  // CPU time per request (user + system) of every thread of this process except the load
  // generator's: the server's main thread plus its helpers (libuv pool, GC threads), so work a
  // server moves off its event loop still counts. It is what a request costs the server, whatever
  // else the machine is running at the time.
  return {
    rate: bodies.length / result.seconds,
    busyUs: (used.user + used.system - result.clientUs) / bodies.length,
    mainUs: (usedMain.user + usedMain.system) / bodies.length,
    clientUs: result.clientUs / bodies.length,
    dbUs: usedDb / bodies.length,
    answers: result.answers.map((a) => JSON.parse(a)),
  };
}

/**
 * The load generator: plain keep-alive sockets, each request pre-serialised, one request in flight
 * per connection (no pipelining), responses framed by Content-Length (or chunked). It costs a small
 * fraction of either server's CPU per request, so the servers, not the client, set the rates.
 */
async function loadGenerator(): Promise<void> {
  const { origin, path, headers, bodies, connections } = workerData as {
    origin: string;
    path: string;
    headers: Record<string, string>;
    bodies: string[];
    connections: number;
  };
  const url = new URL(origin);
  const head = `POST ${path} HTTP/1.1\r\nhost: ${url.host}\r\nconnection: keep-alive\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}`;
  const requests = bodies.map((b) => Buffer.from(`${head}content-length: ${Buffer.byteLength(b)}\r\n\r\n${b}`));
  const answers: string[] = new Array(bodies.length);
  let next = 0;
  let failures = 0;
  let firstFailure = '';
  const sockets = await Promise.all(
    Array.from({ length: Math.min(connections, bodies.length) }, () => {
      const s = connect({ host: url.hostname, port: Number(url.port), noDelay: true });
      return new Promise<Socket>((resolve, reject) => s.once('connect', () => resolve(s)).once('error', reject));
    }),
  );
  await new Promise<void>((r) => {
    parentPort!.once('message', () => r());
    parentPort!.postMessage('ready');
  });
  const cpu = process.threadCpuUsage();
  const started = performance.now();
  await Promise.all(
    sockets.map(
      (socket) =>
        new Promise<void>((resolve, reject) => {
          let buf: Buffer = Buffer.alloc(0);
          let current = -1;
          const send = () => {
            if (next >= requests.length) {
              socket.end();
              resolve();
              return;
            }
            current = next++;
            socket.write(requests[current]);
          };
          socket.on('error', reject);
          socket.on('close', () =>
            current >= 0 && answers[current] === undefined && !failures
              ? reject(new Error('connection closed by the server'))
              : resolve(),
          );
          socket.on('data', (chunk: Buffer) => {
            buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
            const end = buf.indexOf('\r\n\r\n');
            if (end < 0) return;
            const headText = buf.toString('latin1', 0, end);
            const status = Number(headText.slice(9, 12));
            let body: string;
            const length = /\r\ncontent-length:\s*(\d+)/i.exec(headText);
            if (length) {
              const total = end + 4 + Number(length[1]);
              if (buf.length < total) return;
              body = buf.toString('utf8', end + 4, total);
              buf = buf.subarray(total);
            } else if (/\r\ntransfer-encoding:\s*chunked/i.test(headText)) {
              if (buf.indexOf('\r\n0\r\n\r\n', end) < 0) return;
              const parts: Buffer[] = [];
              let at = end + 4;
              for (;;) {
                const eol = buf.indexOf('\r\n', at);
                const size = parseInt(buf.toString('latin1', at, eol), 16);
                if (size === 0) break;
                parts.push(buf.subarray(eol + 2, eol + 2 + size));
                at = eol + 2 + size + 2;
              }
              body = Buffer.concat(parts).toString('utf8');
              buf = Buffer.alloc(0);
            } else {
              reject(new Error(`response without a length: ${headText}`));
              return;
            }
            if (status !== 200) {
              failures++;
              firstFailure ||= `${status} ${body}`;
            } else answers[current] = body;
            send();
          });
          send();
        }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.threadCpuUsage(cpu);
  for (const s of sockets) s.destroy();
  parentPort!.postMessage({ seconds, clientUs: used.user + used.system, answers, failures, firstFailure });
}

/** A bare Fastify route answering a fixed token response: what this harness can measure at most. */
async function ceiling(): Promise<Target> {
  const { default: Fastify } = await import('fastify');
  const { default: formbody } = await import('@fastify/formbody');
  const app = Fastify();
  await app.register(formbody);
  const answer = {
    access_token: 'a'.repeat(64),
    refresh_token: 'b'.repeat(64),
    token_type: 'Bearer',
    expires_in: 86400,
  };
  app.post('/token', async () => answer);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    name: 'bare Fastify (no work)',
    openid: false,
    origin: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`,
    path: '/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    mintCodes: async (n) => Array.from({ length: n }, () => randomHex(32)),
    codeBody: (code) =>
      form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: 'x', client_secret: 'y' }),
    refreshBody: (refresh_token) =>
      form({ grant_type: 'refresh_token', refresh_token, client_id: 'x', client_secret: 'y' }),
    close: () => app.close(),
  };
}

interface Figures {
  rate: number[];
  cpuUs: number[];
  clientUs: number[];
  dbUs: number[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  // BENCH_ONLY=platform | oidc-provider | bare measures (or profiles) one server alone (no ratio).
  const only = process.env.BENCH_ONLY;
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  const makers = { platform: ours, 'oidc-provider': oidcProvider, bare: ceiling };
  if (only && !(only in makers)) throw new Error(`BENCH_ONLY must be one of ${Object.keys(makers).join(', ')}`);
  const targets = only
    ? [await makers[only as keyof typeof makers]()]
    : [await ours(), await oidcProvider(), await ceiling()];
  const exchange = new Map<string, Figures>();
  const refresh = new Map<string, Figures>();
  const withIdToken = new Map<string, Figures>();
  const add = (
    m: Map<string, Figures>,
    name: string,
    r: { rate: number; busyUs: number; clientUs: number; dbUs: number },
  ) => {
    const f = m.get(name) ?? { rate: [], cpuUs: [], clientUs: [], dbUs: [] };
    f.dbUs.push(r.dbUs);
    f.rate.push(r.rate);
    f.cpuUs.push(r.busyUs);
    f.clientUs.push(r.clientUs);
    m.set(name, f);
  };
  try {
    for (const t of targets) {
      // warm-up: JIT, connection setup, SQLite page cache
      const warm = await drive(t, (await t.mintCodes(500)).map(t.codeBody));
      await drive(
        t,
        warm.answers.map((a) => t.refreshBody(a.refresh_token)),
      );
      if ('id_token' in warm.answers[0])
        throw new Error(`${t.name} issued an id_token: the comparison would not be like for like`);
      if (t.openid) {
        const warmId = await drive(t, (await t.mintCodes(500, true)).map(t.codeBody));
        for (const a of warmId.answers) checkIdToken(t, a);
      }
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of round % 2 ? [...targets].reverse() : targets) {
        const codes = await t.mintCodes(N); // before the timed phase
        const ex = await drive(t, codes.map(t.codeBody), 'exchange');
        const rf = await drive(
          t,
          ex.answers.map((a) => t.refreshBody(a.refresh_token)),
          'refresh',
        );
        add(exchange, t.name, ex);
        add(refresh, t.name, rf);
        let id: Awaited<ReturnType<typeof drive>> | undefined;
        if (t.openid) {
          const idCodes = await t.mintCodes(N, true);
          id = await drive(t, idCodes.map(t.codeBody), 'exchange-id_token');
          checkIdToken(t, id.answers[0]);
          add(withIdToken, t.name, id);
        }
        if (process.env.BENCH_VERBOSE) {
          console.log(
            `  round ${round + 1} ${t.name}: exchange ${ex.rate.toFixed(0)}/s (server ${ex.busyUs.toFixed(0)} µs CPU/req, of which main thread ${ex.mainUs.toFixed(0)}; client ${ex.clientUs.toFixed(0)} µs), ` +
              `refresh ${rf.rate.toFixed(0)}/s (server ${rf.busyUs.toFixed(0)} µs, main thread ${rf.mainUs.toFixed(0)}; client ${rf.clientUs.toFixed(0)} µs)` +
              (ex.dbUs ? `, PostgreSQL backends ${ex.dbUs.toFixed(0)} / ${rf.dbUs.toFixed(0)} µs` : '') +
              `, load ${loadavg()[0].toFixed(2)}` +
              (id
                ? `, exchange with id_token ${id.rate.toFixed(0)}/s (server ${id.busyUs.toFixed(0)} µs, main thread ${id.mainUs.toFixed(0)})`
                : ''),
          );
        }
      }
    }
  } finally {
    for (const t of targets) await t.close();
  }
  const [a, b, c] = targets.map((t) => t.name);
  const rate = (f: Figures) =>
    `${median(f.rate).toFixed(0).padStart(5)} req/s, ${median(f.cpuUs).toFixed(0).padStart(3)} µs server CPU/req` +
    (median(f.dbUs) > 0 ? ` + ${median(f.dbUs).toFixed(0)} µs PostgreSQL backends` : '');
  console.log(
    `signin token endpoint: ${N} requests per phase, ${ROUNDS} rounds (medians), ${CONNECTIONS} keep-alive connections; ` +
      `each server alone in the main thread, load generator in a worker thread (${process.version})` +
      (DB === 'postgres'
        ? `; pool ${targets[0].name.startsWith('platform') ? (process.env.DATABASE_POOL_SIZE ?? 10) : '-'}`
        : '') +
      `; load average at the end ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  for (const [label, m] of [
    ['code exchange', exchange],
    ['refresh rotation', refresh],
    ['with id_token', withIdToken],
  ] as const) {
    const fa = m.get(a);
    if (!fa) continue;
    if (only) {
      console.log(
        `  ${label.padEnd(16)} ${a}: ${rate(fa)} (load generator ${median(fa.clientUs).toFixed(0)} µs CPU/req)`,
      );
      continue;
    }
    const fb = m.get(b)!;
    if (label === 'with id_token') console.log('  code exchange returning an ES256 id_token (openid scope, nonce):');
    console.log(`  ${label.padEnd(16)} ${a}: ${rate(fa)}   ${b}: ${rate(fb)}`);
    console.log(
      `  ${''.padEnd(16)} ratio: rate ${(median(fa.rate) / median(fb.rate)).toFixed(2)}x, CPU per request ${(median(fb.cpuUs) / median(fa.cpuUs)).toFixed(2)}x ` +
        `(load generator ${median(fa.clientUs).toFixed(0)} / ${median(fb.clientUs).toFixed(0)} µs CPU/req)`,
    );
  }
  if (only) return;
  const fc = exchange.get(c)!;
  console.log(
    `  harness ceiling  ${c}: ${rate(fc)}; rates near it would be bounded by the load generator, not the server`,
  );
  const ratio = median(exchange.get(a)!.rate) / median(exchange.get(b)!.rate);
  // the goals of the performance issue: 3x on SQLite, 2x on PostgreSQL (against the in-memory adapter)
  const goal = DB === 'sqlite' ? 3 : 2;
  console.log(
    `  goal: >= ${goal}x oidc-provider's exchange rate on ${DB_LABEL}: ${ratio >= goal ? 'met' : 'NOT met'} (${ratio.toFixed(2)}x)`,
  );
  const idRatio = median(withIdToken.get(a)!.rate) / median(withIdToken.get(b)!.rate);
  console.log(
    `  goal: >= 2x oidc-provider's rate for an exchange returning an id_token: ${idRatio >= 2 ? 'met' : 'NOT met'} (${idRatio.toFixed(2)}x)`,
  );
  record(`code exchange / oidc-provider, rate (${DB})`, ratio, { goal });
  record(`refresh rotation / oidc-provider, rate (${DB})`, median(refresh.get(a)!.rate) / median(refresh.get(b)!.rate));
  record(`exchange with id_token / oidc-provider, rate (${DB})`, idRatio, { goal: 2 });
  record(`exchange with id_token, server CPU (${DB})`, median(withIdToken.get(a)!.cpuUs), {
    better: 'lower',
    unit: 'µs/req',
  });
}

/**
 * Both servers must really sign: an ES256 JWT carrying the code's nonce and the identity claims.
 * (oidc-provider adds no at_hash at the token endpoint, where it is optional; this service does.)
 */
function checkIdToken(t: Target, answer: Record<string, string>): void {
  const parts = answer.id_token?.split('.') ?? [];
  const header = parts.length === 3 ? JSON.parse(Buffer.from(parts[0], 'base64url').toString()) : null;
  const claims = parts.length === 3 ? JSON.parse(Buffer.from(parts[1], 'base64url').toString()) : null;
  if (header?.alg !== 'ES256' || !/^nonce-\d+$/.test(claims?.nonce) || !claims.address || !claims.platformAddress) {
    throw new Error(
      `${t.name} did not return an ES256 id_token with the nonce and identity claims: ${JSON.stringify(answer).slice(0, 300)}`,
    );
  }
}

if (isMainThread) await main();
else await loadGenerator();
