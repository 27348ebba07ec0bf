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
import { Pool, buildConnector, errors as undiciErrors, type Dispatcher } from 'undici';
import type { AppContext } from '../context.ts';
import { parseCidrList, refusalOfAddress, type Cidr } from './addresses.ts';
import { checkUrlSyntax, parseTarget, selfAddressRefusal, type ParsedTarget, type UrlRules } from './url.ts';

export { checkUrlSyntax } from './url.ts';

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
/** Pools kept open at once; the least recently used one is closed beyond this. */
const MAX_POOLS = 256;
const CONNECTIONS_PER_POOL = 32;
const KEEP_ALIVE_MS = 60_000;
/** Parsed URLs remembered per client. */
const MAX_TARGETS = 1024;

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
const RESERVED_HEADERS = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
]);

const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

export class Egress {
  private readonly rules: UrlRules;
  private readonly allowed: readonly Cidr[];
  private readonly resolve: Resolver;
  private readonly ca: string[] | undefined;
  private readonly pools = new Map<string, Pool>();
  private readonly targets = new Map<string, Target | string>();
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
  async checkUrl(input: string): Promise<{ url: URL; address: string }> {
    const target = this.target(input);
    return {
      url: target.url,
      address: target.literal ?? this.notSelf(target, await this.resolveChecked(target.host, (p) => p)),
    };
  }

  /**
   * The URL's parsed and checked target. The checks are a pure function of the URL and this
   * client's rules, so the answer is remembered (bounded): an address literal needs no further
   * check, a name is still resolved and checked at every call.
   */
  private target(input: string): Target {
    let target = this.targets.get(input);
    if (target === undefined) {
      const parsed = parseTarget(input, this.rules);
      target =
        typeof parsed === 'string'
          ? parsed
          : { ...parsed, path: `${parsed.url.pathname}${parsed.url.search}`, origin: parsed.url.origin };
      if (this.targets.size >= MAX_TARGETS) this.targets.delete(this.targets.keys().next().value!);
      this.targets.set(input, target);
    }
    if (typeof target === 'string') throw new EgressError('refused', target);
    return target;
  }

  /** A resolved address, unless it is the service itself (address literals are judged before). */
  private notSelf(target: ParsedTarget, address: string): string {
    const refusal = selfAddressRefusal(target, address, this.rules);
    if (refusal) throw new EgressError('refused', refusal);
    return address;
  }

