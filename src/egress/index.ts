// The one way the service calls URLs that users supplied (custom plugin endpoints, status
// webhooks). SSRF-safe by construction:
//   - https only, no credentials in the URL, never the service's own host (url.ts);
//   - the name is resolved once per call and every answer must be a public address
//     (addresses.ts); the connection then goes to exactly that address, with the original name
//     as TLS SNI and Host header, so a second DNS answer (rebinding) is never used;
//   - redirects are not followed: a 3xx is a failure;
//   - one deadline covers resolution, connection, request and response; the response body is
//     read up to a cap and the exchange aborted beyond it.
// Connections are kept alive in one pool per origin and pinned address, so a busy endpoint does
// not pay a TLS handshake per call.
import { lookup } from 'node:dns/promises';
import { rootCertificates } from 'node:tls';
import { Pool, buildConnector, errors as undiciErrors } from 'undici';
import type { AppContext } from '../context.ts';
import { parseCidrList, refusalOfAddress, type Cidr } from './addresses.ts';
import { checkUrlSyntax, parseTarget, type UrlRules } from './url.ts';

export { checkUrlSyntax } from './url.ts';

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
/** Pools kept open at once; the least recently used one is closed beyond this. */
const MAX_POOLS = 256;
const CONNECTIONS_PER_POOL = 32;
const KEEP_ALIVE_MS = 60_000;

export type EgressFailure = 'refused' | 'timeout' | 'too-large' | 'redirect' | 'network' | 'invalid-request';

/** A call that was refused or failed; `reason` is a sentence fit for an error record. */
export class EgressError extends Error {
  readonly reason: string;
  readonly kind: EgressFailure;
  constructor(kind: EgressFailure, reason: string) {
    super(reason);
    this.name = 'EgressError';
    this.kind = kind;
    this.reason = reason;
  }
}

/** Resolves a name to its addresses (dns.lookup by default; tests inject one). */
export type Resolver = (hostname: string) => Promise<string[]>;

export interface EgressOptions {
  publicUrl?: string;
  /** CIDR ranges allowed despite being private (tests, local development). */
  allowPrivateCidrs?: readonly string[];
  /** Extra trusted CA certificates (PEM), added to the system roots. */
  extraCaPem?: string | null;
  resolve?: Resolver;
}

export interface EgressRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Deadline of the whole exchange (default 10 s). */
  timeoutMs?: number;
  /** Largest response body read (default 1 MiB); a larger one aborts the exchange. */
  maxResponseBytes?: number;
}

export interface EgressResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface EgressStats {
  requests: number;
  tlsHandshakes: number;
  openPools: number;
}

/** Headers the caller may not set: the framing and the Host are ours. */
const RESERVED_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect', 'proxy-connection']);

const systemResolver: Resolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

export class Egress {
  private readonly rules: UrlRules;
  private readonly allowed: readonly Cidr[];
  private readonly resolve: Resolver;
  private readonly ca: string[] | undefined;
  private readonly pools = new Map<string, Pool>();
  private counters = { requests: 0, tlsHandshakes: 0 };
  private closed = false;

  constructor(options: EgressOptions = {}) {
    this.allowed = parseCidrList(options.allowPrivateCidrs ?? []);
    this.rules = { publicUrl: options.publicUrl, allowed: this.allowed };
    this.resolve = options.resolve ?? systemResolver;
    // an explicit `ca` replaces Node's roots, so the extra CA is added to them
    this.ca = options.extraCaPem ? [...rootCertificates, options.extraCaPem] : undefined;
  }

  /** The reason a URL would be refused before any resolution (for save-time validation), or null. */
  checkUrlSyntax(url: string): string | null {
    return checkUrlSyntax(url, this.rules);
  }

