// Shared fixtures for the swap tests and benchmark: pool JSON in the chain's REST format, a seeded
// RNG, random pool sets, and small local HTTP servers speaking the chain REST and Skip Go formats.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PATIENCE_MS } from '../helpers/patience.ts';

export type AssetSpec = [denom: string, amount: bigint | string | number, weight?: bigint | string | number];

export function balancerPool(
  id: number | string,
  assets: AssetSpec[],
  swapFee = '0.003',
  type = '/gamm.poolmodels.balancer.Pool',
): Record<string, unknown> {
  const weights = assets.map((a) => BigInt(a[2] ?? 1) * 1073741824n);
  return {
    '@type': type,
    address: `bb1pool${id}`,
    id: String(id),
    pool_params: { swap_fee: swapFee, exit_fee: '0.000000000000000000' },
    total_shares: { denom: `gamm/pool/${id}`, amount: '100000000000000000000' },
    pool_assets: assets.map((a, i) => ({
      token: { denom: a[0], amount: String(a[1]) },
      weight: weights[i].toString(),
    })),
    total_weight: weights.reduce((x, y) => x + y, 0n).toString(),
  };
}

export function stableswapPool(
  id: number | string,
  liquidity: Array<[denom: string, amount: bigint | string | number, scalingFactor?: number]>,
  swapFee = '0.001',
): Record<string, unknown> {
  return {
    '@type': '/gamm.poolmodels.stableswap.Pool',
    address: `bb1stable${id}`,
    id: String(id),
    pool_params: { swap_fee: swapFee, exit_fee: '0.000000000000000000' },
    future_pool_governor: '',
    total_shares: { denom: `gamm/pool/${id}`, amount: '100000000000000000000' },
    pool_liquidity: liquidity.map(([denom, amount]) => ({ denom, amount: String(amount) })),
    scaling_factors: liquidity.map(([, , f]) => String(f ?? 1)),
    scaling_factor_controller: '',
  };
}

/** Deterministic RNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const randInt = (r: () => number, min: number, max: number): number => min + Math.floor(r() * (max - min + 1));
export const randBig = (r: () => number, digitsMin: number, digitsMax: number): bigint => {
  const digits = randInt(r, digitsMin, digitsMax);
  let s = String(randInt(r, 1, 9));
  for (let i = 1; i < digits; i++) s += String(randInt(r, 0, 9));
  return BigInt(s);
};

/**
 * `n` random two-asset balancer pools over `denoms` denoms (mixed weights and fees). Reserves
 * follow one market price per denom (±0.5%), with pool sizes spread over four orders of magnitude,
 * as arbitrage keeps real pools close to one price.
 */
export function randomPools(
  r: () => number,
  n: number,
  denoms: number,
  opts: { firstId?: number; hubs?: number } = {},
): Record<string, unknown>[] {
  const firstId = opts.firstId ?? 1;
  // hubs: like real DEXes, most pools pair a token with one of a few hub assets
  const hubs = opts.hubs ?? 0;
  const names = Array.from({ length: denoms }, (_, i) => `tok${String(i).padStart(3, '0')}`);
  // price in "value units" per base unit, log-uniform over 10^-3 .. 10^3
  const prices = names.map(() => 10 ** (r() * 6 - 3));
  const weights: Array<[number, number]> = [
    [1, 1],
    [1, 1],
    [1, 1],
    [4, 1],
    [1, 4],
    [5, 3],
    [2, 3],
  ];
  const fees = ['0.003', '0.001', '0.002', '0.005', '0.0025'];
  const pools: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const a = hubs > 0 && r() < 0.75 ? Math.floor(hubs * r() * r()) : randInt(r, 0, denoms - 1);
    let b = randInt(r, 0, denoms - 2);
    if (b >= a) b++;
    const [wa, wb] = weights[randInt(r, 0, weights.length - 1)];
    const tvl = 10 ** (9 + r() * 4); // value units
    const noise = () => 1 + (r() - 0.5) * 0.01;
    const ra = BigInt(Math.max(1000, Math.floor(((tvl * wa) / (wa + wb) / prices[a]) * noise())));
    const rb = BigInt(Math.max(1000, Math.floor(((tvl * wb) / (wa + wb) / prices[b]) * noise())));
    pools.push(
      balancerPool(
        firstId + i,
        [
          [names[a], ra, wa],
          [names[b], rb, wb],
        ],
        fees[randInt(r, 0, fees.length - 1)],
      ),
    );
  }
  return pools;
}

