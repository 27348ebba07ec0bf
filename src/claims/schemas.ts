// Request and response schemas of the claim routes (docs/claims.md). Plugin params are objects
// here; each plugin checks its own params (a 400 naming the field).
import { Type } from 'typebox';
import { AddressString, Bookmark, MAX_PATH_PARAM_LENGTH, UintRangeSchema } from '../shared/schemas.ts';

const AnyObject = Type.Object({}, { additionalProperties: true });
export const ClaimId = Type.String({
  minLength: 1,
  maxLength: MAX_PATH_PARAM_LENGTH,
  pattern: '^[A-Za-z0-9_-]+$',
  description: 'Claim id (letters, digits, _ and -)',
});
const InstanceIdPattern = '^[A-Za-z0-9]{1,64}$';

export const ClaimParams = Type.Object({ claimId: ClaimId });
export const ClaimAddressParams = Type.Object({ claimId: ClaimId, address: AddressString });
export const AttemptIdParams = Type.Object({
  claimAttemptId: Type.String({ pattern: '^[0-9a-f]{32}$', description: '32 hex characters' }),
});

export const AttemptBody = Type.Object(
  {
    _expectedVersion: Type.Integer({
      minimum: -1,
      description: 'The claim version the caller fetched; -1 skips the check',
    }),
    _specificInstanceIds: Type.Optional(
      Type.Array(Type.String({ pattern: InstanceIdPattern }), {
        maxItems: 50,
        description: 'Run only these instances (numUses and the claim-number assigner always run)',
      }),
    ),
  },
  {
    patternProperties: { [InstanceIdPattern]: AnyObject },
    additionalProperties: false,
    description: 'User inputs keyed by instance id, e.g. { "code1": { "code": "…" } }',
  },
);
export const AttemptIdResponse = Type.Object({ claimAttemptId: Type.String() });

export const StatusResponse = Type.Object(
  {
    success: Type.Optional(Type.Boolean({ description: 'Absent while the attempt is queued' })),
    error: Type.String(),
    code: Type.Optional(Type.String({ description: 'Reserved merkle code (on-chain claims, permitted readers)' })),
    platformAddress: Type.String(),
  },
  { additionalProperties: false },
);

export const SuccessResponse = Type.Object(
  { successCount: Type.Integer(), claimNumbers: Type.Array(Type.Integer()) },
  { additionalProperties: false },
);

export const AttemptsQuery = Type.Object(
  {
    address: Type.Optional(AddressString),
    includeErrors: Type.Optional(Type.Boolean()),
    bookmark: Type.Optional(Bookmark),
  },
  { additionalProperties: false },
);
const AttemptItem = Type.Object(
  {
    success: Type.Boolean(),
    attemptedAt: Type.String({ description: 'UNIX ms' }),
    claimId: Type.String(),
    platformAddress: Type.String(),
    claimerAddress: Type.String({
      description: 'The address as the claimer sent it (the 0x form when they used it); else platformAddress',
    }),
    claimAttemptId: Type.String(),
    claimNumber: Type.Integer({ description: '-1 on failure' }),
    error: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export const AttemptsResponse = Type.Object(
  { docs: Type.Array(AttemptItem), bookmark: Type.String(), hasMore: Type.Boolean(), total: Type.Integer() },
  { additionalProperties: false },
);

const TrackerDetailsSchema = Type.Object(
  {
    collectionId: Type.String(),
    approvalId: Type.String(),
    challengeTrackerId: Type.String(),
    approvalLevel: Type.Union([Type.Literal('collection'), Type.Literal('outgoing'), Type.Literal('incoming')]),
    approverAddress: Type.String(),
  },
  { additionalProperties: false },
);
/** What reads answer for a claim with no on-chain link; accepted back on writes as "no link". */
const NoTrackerSchema = Type.Object(
  {
    collectionId: Type.Literal(''),
    approvalId: Type.Literal(''),
    challengeTrackerId: Type.Literal(''),
    approvalLevel: Type.Literal(''),
    approverAddress: Type.Literal(''),
  },
  { additionalProperties: false },
);
const SatisfyMethodSchema = Type.Object(
  {
    type: Type.Union([Type.Literal('AND'), Type.Literal('OR'), Type.Literal('NOT')]),
    conditions: Type.Array(Type.Union([Type.String(), AnyObject]), { minItems: 1 }),
    options: Type.Optional(
      Type.Object({ minNumSatisfied: Type.Optional(Type.Integer({ minimum: 1 })) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false, description: 'Success logic over instance ids (nested nodes allowed, depth ≤ 5)' },
);
const MetadataSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 512 })),
    description: Type.Optional(Type.String({ maxLength: 20_000 })),
    image: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false },
);