  /**
   * Checks a URL and resolves its host once: the address returned is the one a request connects
   * to. Throws EgressError (kind 'refused') naming the reason.
   */
  async checkUrl(input: string, signal?: AbortSignal): Promise<{ url: URL; address: string }> {
    const target = parseTarget(input, this.rules);
    if (typeof target === 'string') throw new EgressError('refused', target);
    if (target.literal !== null) return { url: target.url, address: target.literal };
    let addresses: string[];
    try {
      addresses = await raceAbort(this.resolve(target.host), signal);
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new EgressError('network', `${target.host} could not be resolved (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    if (addresses.length === 0) throw new EgressError('network', `${target.host} has no address`);
    // every answer must be public: a resolver could otherwise pick the private one later
    for (const address of addresses) {
      const refusal = refusalOfAddress(address, this.allowed);
      if (refusal) throw new EgressError('refused', `${target.host} resolves to ${refusal}; only public addresses may be called`);
    }
    return { url: target.url, address: addresses[0]! };
  }

  /** One exchange with a checked, pinned address. Non-2xx statuses are returned; a 3xx throws. */
  async request(req: EgressRequest): Promise<EgressResponse> {
    if (this.closed) throw new EgressError('invalid-request', 'the egress client is closed');
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxBytes = req.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    const headers = validHeaders(req.headers ?? {});
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new EgressError('timeout', `no complete response within ${timeoutMs} ms`)), timeoutMs);
    this.counters.requests++;
    try {
      const { url, address } = await this.checkUrl(req.url, deadline.signal);
      const pool = this.poolFor(url, address);
      const res = await pool.request({
        path: `${url.pathname}${url.search}`,
        method: (req.method ?? 'POST') as 'POST',
        headers,
        body: req.body ?? null,
        signal: deadline.signal,
        // the deadline above bounds the exchange; undici's own (longer) timers stay out of the way
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      if (res.statusCode >= 300 && res.statusCode < 400) {
        abandon(res.body);
        // the target is named (clipped: it is the endpoint's text) so an owner can see where it pointed
        const location = typeof res.headers.location === 'string' ? res.headers.location.slice(0, 200) : null;
        throw new EgressError('redirect', `the endpoint answered ${res.statusCode} (a redirect${location ? ` to ${location}` : ''}); redirects are not followed`);
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) {
        abandon(res.body);
        throw tooLarge(maxBytes);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes) {
          abandon(res.body);
          throw tooLarge(maxBytes);
        }
        chunks.push(chunk);
      }
      // undici frees the connection just after the body ends: answering one turn later lets the
      // caller's next call reuse it instead of opening (and handshaking) another
      await new Promise(setImmediate);
      return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks, size) };
    } catch (err) {
      throw asEgressError(err, deadline.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  stats(): EgressStats {
    return { ...this.counters, openPools: this.pools.size };
  }

  async close(): Promise<void> {
    this.closed = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.close().catch(() => p.destroy())));
  }

  private poolFor(url: URL, address: string): Pool {
    const key = `${url.origin}|${address}`;
    let pool = this.pools.get(key);
    if (pool) {
      // Map order is insertion order: re-inserting marks it most recently used
      this.pools.delete(key);
      this.pools.set(key, pool);
      return pool;
    }
    // SNI carries the name without brackets or a trailing dot (servers match certificates on that)
    const hostname = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
    const isLiteral = hostname.includes(':') || /^[\d.]+$/.test(hostname);
    const connector = buildConnector({ ...(this.ca ? { ca: this.ca } : {}), ALPNProtocols: ['http/1.1'] } as buildConnector.BuildOptions);
    pool = new Pool(url.origin, {
      connections: CONNECTIONS_PER_POOL,
      keepAliveTimeout: KEEP_ALIVE_MS,
      keepAliveMaxTimeout: KEEP_ALIVE_MS,
      // DNS pinning: the socket goes to the checked address; SNI carries the name (never an IP)
      connect: (opts, callback) =>
        connector({ ...opts, hostname: address, ...(isLiteral ? {} : { servername: hostname }) }, (err, socket) => {
          if (!err) this.counters.tlsHandshakes++;
          callback(err as Error, socket as never);
        }),
    });
    this.pools.set(key, pool);
    if (this.pools.size > MAX_POOLS) {
      const [oldestKey, oldest] = this.pools.entries().next().value as [string, Pool];
      this.pools.delete(oldestKey);
      void oldest.close().catch(() => oldest.destroy());
    }
    return pool;
  }
}

/** Stops reading a response and closes its connection (undici reports the abort as an error event). */
function abandon(body: NodeJS.ReadableStream & { destroy(): void }): void {
  body.on('error', () => {});
  body.destroy();
}

function tooLarge(maxBytes: number): EgressError {
  return new EgressError('too-large', `the response body exceeds ${maxBytes} bytes`);
}

function validHeaders(headers: Record<string, string>): Record<string, string> {
  for (const [name, value] of Object.entries(headers)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new EgressError('invalid-request', `"${name}" is not a valid header name`);
    if (RESERVED_HEADERS.has(name.toLowerCase())) throw new EgressError('invalid-request', `the header "${name}" may not be set`);
    if (typeof value !== 'string' || /[\r\n\0]/.test(value)) throw new EgressError('invalid-request', `the header "${name}" has an invalid value`);
  }
  return headers;
}

function asEgressError(err: unknown, signal: AbortSignal): EgressError {
  if (err instanceof EgressError) return err;
  if (signal.aborted && signal.reason instanceof EgressError) return signal.reason;
  const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const code = e.code ?? e.cause?.code;
  if (err instanceof undiciErrors.ConnectTimeoutError) return new EgressError('timeout', 'the connection timed out');
  const detail = code && !/^UND_ERR/.test(code) ? `${code}: ${e.message}` : e.message;
  return new EgressError('network', `the call failed (${detail})`);
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      (e) => { signal.removeEventListener('abort', onAbort); reject(e); },
    );
  });
}

const perContext = new WeakMap<AppContext, Egress>();

/** The egress client of one AppContext, created on first use and closed with the context. */
export function egressFor(ctx: AppContext): Egress {
  let egress = perContext.get(ctx);
  if (!egress) {
    egress = new Egress({
      publicUrl: ctx.config.publicUrl,
      allowPrivateCidrs: ctx.config.egressAllowPrivateCidrs,
      extraCaPem: ctx.config.egressExtraCaPem,
    });
    perContext.set(ctx, egress);
    const created = egress;
    ctx.onClose.push(() => created.close());
  }
  return egress;
}
