// Merkle routes: the leaf signer's address, an on-chain claim's challenge details, reserved codes
// with leaf signatures (docs/onchain-claims.md) and proofs (docs/onchain-claims.md). Thin: validate, call the domain.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Routes } from '../shared/capability.ts';
import { AddressString, errorResponses } from '../shared/schemas.ts';
import { requireSession } from '../shared/session.ts';
import { challengeDetails, merkleProofInfo, reservedCodes } from './claims.ts';
import { merkleService } from './service.ts';
import { MAX_PROOF_LENGTH } from './tree.ts';

const tags = ['merkle'];

/** Most leaves one merkleProofInfo request may ask about. */
export const MAX_LEAVES_PER_REQUEST = 1000;

const ClaimId = Type.String({ minLength: 1, maxLength: 256 });
const TrackerField = Type.String({ minLength: 1, maxLength: 256 });
const Hex32 = Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'SHA-256 as 64 hex characters' });

const LeafSignerResponse = Type.Object({
  leafSigner: Type.String({
    description:
      "EIP-55 EVM address of the service's leaf-signing key; put it into the approval's merkle challenge `leafSigner`.",
  }),
});

const ChallengeResponse = Type.Object({
  claimId: Type.String(),
  root: Type.String({
    description: "Tree root (hex): the merkle challenge's `root`. Empty for a claim without leaves.",
  }),
  expectedProofLength: Type.Integer({ description: "Aunts per proof: the challenge's `expectedProofLength`." }),
  maxUsesPerLeaf: Type.Optional(
    Type.Integer({ description: 'Code trees: 1 (each code once). Not set for address trees.' }),
  ),
  useCreatorAddressAsLeaf: Type.Boolean(),
  leafSigner: Type.String(),
  leafCount: Type.Integer({
    description: 'Leaves before padding: numUses.maxUses for code trees, the whitelist size for address trees.',
  }),
});

const ReservedParams = Type.Object({ claimId: ClaimId, address: AddressString });
const ReservedBody = Type.Object(
  {
    _expectedVersion: Type.Integer({
      minimum: -1,
      description: 'The claim version the caller read; -1 skips the check.',
    }),
  },
  { additionalProperties: false },
);
const ReservedResponse = Type.Object({
  reservedCodes: Type.Array(Type.String(), {
    description: 'Codes of every claim number the address won, in claim-number order.',
  }),
  leafSignatures: Type.Array(Type.String(), {
    description: 'EIP-191 signatures (0x, 65 bytes) over "<reservedCodes[i]>-<native address>".',
  }),
});

const ProofBody = Type.Object(
  {
    collectionId: TrackerField,
    approvalId: TrackerField,
    approvalLevel: Type.String({ description: 'collection, outgoing or incoming' }),
    approverAddress: Type.String({
      maxLength: 128,
      description: "'' for collection level; otherwise the approver's address (either form)",
    }),
    challengeTrackerId: TrackerField,
    leaves: Type.Array(Hex32, {
      minItems: 1,
      maxItems: MAX_LEAVES_PER_REQUEST,
      description: 'SHA-256 of each code, or of the native address for address trees',
    }),
    claimCodes: Type.Optional(
      Type.Array(Type.String({ maxLength: 512 }), {
        maxItems: MAX_LEAVES_PER_REQUEST,
        description: 'Code trees: the codes, in the order of leaves',
      }),
    ),
    platformAddress: Type.Optional(AddressString),
  },
  { additionalProperties: false },
);
const ProofResponse = Type.Object({
  allProofDetails: Type.Array(
    Type.Object({
      proofObj: Type.Array(Type.Object({ aunt: Type.String(), onRight: Type.Boolean() }), {
        maxItems: MAX_PROOF_LENGTH,
      }),
      isValidProof: Type.Boolean(),
      leafIndex: Type.Integer({
        description: 'Zero-based leaf index (the claim number for code trees); -1 when the leaf is not in the tree.',
      }),
      leaf: Type.String(),
    }),
  ),
});

export const merkle: Routes = {
  register(fastify, ctx) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const service = merkleService(ctx);

    app.get(
      '/api/v0/merkle/leafSigner',
      {
        schema: {
          tags,
          summary: "The leaf signer's EVM address",
          response: { 200: LeafSignerResponse, ...errorResponses(401) },
        },
      },
      async () => ({ leafSigner: service.signer.address }),
    );

    app.get(
      '/api/v0/merkle/challenge/:claimId',
      {
        schema: {
          tags,
          summary: "What an on-chain claim's approval must hold: root, expectedProofLength, maxUsesPerLeaf, leafSigner",
          params: Type.Object({ claimId: ClaimId }),
          response: { 200: ChallengeResponse, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => challengeDetails(ctx, request.params.claimId),
    );

    app.post(
      '/api/v0/claims/reserved/:claimId/:address',
      {
        schema: {
          tags,
          summary: 'Reserved codes and leaf signatures of an address (needs its session with completeClaims)',
          params: ReservedParams,
          body: ReservedBody,
          response: { 200: ReservedResponse, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (request) => {
        const session = await requireSession(request, 'completeClaims');
        return reservedCodes(
          ctx,
          session,
          request.params.claimId,
          request.params.address,
          request.body._expectedVersion,
        );
      },
    );

    app.post(
      '/api/v0/merkleProofInfo',
      {
        schema: {
          tags,
          summary: 'Merkle proofs for leaves of an on-chain claim',
          body: ProofBody,
          response: { 200: ProofResponse, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => merkleProofInfo(ctx, request.body),
    );
  },
};
