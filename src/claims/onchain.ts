// On-chain claims, as the merkle capability reads them (contracts.md). A claim is on-chain when
// it has a non-empty collectionId and trackerDetails and is not standalone. Its claim-level seed
// (generated at create, stored encrypted) gives claim number n the code claimCode(seed, n).
import type { DB, Tx } from '../db/index.ts';
import { tryParseAddress } from '../shared/addresses.ts';
import type { AppContext } from '../context.ts';
import { codeFor } from '../plugins/codes.ts';
import { whitelistList } from '../plugins/whitelist.ts';
import { isOnChain, loadClaim, maxUsesOf, trackerKey, type ClaimRecord, type TrackerDetails } from './model.ts';
import { claimNumbersOf } from './storage.ts';

export type { TrackerDetails } from './model.ts';

export interface OnChainClaim {
  claimId: string;
  version: number;
  lastUpdated: number;
  createdBy: string;
  managedBy: string;
  collectionId: string;
  trackerDetails: TrackerDetails;
  maxUses: number;
  /** Decrypted. */
  seedCode: string;
  useCreatorAddressAsLeaf: boolean;
  /** Canonical, list order (the claim's whitelist plugin with an allow list; empty without one). */
  whitelistAddresses: string[];
}

/** docs/onchain-claims.md: lowercase hex SHA-256 of `<seed>-<i>`, followed by `-<i>`. */
export function claimCode(seedCode: string, index: number): string {
  return codeFor(seedCode, index);
}

/** What reading an on-chain claim takes: the database, the claim cache and keyring, and the clock. */
type ClaimReader = Pick<AppContext, 'db' | 'keyring' | 'claimCache' | 'clock'>;

function toOnChain(c: ClaimRecord | null): OnChainClaim | null {
  if (!c || !isOnChain(c) || !c.trackerDetails || !c.seedCode) return null;
  const list = c.plugins.map((p) => (p.pluginId === 'whitelist' ? whitelistList(p) : null)).find((l) => l?.whitelist);
  return {
    claimId: c.claimId,
    version: c.version,
    lastUpdated: c.lastUpdated,
    createdBy: c.createdBy,
    managedBy: c.managedBy,
    collectionId: c.collectionId,
    trackerDetails: c.trackerDetails,
    maxUses: maxUsesOf(c) ?? 0,
    seedCode: c.seedCode,
    useCreatorAddressAsLeaf: c.useCreatorAddressAsLeaf,
    whitelistAddresses: list ? [...list.addresses] : [],
  };
}

/** null: missing, deleted (or an expired test claim at `now`), or not on-chain. */
export async function loadOnChainClaim(ctx: ClaimReader, claimId: string): Promise<OnChainClaim | null> {
  return toOnChain(await loadClaim(ctx.db, ctx, claimId, ctx.clock.now()));
}

export async function findOnChainClaimByTracker(ctx: ClaimReader, t: TrackerDetails): Promise<OnChainClaim | null> {
  const approverAddress =
    t.approverAddress === '' ? '' : (tryParseAddress(t.approverAddress)?.platformAddress ?? t.approverAddress);
  const rows = await ctx.db
    .selectFrom('claims')
    .select('claim_id')
    .where('tracker_key', '=', trackerKey({ ...t, approverAddress }))
    .where('deleted_at', 'is', null)
    .execute();
  for (const r of rows) {
    const c = await loadOnChainClaim(ctx, r.claim_id);
    if (c) return c;
  }
  return null;
}

/** Claim numbers of the address's successful attempts, ascending. */
export async function successfulClaimNumbers(db: DB | Tx, claimId: string, platformAddress: string): Promise<number[]> {
  return claimNumbersOf(db, claimId, platformAddress);
}
