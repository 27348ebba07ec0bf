// A fake chain REST (LCD) endpoint on 127.0.0.1:0 that answers with the real response shapes of
// the reference note (chain-data-and-connections.md §2–§3): blocks, tx search with results and
// events (successful and failed transactions), tokenization queries (collections, balance stores,
// approval and challenge trackers) and native bank balances. State is versioned by height, so a
// query with `x-cosmos-block-height: h` answers the state as of block h, like an archive node.
//
// Tests drive it through `addBlock` (with `transfer`, `tx`, `failedTx` helpers), `setCollection`,
// `setBalance`, `setTracker`, `setChallenge`, and `nativeBalances`; `hold` / `fail` intercept
// routes to simulate a slow or failing chain; `down()` refuses connections.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { toPlatformAddress } from '../../src/shared/addresses.ts';

/** A valid native (bb1…) address derived from a number. */
export function addressOf(n: number): string {
  const bytes = new Uint8Array(20);
  new DataView(bytes.buffer).setUint32(16, n);
  bytes[0] = 0xc4;
  return toPlatformAddress(bytes);
}

export const MAX_UINT64 = '18446744073709551615';
export const FULL_RANGE = [{ start: '1', end: MAX_UINT64 }];
const T = '/bitbadges/bitbadgeschain/tokenization';

export interface Attr {
  key: string;
  value: string;
  index: boolean;
}
export interface FakeEvent {
  type: string;
  attributes: Attr[];
}
export interface Balance {
  amount: string;
  ownershipTimes: { start: string; end: string }[];
  tokenIds: { start: string; end: string }[];
}

export interface FakeTx {
  code: number;
  events: FakeEvent[];
  memo?: string;
  messages?: unknown[];
}

interface StoredBlock {
  height: number;
  time: string;
  txs: { raw: string; hash: string; tx: FakeTx }[];
}

type Versioned<V> = { height: number; value: V }[];

const attrs = (o: Record<string, string>): Attr[] =>
  Object.entries(o).map(([key, value]) => ({ key, value, index: true }));

/** `usedApprovalDetails` event of one transfer leg (reference note §4.3). */
export function transferEvent(leg: {
  collectionId: string;
  from: string;
  to: string;
  initiatedBy?: string;
  balances: Balance[];
  msgIndex?: number;
}): FakeEvent {
  return {
    type: 'usedApprovalDetails',
    attributes: attrs({
      module: 'tokenization',
      collectionId: leg.collectionId,
      from: leg.from,
      to: leg.to,
      initiatedBy: leg.initiatedBy ?? (leg.from === 'Mint' ? leg.to : leg.from),
      coinTransfers: '[]',
      approvalsUsed: JSON.stringify([
        { ApprovalId: 'transferable', ApprovalLevel: 'collection', ApproverAddress: '', Version: '0' },
      ]),
      balances: JSON.stringify(leg.balances),
      msg_index: String(leg.msgIndex ?? 0),
    }),
  };
}

/** `indexer` event every tokenization message emits (`msg_type`, `collectionId`, `sender`). */
export function messageEvent(m: { msgType: string; collectionId?: string; sender: string; msg?: unknown }): FakeEvent {
  return {
    type: 'indexer',
    attributes: attrs({
      module: 'tokenization',
      sender: m.sender,
      msg_type: m.msgType,
      msg: JSON.stringify(m.msg ?? {}),
      ...(m.collectionId !== undefined ? { collectionId: m.collectionId } : {}),
    }),
  };
}

/** Tracker increment event (dynamic type name; matched by its `amountTrackerId` attribute). */
export function trackerEvent(k: {
  collectionId: string;
  approvalId: string;
  approverAddress: string;
  amountTrackerId: string;
  approvalLevel: string;
  trackerType: string;
  approvedAddress: string;
  numTransfers: string;
  amounts?: Balance[];
}): FakeEvent {
  return {
    type: `approval${k.collectionId}${k.approverAddress}${k.approvalId}${k.amountTrackerId}${k.approvalLevel}${k.trackerType}${k.approvedAddress}`,
    attributes: attrs({
      collectionId: k.collectionId,
      approvalId: k.approvalId,
      approverAddress: k.approverAddress,
      amountTrackerId: k.amountTrackerId,
      approvalLevel: k.approvalLevel,
      trackerType: k.trackerType,
      approvedAddress: k.approvedAddress,
      amounts: JSON.stringify(k.amounts ?? []),
      numTransfers: JSON.stringify(k.numTransfers),
      lastUpdatedAt: '0',
    }),
  };
}