export interface LocalServer {
  url: string;
  /** Request paths (with query) in arrival order. */
  requests: string[];
  close(): Promise<void>;
}

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<LocalServer & { server: Server }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      requests.push(req.url ?? '');
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

export interface ChainState {
  pools: Record<string, unknown>[];
  defaultTakerFee: string;
  /** Directional overrides `${in}|${out}` → fee. */
  pairFees: Record<string, string>;
  /** Collections that exist (tokenization). */
  collections: Set<string>;
  /** Wrappable amount per `${denom}|${address}`. */
  wrappable: Record<string, string>;
  /** Answer every request with this status when set (simulates an outage). */
  failWith?: number;
}

/** A chain REST endpoint: gamm pools (paginated by 2 to exercise next_key), poolmanager params and taker fees, tokenization queries. */
export async function startChainServer(
  initial: Partial<ChainState> = {},
): Promise<LocalServer & { state: ChainState }> {
  const state: ChainState = {
    pools: [],
    defaultTakerFee: '0.000000000000000000',
    pairFees: {},
    collections: new Set(),
    wrappable: {},
    ...initial,
  };
  const srv = await listen((req, res) => {
    if (state.failWith) return send(res, state.failWith, { code: 2, message: 'unavailable' });
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/osmosis/gamm/v1beta1/pools') {
      const limit = 2;
      const offset = u.searchParams.get('pagination.key')
        ? Number(Buffer.from(u.searchParams.get('pagination.key')!, 'base64').toString())
        : 0;
      const page = state.pools.slice(offset, offset + limit);
      const next = offset + limit < state.pools.length ? Buffer.from(String(offset + limit)).toString('base64') : null;
      return send(res, 200, { pools: page, pagination: { next_key: next, total: String(state.pools.length) } });
    }
    if (u.pathname === '/osmosis/poolmanager/v1beta1/Params') {
      return send(res, 200, {
        params: { taker_fee_params: { default_taker_fee: state.defaultTakerFee, admin_addresses: [] } },
      });
    }
    if (u.pathname === '/osmosis/poolmanager/v1beta1/trading_pair_takerfee') {
      const k = `${u.searchParams.get('denom_0')}|${u.searchParams.get('denom_1')}`;
      return send(res, 200, { taker_fee: state.pairFees[k] ?? state.defaultTakerFee });
    }
    let m = /^\/bitbadges\/bitbadgeschain\/tokenization\/get_collection\/(\d+)$/.exec(u.pathname);
    if (m) {
      if (!state.collections.has(m[1])) return send(res, 404, { code: 5, message: 'collection not found' });
      return send(res, 200, { collection: { collectionId: m[1] } });
    }
    m = /^\/bitbadges\/bitbadgeschain\/tokenization\/get_wrappable_balances\/([^/]+)\/([^/]+)$/.exec(u.pathname);
    if (m) {
      const k = `${decodeURIComponent(m[1])}|${decodeURIComponent(m[2])}`;
      return send(res, 200, { amount: state.wrappable[k] ?? '0' });
    }
    send(res, 404, { code: 5, message: 'not found' });
  });
  return { ...srv, state };
}

/** A routing API answering POST /v2/fungible/msgs_direct with `respond(requestBody)` → [status, body]. */
export async function startSkipServer(
  respond: (body: Record<string, unknown>) => [number, unknown],
): Promise<LocalServer & { bodies: Record<string, unknown>[] }> {
  const bodies: Record<string, unknown>[] = [];
  const srv = await listen((req, res, raw) => {
    if (req.method !== 'POST' || req.url !== '/v2/fungible/msgs_direct')
      return send(res, 404, { code: 5, message: 'not found' });
    const body = JSON.parse(raw) as Record<string, unknown>;
    bodies.push(body);
    const [status, answer] = respond(body);
    send(res, status, answer);
  });
  return { ...srv, bodies };
}

/** Waits until `fn` returns a truthy value (polling), or fails after `ms`. */
export async function eventually<T>(
  fn: () => Promise<T | undefined | null | false>,
  ms = PATIENCE_MS,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