const pluginInputProps = {
  pluginId: Type.String({ minLength: 1, maxLength: 128 }),
  instanceId: Type.String({ minLength: 1, maxLength: 64 }),
  version: Type.Optional(Type.String({ maxLength: 32 })),
  publicParams: Type.Optional(AnyObject),
  privateParams: Type.Optional(AnyObject),
};
const claimProps = {
  claimId: ClaimId,
  rewards: Type.Optional(Type.Array(AnyObject, { maxItems: 100 })),
  metadata: Type.Optional(MetadataSchema),
  showInSearchResults: Type.Optional(Type.Boolean()),
  categories: Type.Optional(Type.Array(Type.String({ maxLength: 128 }), { maxItems: 50 })),
  estimatedCost: Type.Optional(Type.String({ maxLength: 256 })),
  estimatedTime: Type.Optional(Type.String({ maxLength: 256 })),
  approach: Type.Optional(Type.String({ maxLength: 64 })),
  assignMethod: Type.Optional(Type.String({ maxLength: 64 })),
  collectionId: Type.Optional(Type.String({ maxLength: 256 })),
  standaloneClaim: Type.Optional(Type.Boolean()),
  useCreatorAddressAsLeaf: Type.Optional(Type.Boolean()),
  managedBy: Type.Optional(AddressString),
};