export function challengeEvent(k: {
  collectionId: string;
  approvalId: string;
  challengeTrackerId: string;
  leafIndex: string;
  approverAddress: string;
  approvalLevel: string;
  creator: string;
  numUsed: string;
}): FakeEvent {
  return {
    type: `challenge${k.approvalId}${k.challengeTrackerId}${k.leafIndex}${k.approverAddress}${k.approvalLevel}${k.numUsed}`,
    attributes: attrs({
      creator: k.creator,
      collectionId: k.collectionId,
      challengeTrackerId: k.challengeTrackerId,
      approvalId: k.approvalId,
      leafIndex: k.leafIndex,
      approverAddress: k.approverAddress,
      approvalLevel: k.approvalLevel,
      numUsed: k.numUsed,
    }),
  };
}

/** A balance store as `get_balance` returns it. */
export function balanceStore(balances: Balance[] = []): Record<string, unknown> {
  return {
    balances,
    outgoingApprovals: [],
    incomingApprovals: [],
    autoApproveSelfInitiatedOutgoingTransfers: true,
    autoApproveSelfInitiatedIncomingTransfers: true,
    autoApproveAllIncomingTransfers: true,
    userPermissions: {
      canUpdateOutgoingApprovals: [],
      canUpdateIncomingApprovals: [],
      canUpdateAutoApproveSelfInitiatedOutgoingTransfers: [],
      canUpdateAutoApproveSelfInitiatedIncomingTransfers: [],
      canUpdateAutoApproveAllIncomingTransfers: [],
    },
  };
}

/** A collection as `get_collection` returns it. */
export function collectionDoc(
  id: string,
  manager: string,
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    collectionId: id,
    collectionMetadata: { uri: `ipfs://collection-${id}`, customData: '' },
    tokenMetadata: [],
    customData: '',
    manager,
    collectionPermissions: { canDeleteCollection: [] },
    collectionApprovals: [{ fromListId: 'Mint', toListId: 'All', approvalId: 'public-mint', version: '0' }],
    standards: [],
    isArchived: false,
    defaultBalances: balanceStore(),
    createdBy: manager,
    validTokenIds: [{ start: '1', end: '100' }],
    mintEscrowAddress: '',
    cosmosCoinWrapperPaths: [],
    invariants: { noCustomOwnershipTimes: false, maxSupplyPerId: '0', cosmosCoinBackedPath: null },
    aliasPaths: [],
    ...over,
  };
}

/** `amount` of each id in [start, end], owned for all time. */
export const bal = (
  amount: string | bigint | number,
  start: string | number,
  end: string | number = start,
): Balance => ({
  amount: String(amount),
  ownershipTimes: FULL_RANGE,
  tokenIds: [{ start: String(start), end: String(end) }],
});

export interface Interceptor {
  /** Matched against the request path with query. */
  match: (path: string, height: number | null) => boolean;
  /** A status to answer with, or a promise the answer waits for. */
  action: { status: number; message?: string } | { wait: Promise<void> };
  /** Remaining uses; unlimited when absent. */
  times?: number;
}

export class FakeChain {
  url = '';
  readonly blocks: StoredBlock[] = [];
  /** Paths requested (with query), in arrival order. */
  readonly requests: { path: string; height: number | null }[] = [];
  readonly nativeBalances = new Map<string, string>();
  private collections = new Map<string, Versioned<Record<string, unknown> | null>>();
  private balances = new Map<string, Versioned<Record<string, unknown>>>();
  private trackers = new Map<string, Versioned<Record<string, unknown>>>();
  private challenges = new Map<string, Versioned<string>>();
  /** Simple per-collection token ledgers (tokenId → amount) used by `transfer()`. */
  private ledgers = new Map<string, Map<bigint, bigint>>();
  private interceptors: Interceptor[] = [];
  private server: Server | null = null;
  private genesisTime = Date.parse('2026-07-13T12:00:00Z');
  /** Block time step in ms. */
  blockMs = 1500;
  /** A fixed latency added to every answer (benchmarks). */
  latencyMs = 0;
  /** Heights below this answer "pruned" (state queries only). */
  prunedBelow = 0;

