// Reserved codes, proofs and challenge details of on-chain claims (docs/onchain-claims.md). Claims come
// from the claims capability (src/claims/onchain.ts); trees come from the per-process cache.
import type { AppContext } from '../context.ts';
import { loadClaim } from '../claims/model.ts';
import {
  claimCode,
  findOnChainClaimByTracker,
  loadOnChainClaim,
  successfulClaimNumbers,
  type OnChainClaim,
  type TrackerDetails,
} from '../claims/onchain.ts';
import { toCanonical } from '../shared/addresses.ts';
import { sha256Hex } from '../shared/crypto.ts';
import { badRequest, conflict, forbidden, notFound } from '../shared/errors.ts';
import type { Session } from '../shared/session.ts';
import type { LeafSource } from './leaves.ts';
import { merkleService } from './service.ts';
import {
  buildTreeParallel,
  MAX_LEAVES,
  MAX_PROOF_LENGTH,
  proveLeaf,
  rootHex,
  type MerkleTree,
  type ProofDetails,
} from './tree.ts';

export const NOT_ON_CHAIN = 'Invalid configuration. Reserved codes can only be fetched for on-chain claims.';

/** The claim, or 404 when missing / deleted, or 400 when it is not linked to an on-chain approval. */
async function onChainClaim(ctx: AppContext, claimId: string): Promise<OnChainClaim> {
  const claim = await loadOnChainClaim(ctx, claimId);
  if (claim) return claim;
  if (!(await loadClaim(ctx.db, ctx, claimId, ctx.clock.now()))) throw notFound(`Claim ${claimId} not found`);
  throw badRequest(NOT_ON_CHAIN);
}

/** Leaves of the claim's tree: one per code (maxUses), or one per whitelist address. */
function leafCount(claim: OnChainClaim): number {
  return claim.useCreatorAddressAsLeaf ? claim.whitelistAddresses.length : claim.maxUses;
}

/** The claim's tree: built once per claim version and cached; requests never rebuild it. */
export async function treeOf(ctx: AppContext, claim: OnChainClaim): Promise<MerkleTree> {
  const count = leafCount(claim);
  if (count > MAX_LEAVES) {
    const what = claim.useCreatorAddressAsLeaf
      ? `The whitelist holds ${count} addresses`
      : `numUses.maxUses is ${count}`;
    throw badRequest(
      `${what}; a merkle challenge can hold at most ${MAX_LEAVES} leaves (the chain accepts proofs of at most ${MAX_PROOF_LENGTH} aunts)`,
    );
  }
  // The inputs of the leaves are part of the key, so a tree can never outlive what it was built from.
  const fingerprint = claim.useCreatorAddressAsLeaf
    ? `addresses:${claim.version}:${claim.lastUpdated}:${sha256Hex(claim.whitelistAddresses.join('\n'))}`
    : `codes:${claim.version}:${claim.lastUpdated}:${count}`;
  const source: LeafSource = claim.useCreatorAddressAsLeaf
    ? { kind: 'strings', values: claim.whitelistAddresses }
    : { kind: 'codes', seedCode: claim.seedCode };
  const { trees, builders } = merkleService(ctx);
  return trees.get(claim.claimId, fingerprint, () => buildTreeParallel(count, source, builders));
}

export interface ReservedCodes {
  reservedCodes: string[];
  leafSignatures: string[];
}

/** docs/onchain-claims.md: the codes of every claim number the address won, in claim-number order, each signed. */
export async function reservedCodes(
  ctx: AppContext,
  session: Session,
  claimId: string,
  address: string,
  expectedVersion: number,
): Promise<ReservedCodes> {
  const platformAddress = toCanonical(address, 'address');
  if (session.platformAddress !== platformAddress) {
    throw forbidden(
      `Reserved codes are only given to the address they were reserved for: the session is signed in as ${session.platformAddress}, not ${platformAddress}`,
    );
  }
  const claim = await onChainClaim(ctx, claimId);
  if (expectedVersion !== -1 && expectedVersion !== claim.version) {
    throw conflict(`Claim ${claimId} is at version ${claim.version}, not ${expectedVersion}; fetch it again`);
  }
  if (claim.useCreatorAddressAsLeaf) {
    throw badRequest(
      `Invalid configuration. Claim ${claimId} uses address leaves (useCreatorAddressAsLeaf): it reserves no codes; the proof is for the claimer's address (POST /api/v0/merkleProofInfo with platformAddress)`,
    );
  }
  const numbers = await successfulClaimNumbers(ctx.db, claimId, platformAddress);
  const codes = numbers.map((n) => claimCode(claim.seedCode, n));
  const { signer } = merkleService(ctx);
  const leafSignatures = await Promise.all(codes.map((code) => signer.sign(code, platformAddress)));
  return { reservedCodes: codes, leafSignatures };
}

