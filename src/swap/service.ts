// The swap capability's running state: the current pool snapshot and where it comes from (the
// chain's REST endpoint when CHAIN_REST_URL is set, otherwise the pools imported into the
// database), the route cache, the IBC registry and the compliance checker.
import type { SwapConfig } from './config.ts';
import type { AppContext } from '../context.ts';
import { chainClientFor } from '../chain/client.ts';
import { ChainPoolSource } from './chain-source.ts';
import { ComplianceChecker } from './compliance.ts';
import { loadRegistryFile, outboundDenom, type IbcRegistry } from './ibc.ts';
import { buildPoolState, emptyPoolState, type Pool, type PoolState, type TakerFees } from './pools.ts';
import { RouteCache } from './router.ts';
import { importRevision, loadImportedPools } from './storage.ts';

export class SwapService {
  private readonly ctx: AppContext;
  state: PoolState;
  readonly routes = new RouteCache();
  readonly registry: IbcRegistry;
  readonly compliance: ComplianceChecker;
  readonly settings: SwapConfig;
  readonly skipApiUrl: string | null;
  private readonly chain: ChainPoolSource | null;
  private importRevision = -1;
  private timers: NodeJS.Timeout[] = [];
  private refreshing: Promise<void> | null = null;
  private stopped = false;
  /** remote denom → platform denom per registry chain, for the current pool state. */
  private outboundIndex: { fingerprint: string; byChain: Map<string, Map<string, string>> } = {
    fingerprint: '',
    byChain: new Map(),
  };

  constructor(ctx: AppContext, registry?: IbcRegistry) {
    this.ctx = ctx;
    const cfg = ctx.config;
    this.registry = registry ?? loadRegistryFile(cfg.ibcRegistryFile);
    this.settings = cfg.swap;
    this.skipApiUrl = cfg.skipApiUrl;
    this.state = emptyPoolState(ctx.clock.now());
    const client = chainClientFor(ctx);
    this.compliance = new ComplianceChecker(client, () => ctx.clock.now());
    this.chain = client
      ? new ChainPoolSource({
          client,
          takerFeeRefreshMs: cfg.swap.takerFeeRefreshMs,
          now: () => ctx.clock.now(),
          log: ctx.log,
        })
      : null;
  }

  now(): number {
    return this.ctx.clock.now();
  }

  get source(): 'chain' | 'import' {
    return this.chain ? 'chain' : 'import';
  }

  /** First load (awaited, failures logged), then polling. */
  async start(): Promise<void> {
    await this.refresh();
    const every = this.chain ? this.ctx.config.swap.chainPollIntervalMs : this.ctx.config.swap.importPollIntervalMs;
    const timer = setInterval(() => void this.refresh(), every);
    timer.unref();
    this.timers.push(timer);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await this.refreshing;
  }

  /** One refresh at a time; a tick arriving while one runs is dropped. */
  refresh(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (!this.refreshing) {
      this.refreshing = (this.chain ? this.refreshFromChain(this.chain) : this.refreshFromImport()).finally(() => {
        this.refreshing = null;
      });
    }
    return this.refreshing;
  }

  private install(pools: Pool[], takerFees: TakerFees, source: PoolState['source']): void {
    const next = buildPoolState(pools, takerFees, source, this.ctx.clock.now());
    // an unchanged state keeps its identity, so cached routes stay valid
    if (next.fingerprint !== this.state.fingerprint || next.source !== this.state.source) this.state = next;
  }

  private async refreshFromChain(chain: ChainPoolSource): Promise<void> {
    try {
      const { pools, takerFees } = await chain.fetchAll();
      this.install(pools, takerFees, 'chain');
    } catch (err) {
      this.ctx.log.warn(
        { err: (err as Error).message },
        'could not read pool state from CHAIN_REST_URL; keeping the previous state',
      );
    }
  }

  private async refreshFromImport(): Promise<void> {
    try {
      const revision = await importRevision(this.ctx.db);
      if (revision === this.importRevision) return;
      const loaded = await loadImportedPools(this.ctx.db);
      this.importRevision = loaded.revision;
      this.install(loaded.pools, loaded.takerFees, loaded.revision === 0 ? 'none' : 'import');
    } catch (err) {
      if (!this.stopped)
        this.ctx.log.warn({ err: (err as Error).message }, 'could not read imported pools; keeping the previous state');
    }
  }

  /** The platform denom that arrives as `remoteDenom` on `chainId`, among the denoms the pools trade. */
  platformDenomArrivingAs(chainId: string, remoteDenom: string): string | null {
    const chain = this.registry.chains.get(chainId);
    if (!chain) return null;
    if (this.outboundIndex.fingerprint !== this.state.fingerprint)
      this.outboundIndex = { fingerprint: this.state.fingerprint, byChain: new Map() };
    let index = this.outboundIndex.byChain.get(chainId);
    if (!index) {
      index = new Map();
      const candidates = new Set([...this.state.byDenom.keys(), ...this.registry.traces.keys()]);
      for (const d of candidates) {
        const remote = outboundDenom(this.registry, chain, d);
        if (remote !== null && !index.has(remote)) index.set(remote, d);
      }
      this.outboundIndex.byChain.set(chainId, index);
    }
    return index.get(remoteDenom) ?? null;
  }
}