const CreateClaimItem = Type.Object(
  {
    ...claimProps,
    plugins: Type.Array(Type.Object(pluginInputProps, { additionalProperties: false }), { maxItems: 50 }),
    satisfyMethod: Type.Optional(SatisfyMethodSchema),
    trackerDetails: Type.Optional(Type.Union([TrackerDetailsSchema, NoTrackerSchema])),
  },
  { additionalProperties: false },
);
export const CreateBody = Type.Object(
  { claims: Type.Array(CreateClaimItem, { minItems: 1, maxItems: 100 }), testClaims: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

const UpdatePluginItem = Type.Object(
  {
    ...pluginInputProps,
    resetState: Type.Optional(Type.Boolean({ description: "Clear this instance's state" })),
    newState: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            "Replace this instance's state (numUses { numUses }, codes { usedCodeRanges }, whitelist { addresses })",
        },
      ),
    ),
  },
  { additionalProperties: false },
);
const UpdateClaimItem = Type.Object(
  {
    ...claimProps,
    plugins: Type.Optional(
      Type.Array(UpdatePluginItem, {
        maxItems: 50,
        description:
          'The full new list; omitted keeps the current plugins. Omitted privateParams keep the stored ones.',
      }),
    ),
    satisfyMethod: Type.Optional(Type.Union([SatisfyMethodSchema, Type.Null()])),
    trackerDetails: Type.Optional(Type.Union([TrackerDetailsSchema, NoTrackerSchema, Type.Null()])),
    _expectedVersion: Type.Optional(
      Type.Integer({ minimum: -1, description: 'The version the caller read (409 on mismatch); -1 skips' }),
    ),
  },
  { additionalProperties: false, description: 'Omitted fields keep their current value' },
);
export const UpdateBody = Type.Object(
  { claims: Type.Array(UpdateClaimItem, { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false },
);

export const DeleteBody = Type.Object(
  { claimIds: Type.Array(ClaimId, { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false },
);
export const EmptyResponse = Type.Object({}, { additionalProperties: false });

const StringList = Type.Array(Type.String({ maxLength: 64 }), { maxItems: 50 });
export const ClaimQuery = Type.Object(
  {
    fetchAllClaimedUsers: Type.Optional(Type.Boolean()),
    fetchPrivateParams: Type.Optional(Type.Boolean()),
    privateStatesToFetch: Type.Optional(
      Type.Union([StringList, Type.String({ maxLength: 4096 })], {
        description: 'Instance ids: repeated, or comma-separated',
      }),
    ),
  },
  { additionalProperties: false },
);

export const FetchBody = Type.Object(
  {
    claimsToFetch: Type.Array(
      Type.Object(
        {
          claimId: ClaimId,
          fetchAllClaimedUsers: Type.Optional(Type.Boolean()),
          fetchPrivateParams: Type.Optional(Type.Boolean()),
          privateStatesToFetch: Type.Optional(StringList),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100 },
    ),
  },
  { additionalProperties: false },
);

export const SearchQuery = Type.Object(
  { searchValue: Type.Optional(Type.String({ maxLength: 256 })), bookmark: Type.Optional(Bookmark) },
  { additionalProperties: false },
);

const PluginDocumentSchema = Type.Object(
  {
    pluginId: Type.String(),
    instanceId: Type.String(),
    version: Type.String(),
    publicParams: AnyObject,
    privateParams: AnyObject,
    publicState: Type.Object(
      {
        numUses: Type.Optional(Type.Integer()),
        usedClaimNumbers: Type.Optional(Type.Array(UintRangeSchema)),
        claimedUsers: Type.Optional(Type.Record(Type.String(), Type.Array(Type.Integer()))),
        usedCodeRanges: Type.Optional(Type.Array(UintRangeSchema)),
      },
      { additionalProperties: true },
    ),
    privateState: Type.Optional(AnyObject),
  },
  { additionalProperties: false },
);

export const ClaimDocumentSchema = Type.Object(
  {
    _includesPrivateParams: Type.Boolean(),
    _seedCode: Type.Optional(
      Type.String({ description: 'Claim-level seed of an on-chain claim (with private params only)' }),
    ),
    _failedGuesses: Type.Optional(
      Type.Object(
        { total: Type.Integer(), lastHour: Type.Integer() },
        {
          additionalProperties: false,
          description:
            'Wrong passwords and codes tried on this claim (creator or manager only; claims with a password or codes plugin)',
        },
      ),
    ),
    claimId: Type.String(),
    createdBy: Type.String(),
    managedBy: Type.String(),
    collectionId: Type.String(),
    standaloneClaim: Type.Boolean(),
    trackerDetails: Type.Union([TrackerDetailsSchema, NoTrackerSchema], {
      description: 'The on-chain approval the claim is linked to; every field empty when it is not linked',
    }),
    plugins: Type.Array(PluginDocumentSchema),
    rewards: Type.Array(AnyObject),
    showInSearchResults: Type.Boolean(),
    categories: Type.Array(Type.String()),
    estimatedCost: Type.String(),
    estimatedTime: Type.String(),
    approach: Type.String(),
    metadata: Type.Object({ name: Type.String(), description: Type.String(), image: Type.String() }),
    assignMethod: Type.String(),
    satisfyMethod: Type.Optional(AnyObject),
    useCreatorAddressAsLeaf: Type.Boolean(),
    testOnly: Type.Boolean(),
    createdAt: Type.String(),
    lastUpdated: Type.String(),
    version: Type.String(),
  },
  { additionalProperties: false },
);

export const ClaimResponse = Type.Object({ claim: ClaimDocumentSchema });
export const ClaimsResponse = Type.Object({ claims: Type.Array(ClaimDocumentSchema) });
export const SearchResponse = Type.Object({
  claims: Type.Array(ClaimDocumentSchema),
  bookmark: Type.String(),
  hasMore: Type.Boolean(),
});

export const RefusalsResponse = Type.Object(
  {
    docs: Type.Array(
      Type.Object(
        {
          refusedAt: Type.String({ description: 'UNIX ms' }),
          platformAddress: Type.String(),
          claimerAddress: Type.String({ description: 'The address as the claimer sent it' }),
          instanceId: Type.String({ description: "The refusing plugin instance ('' when no single plugin refused)" }),
          pluginId: Type.String(),
          error: Type.String({ description: "The plugin's error text" }),
        },
        { additionalProperties: false },
      ),
    ),
    limit: Type.Integer({ description: 'How many refused tries the log keeps per claim (the newest)' }),
  },
  { additionalProperties: false },
);