  get height(): number {
    return this.blocks.length;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  /** Stops listening (connections refused) until `up()`. */
  async down(): Promise<void> {
    const port = Number(new URL(this.url).port);
    await this.close();
    this.downPort = port;
  }
  private downPort = 0;
  async up(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(this.downPort, '127.0.0.1', resolve));
  }

  intercept(i: Interceptor): void {
    this.interceptors.push(i);
  }
  clearInterceptors(): void {
    this.interceptors = [];
  }

  // ---- state ------------------------------------------------------------------------------

  private put<V>(map: Map<string, Versioned<V>>, key: string, value: V, height: number): void {
    const list = map.get(key) ?? [];
    // one version per height: a later write at the same height replaces it
    if (list.length && list[list.length - 1].height === height) list[list.length - 1].value = value;
    else list.push({ height, value });
    map.set(key, list);
  }
  private at<V>(map: Map<string, Versioned<V>>, key: string, height: number): V | undefined {
    const list = map.get(key);
    if (!list) return undefined;
    let found: V | undefined;
    for (const v of list) if (v.height <= height) found = v.value;
    return found;
  }

  /** Sets (or deletes with null) a collection as of `height` (default: the next block). */
  setCollection(id: string, doc: Record<string, unknown> | null, height = this.height + 1): void {
    this.put(this.collections, id, doc, height);
  }
  setBalance(collectionId: string, address: string, store: Record<string, unknown>, height = this.height + 1): void {
    this.put(this.balances, `${collectionId}/${address}`, store, height);
  }
  setTracker(path: string, tracker: Record<string, unknown>, height = this.height + 1): void {
    this.put(this.trackers, path, tracker, height);
  }
  setChallenge(path: string, numUsed: string, height = this.height + 1): void {
    this.put(this.challenges, path, numUsed, height);
  }
  collectionAt(id: string, height = this.height): Record<string, unknown> | null | undefined {
    return this.at(this.collections, id, height);
  }

  // ---- blocks -----------------------------------------------------------------------------

  /** A successful tx with these events. */
  tx(events: FakeEvent[], memo = ''): FakeTx {
    return { code: 0, events, memo };
  }
  /** A failed tx (code 5): its events are reported but its state changes never happened. */
  failedTx(events: FakeEvent[]): FakeTx {
    return { code: 5, events };
  }

  /**
   * A transfer of `amount` of token `tokenId` (one id, all ownership times) in a simple ledger per
   * (collection, address); updates the balance stores from the next block on and returns the tx.
   * `failed` leaves the state alone.
   */
  transfer(t: {
    collectionId: string;
    from: string;
    to: string;
    tokenId: string | number;
    amount: string | bigint | number;
    failed?: boolean;
    memo?: string;
  }): FakeTx {
    const balances = [bal(String(t.amount), t.tokenId)];
    const events = [
      transferEvent({ collectionId: t.collectionId, from: t.from, to: t.to, balances }),
      messageEvent({
        msgType: 'transfer_tokens',
        collectionId: t.collectionId,
        sender: t.from === 'Mint' ? t.to : t.from,
      }),
    ];
    if (t.failed) return this.failedTx(events);
    const id = BigInt(t.tokenId);
    const amount = BigInt(t.amount);
    if (t.from !== 'Mint') this.move(t.collectionId, t.from, id, -amount);
    this.move(t.collectionId, t.to, id, amount);
    return this.tx(events, t.memo ?? '');
  }