  /** Resolves a name once; every answer must be public. The first answer is the one to connect to. */
  private async resolveChecked(host: string, bounded: <T>(p: Promise<T>) => Promise<T>): Promise<string> {
    let addresses: string[];
    try {
      addresses = await bounded(this.resolve(host));
    } catch (err) {
      if (err instanceof EgressError) throw err;
      throw new EgressError(
        'network',
        `${host} could not be resolved (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
    if (addresses.length === 0) throw new EgressError('network', `${host} has no address`);
    // every answer must be public: a resolver could otherwise pick the private one later
    for (const address of addresses) {
      const refusal = refusalOfAddress(address, this.allowed);
      if (refusal)
        throw new EgressError('refused', `${host} resolves to ${refusal}; only public addresses may be called`);
    }
    return addresses[0]!;
  }

  /** One exchange with a checked, pinned address. Non-2xx statuses are returned; a 3xx throws. */
  async request(req: EgressRequest): Promise<EgressResponse> {
    if (this.closed) throw new EgressError('invalid-request', 'the egress client is closed');
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxBytes = req.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    const headers = validHeaders(req.headers ?? {});
    this.counters.requests++;
    const target = this.target(req.url);
    // one deadline for resolution, connection, request and response
    const deadline = new Deadline(timeoutMs);
    try {
      const address =
        target.literal ?? this.notSelf(target, await this.resolveChecked(target.host, (p) => deadline.race(p)));
      const pool = this.poolFor(target, address);
      return await exchange(
        pool,
        {
          path: target.path,
          method: req.method ?? 'POST',
          headers,
          body: req.body ?? null,
        },
        maxBytes,
        deadline,
      );
    } finally {
      deadline.clear();
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

  private poolFor(target: Target, address: string): Pool {
    const key = `${target.origin}|${address}`;
    let pool = this.pools.get(key);
    if (pool) {
      // Map order is insertion order: re-inserting marks it most recently used
      this.pools.delete(key);
      this.pools.set(key, pool);
      return pool;
    }
    // SNI carries the name without brackets or a trailing dot (servers match certificates on that)
    const url = target.url;
    const hostname = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
    const isLiteral = hostname.includes(':') || /^[\d.]+$/.test(hostname);
    const connector = buildConnector({
      ...(this.ca ? { ca: this.ca } : {}),
      ALPNProtocols: ['http/1.1'],
    } as buildConnector.BuildOptions);
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

/** A checked target with the parts every request to it uses. */
interface Target extends ParsedTarget {
  /** The request target: path and query. */
  path: string;
  origin: string;
}

/** One timer for the whole exchange; what is running when it fires is aborted with a timeout. */
class Deadline {
  private readonly timer: NodeJS.Timeout;
  private onExpire: ((err: EgressError) => void) | null = null;
  expired: EgressError | null = null;
  readonly ms: number;

  constructor(ms: number) {
    this.ms = ms;
    this.timer = setTimeout(() => {
      this.expired = new EgressError('timeout', `no complete response within ${ms} ms`);
      this.onExpire?.(this.expired);
    }, ms);
  }

  /** Runs `fn` now if the deadline has passed, else when it passes (replacing the previous one). */
  whenExpired(fn: (err: EgressError) => void): void {
    if (this.expired) fn(this.expired);
    else this.onExpire = fn;
  }

  race<T>(p: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.whenExpired(reject);
      p.then(resolve, reject);
    });
  }

  clear(): void {
    clearTimeout(this.timer);
    this.onExpire = null;
  }
}

interface Exchange {
  path: string;
  method: string;
  headers: Record<string, string>;
  body: string | Buffer | null;
}

/**
 * The request on the pool, through undici's dispatch API: the answer's chunks are collected as
 * they arrive (no stream, no abort signal), and a redirect, a body past the cap, a failure or the
 * deadline abort the exchange, which closes that connection.
 */
function exchange(pool: Pool, req: Exchange, maxBytes: number, deadline: Deadline): Promise<EgressResponse> {
  return new Promise<EgressResponse>((resolve, reject) => {
    const handler = new ExchangeHandler(resolve, reject, maxBytes);
    // a request that never started (it waited for a free connection, or its connection was still
    // being opened) was not sent at all, and says so: the endpoint cannot have seen it
    deadline.whenExpired((err) =>
      handler.fail(
        handler.controller
          ? err
          : new EgressError('timeout', `not sent: no connection to the endpoint was ready within ${deadline.ms} ms`),
      ),
    );
    if (handler.settled) return;
    pool.dispatch(
      // the deadline bounds the exchange; undici's own (longer) timers stay out of the way
      {
        path: req.path,
        method: req.method as Dispatcher.HttpMethod,
        headers: req.headers,
        body: req.body,
        headersTimeout: 0,
        bodyTimeout: 0,
      },
      handler,
    );
  });
}

/** One exchange's handler: one object per call (its state and undici's callbacks), not a closure each. */
class ExchangeHandler implements Dispatcher.DispatchHandler {
  controller: Dispatcher.DispatchController | null = null;
  settled = false;
  private status = 0;
  private headers: EgressResponse['headers'] = {};
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private readonly resolve: (res: EgressResponse) => void;
  private readonly reject: (err: EgressError) => void;
  private readonly maxBytes: number;

  constructor(resolve: (res: EgressResponse) => void, reject: (err: EgressError) => void, maxBytes: number) {
    this.resolve = resolve;
    this.reject = reject;
    this.maxBytes = maxBytes;
  }

  fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(asEgressError(err));
    // an abort after settling is swallowed: its onResponseError finds the promise settled
    const controller = this.controller;
    if (controller && !controller.aborted) controller.abort(err instanceof Error ? err : new Error(String(err)));
  }

  onRequestStart(c: Dispatcher.DispatchController): void {
    this.controller = c;
    if (this.settled) c.abort(new Error('abandoned'));
  }

  onResponseStart(
    _c: Dispatcher.DispatchController,
    statusCode: number,
    responseHeaders: EgressResponse['headers'],
  ): void {
    if (statusCode < 200) return; // 1xx: the real answer follows
    if (statusCode >= 300 && statusCode < 400) {
      // the target is named (clipped: it is the endpoint's text) so an owner can see where it pointed
      const location = typeof responseHeaders.location === 'string' ? responseHeaders.location.slice(0, 200) : null;
      return this.fail(
        new EgressError(
          'redirect',
          `the endpoint answered ${statusCode} (a redirect${location ? ` to ${location}` : ''}); redirects are not followed`,
        ),
      );
    }
    const declared = Number(responseHeaders['content-length']);
    if (Number.isFinite(declared) && declared > this.maxBytes) return this.fail(tooLarge(this.maxBytes));
    this.status = statusCode;
    this.headers = responseHeaders;
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.length;
    if (this.size > this.maxBytes) return this.fail(tooLarge(this.maxBytes));
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settled = true;
    const chunks = this.chunks;
    const res = {
      status: this.status,
      headers: this.headers,
      body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.size),
    };
    // undici frees the connection in a setImmediate it schedules after this callback: answering
    // after that one lets the caller's next call reuse the connection instead of opening (and
    // handshaking) another
    const resolve = this.resolve;
    queueMicrotask(() => setImmediate(resolve, res));
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.fail(err);
  }
}

function tooLarge(maxBytes: number): EgressError {
  return new EgressError('too-large', `the response body exceeds ${maxBytes} bytes`);
}

// header names that passed the name checks (the same few names come with every call), up to this many
const MAX_CHECKED_NAMES = 1024;
const checkedNames = new Set<string>();

function validHeaders(headers: Record<string, string>): Record<string, string> {
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (!checkedNames.has(name)) {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
        throw new EgressError('invalid-request', `"${name}" is not a valid header name`);
      if (RESERVED_HEADERS.has(name.toLowerCase()))
        throw new EgressError('invalid-request', `the header "${name}" may not be set`);
      if (checkedNames.size < MAX_CHECKED_NAMES) checkedNames.add(name);
    }
    if (typeof value !== 'string' || /[\r\n\0]/.test(value))
      throw new EgressError('invalid-request', `the header "${name}" has an invalid value`);
  }
  return headers;
}

function asEgressError(err: unknown): EgressError {
  if (err instanceof EgressError) return err;
  const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const code = e.code ?? e.cause?.code;
  if (err instanceof undiciErrors.ConnectTimeoutError) return new EgressError('timeout', 'the connection timed out');
  // OpenSSL's messages name its source files and lines; its reason is the part worth showing
  const reason = (e as { reason?: unknown }).reason;
  const message = code?.startsWith('ERR_SSL_') && typeof reason === 'string' ? `TLS ${reason}` : e.message;
  const detail = code && !/^UND_ERR/.test(code) ? `${code}: ${message}` : message;
  return new EgressError('network', `the call failed (${detail})`);
}

/** The egress rules of a deployment's configuration (plain data: a worker thread can take them). */
export const egressOptionsOf = (ctx: Pick<AppContext, 'config'>): Omit<EgressOptions, 'resolve'> => ({
  publicUrl: ctx.config.publicUrl,
  allowPrivateCidrs: ctx.config.egressAllowPrivateCidrs,
  extraCaPem: ctx.config.egressExtraCaPem,
});

/** The egress client of one AppContext (`services.egress`), created on first use and closed with the context. */
export function egressFor(ctx: Pick<AppContext, 'config' | 'services' | 'onClose'>): Egress {
  let egress = ctx.services.egress;
  if (!egress) {
    const created = (ctx.services.egress = egress = new Egress(egressOptionsOf(ctx)));
    ctx.onClose.push(() => created.close());
  }
  return egress;
}