export interface MerkleProofRequest extends Omit<TrackerDetails, 'approvalLevel'> {
  approvalLevel: string;
  leaves: string[];
  claimCodes?: string[];
  platformAddress?: string;
}

function trackerOf(body: MerkleProofRequest): TrackerDetails {
  if (body.approvalLevel !== 'collection' && body.approvalLevel !== 'outgoing' && body.approvalLevel !== 'incoming') {
    throw badRequest('body.approvalLevel must be collection, outgoing or incoming');
  }
  return {
    collectionId: body.collectionId,
    approvalId: body.approvalId,
    challengeTrackerId: body.challengeTrackerId,
    approvalLevel: body.approvalLevel,
    approverAddress: body.approverAddress === '' ? '' : toCanonical(body.approverAddress, 'body.approverAddress'),
  };
}

async function claimOfTracker(ctx: AppContext, tracker: TrackerDetails): Promise<OnChainClaim> {
  const claim = await findOnChainClaimByTracker(ctx, tracker);
  if (!claim) {
    throw notFound(
      `No on-chain claim is linked to collectionId ${tracker.collectionId}, approvalId ${tracker.approvalId}, approvalLevel ${tracker.approvalLevel}, approverAddress "${tracker.approverAddress}", challengeTrackerId ${tracker.challengeTrackerId}`,
    );
  }
  return claim;
}

/**
 * docs/onchain-claims.md. Code trees: `claimCodes` must hold the preimage of every leaf. Address trees:
 * `platformAddress` is required and every leaf must be its SHA-256. A leaf that is not in the
 * tree is answered with `isValidProof: false` (never another leaf's proof).
 */
export async function merkleProofInfo(
  ctx: AppContext,
  body: MerkleProofRequest,
): Promise<{ allProofDetails: ProofDetails[] }> {
  const claim = await claimOfTracker(ctx, trackerOf(body));
  const leaves = body.leaves.map((l) => l.toLowerCase());
  if (claim.useCreatorAddressAsLeaf) {
    if (body.platformAddress === undefined)
      throw badRequest(
        'body.platformAddress is required: this challenge uses address leaves (useCreatorAddressAsLeaf)',
      );
    const platformAddress = toCanonical(body.platformAddress, 'body.platformAddress');
    const expected = sha256Hex(platformAddress);
    leaves.forEach((leaf, i) => {
      if (leaf !== expected)
        throw badRequest(
          `body.leaves[${i}] is not the SHA-256 of platformAddress ${platformAddress} (expected ${expected})`,
        );
    });
  } else {
    const codes = body.claimCodes;
    if (codes === undefined)
      throw badRequest('body.claimCodes is required for code claims: the reserved codes, in the order of leaves');
    if (codes.length !== leaves.length)
      throw badRequest(`body.claimCodes must hold one code per leaf (${leaves.length}), got ${codes.length}`);
    codes.forEach((code, i) => {
      if (sha256Hex(code) !== leaves[i])
        throw badRequest(
          `body.claimCodes[${i}] does not hash to body.leaves[${i}] (leaves are the SHA-256 of the codes)`,
        );
    });
  }
  const tree = await treeOf(ctx, claim);
  return { allProofDetails: leaves.map((leaf) => proveLeaf(tree, leaf)) };
}

export interface ChallengeDetails {
  claimId: string;
  root: string;
  expectedProofLength: number;
  maxUsesPerLeaf?: number;
  useCreatorAddressAsLeaf: boolean;
  leafSigner: string;
  leafCount: number;
}

/** What the approval's merkle challenge must hold for this claim's proofs to pass on chain. */
export async function challengeDetails(ctx: AppContext, claimId: string): Promise<ChallengeDetails> {
  const claim = await onChainClaim(ctx, claimId);
  const tree = await treeOf(ctx, claim);
  return {
    claimId,
    root: rootHex(tree),
    expectedProofLength: tree.depth,
    // Code trees: each code once (the chain requires 1 when leaves are not addresses). Address
    // trees: the creator's choice (uses per address), so not stated here.
    ...(claim.useCreatorAddressAsLeaf ? {} : { maxUsesPerLeaf: 1 }),
    useCreatorAddressAsLeaf: claim.useCreatorAddressAsLeaf,
    leafSigner: merkleService(ctx).signer.address,
    leafCount: tree.leafCount,
  };
}