  private move(collectionId: string, address: string, id: bigint, delta: bigint): void {
    const key = `${collectionId}/${address}`;
    const ledger = this.ledgers.get(key) ?? new Map<bigint, bigint>();
    const next = (ledger.get(id) ?? 0n) + delta;
    if (next < 0n) throw new Error(`fake chain: ${address} cannot send ${-delta} of token ${id}`);
    if (next === 0n) ledger.delete(id);
    else ledger.set(id, next);
    this.ledgers.set(key, ledger);
    const balances = [...ledger].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([tid, amt]) => bal(amt, String(tid)));
    this.setBalance(collectionId, address, balanceStore(balances));
  }

  /** Appends a block holding `txs` (raw bytes are random, hashes derive from them); returns its height. */
  addBlock(txs: FakeTx[] = []): number {
    const height = this.height + 1;
    const stored: StoredBlock = {
      height,
      time: new Date(this.genesisTime + height * this.blockMs).toISOString(),
      txs: txs.map((tx) => {
        const raw = randomBytes(48).toString('base64');
        return { raw, hash: createHash('sha256').update(Buffer.from(raw, 'base64')).digest('hex').toUpperCase(), tx };
      }),
    };
    this.blocks.push(stored);
    return height;
  }

  /** Empty blocks up to `height`. */
  advanceTo(height: number): void {
    while (this.height < height) this.addBlock();
  }

  // ---- HTTP -------------------------------------------------------------------------------

  private send(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }
  private grpcError(res: ServerResponse, status: number, code: number, message: string): void {
    this.send(res, status, { code, message, details: [] });
  }

  private blockJson(b: StoredBlock): unknown {
    const header = {
      version: { block: '11', app: '0' },
      chain_id: 'bitbadges-1',
      height: String(b.height),
      time: b.time,
      proposer_address: 'bb1valcons',
    };
    return {
      block_id: {
        hash: createHash('sha256').update(String(b.height)).digest('base64'),
        part_set_header: { total: 1, hash: '' },
      },
      block: { header, data: { txs: b.txs.map((t) => t.raw) }, evidence: { evidence: [] }, last_commit: null },
      sdk_block: { header, data: { txs: b.txs.map((t) => t.raw) }, evidence: { evidence: [] }, last_commit: null },
    };
  }

  private txResponse(b: StoredBlock, t: StoredBlock['txs'][number]): unknown {
    return {
      height: String(b.height),
      txhash: t.hash,
      codespace: t.tx.code === 0 ? '' : 'tokenization',
      code: t.tx.code,
      data: '',
      raw_log: t.tx.code === 0 ? '' : 'failed to execute message; message index: 0: transfer not approved',
      logs: [],
      info: '',
      gas_wanted: '400000',
      gas_used: '231877',
      tx: { '@type': '/cosmos.tx.v1beta1.Tx' },
      timestamp: b.time,
      events: [{ type: 'tx', attributes: attrs({ fee: '5000ubadge' }) }, ...t.tx.events],
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = req.url ?? '/';
    const hdr = req.headers['x-cosmos-block-height'];
    const pinned = typeof hdr === 'string' && /^\d+$/.test(hdr) ? Number(hdr) : null;
    this.requests.push({ path, height: pinned });
    for (const i of this.interceptors) {
      if (i.times === 0 || !i.match(path, pinned)) continue;
      if (i.times !== undefined) i.times--;
      if ('status' in i.action) return this.grpcError(res, i.action.status, 13, i.action.message ?? 'internal error');
      await i.action.wait;
    }
    if (this.latencyMs) await new Promise((r) => setTimeout(r, this.latencyMs));
    const u = new URL(path, 'http://x');
    const p = u.pathname;
    const height = pinned ?? this.height;
    if (pinned !== null && pinned > this.height)
      return this.grpcError(
        res,
        400,
        3,
        `invalid height: cannot query with height in the future; please provide a valid height`,
      );
    if (pinned !== null && pinned < this.prunedBelow)
      return this.grpcError(res, 400, 3, `version does not exist (pruned)`);
    let m: RegExpExecArray | null;

    if (p === '/cosmos/base/tendermint/v1beta1/blocks/latest') {
      if (!this.height) return this.grpcError(res, 500, 2, 'no blocks yet');
      return this.send(res, 200, this.blockJson(this.blocks[this.height - 1]));
    }
    if ((m = /^\/cosmos\/base\/tendermint\/v1beta1\/blocks\/(\d+)$/.exec(p))) {
      const h = Number(m[1]);
      if (h < 1 || h > this.height)
        return this.grpcError(
          res,
          400,
          3,
          `requested block height ${h} is bigger then the chain length ${this.height}`,
        );
      return this.send(res, 200, this.blockJson(this.blocks[h - 1]));
    }
    if (p === '/cosmos/tx/v1beta1/txs') {
      const q = u.searchParams.get('query') ?? '';
      const qm = /^tx\.height=(\d+)$/.exec(q);
      if (!qm) return this.grpcError(res, 400, 3, 'query must be tx.height=N in this fake');
      const b = this.blocks[Number(qm[1]) - 1];
      const all = b ? b.txs : [];
      const limit = Math.min(Number(u.searchParams.get('limit') ?? '100'), 100);
      const page = Number(u.searchParams.get('page') ?? '1');
      const pages = Math.max(1, Math.ceil(all.length / limit));
      if (page < 1 || page > pages)
        return this.grpcError(res, 500, 2, `page should be within [1, ${pages}] range, given ${page}`);
      const slice = all.slice((page - 1) * limit, page * limit);
      return this.send(res, 200, {
        txs: slice.map((t) => ({
          body: {
            messages: t.tx.messages ?? [],
            memo: t.tx.memo ?? '',
            timeout_height: '0',
            extension_options: [],
            non_critical_extension_options: [],
          },
          auth_info: {},
          signatures: [],
        })),
        tx_responses: slice.map((t) => this.txResponse(b!, t)),
        pagination: null,
        total: String(all.length),
      });
    }
    if ((m = /^\/cosmos\/bank\/v1beta1\/balances\/([^/]+)\/by_denom$/.exec(p))) {
      const addr = decodeURIComponent(m[1]);
      if (!/^bb1[02-9ac-hj-np-z]{38,}$/.test(addr)) return this.grpcError(res, 400, 3, 'invalid address');
      return this.send(res, 200, {
        balance: { denom: u.searchParams.get('denom') ?? 'ubadge', amount: this.nativeBalances.get(addr) ?? '0' },
      });
    }
    if ((m = new RegExp(`^${T}/get_collection/([^/]+)$`).exec(p))) {
      const doc = this.at(this.collections, decodeURIComponent(m[1]), height);
      if (!doc) return this.grpcError(res, 500, 2, 'invalid collection ID');
      return this.send(res, 200, { collection: doc });
    }
    if ((m = new RegExp(`^${T}/get_balance/([^/]+)/([^/]+)$`).exec(p))) {
      const id = decodeURIComponent(m[1]);
      const coll = this.at(this.collections, id, height);
      if (!coll) return this.grpcError(res, 500, 2, `collection ${id} not found`);
      const store =
        this.at(this.balances, `${id}/${decodeURIComponent(m[2])}`, height) ??
        (coll.defaultBalances as Record<string, unknown>) ??
        balanceStore();
      return this.send(res, 200, { balance: store });
    }
    if ((m = new RegExp(`^${T}/get_approvals_tracker/(.*)$`).exec(p))) {
      const key = `${m[1]}?approvalId=${u.searchParams.get('approvalId') ?? ''}`;
      const tracker = this.at(this.trackers, key, height);
      if (!tracker) return this.grpcError(res, 400, 3, 'invalid request');
      return this.send(res, 200, { tracker });
    }
    if ((m = new RegExp(`^${T}/get_challenge_tracker/(.*)$`).exec(p))) {
      const key = `${m[1]}?approvalId=${u.searchParams.get('approvalId') ?? ''}`;
      return this.send(res, 200, { numUsed: this.at(this.challenges, key, height) ?? '0' });
    }
    return this.grpcError(res, 501, 12, `Not Implemented: ${p}`);
  }
}

export async function startFakeChain(): Promise<FakeChain> {
  return new FakeChain().start();
}
