// Form descriptions of the core plugins, in the vocabulary of docs/plugins-platform.md (schema fields with key,
// label, type, required, helper, options, arrayField, defaultValue). The console's claim builder
// and the public claim page render only from these (GET /api/v0/plugins/core), so a plugin added
// with a description appears in the UI without UI changes.
//
// Two conventions beyond the schema fields of docs/plugins-platform.md, both needed to describe the core plugins' params:
//  - a `key` with dots names a nested field (`list.addresses` is publicParams.list.addresses);
//  - type `dateRanges`: UintRange[] of UNIX ms (transferTimes), rendered as pairs of date pickers.
//    Like `ownershipRequirements` for hosted plugins, it is a structured type the forms know.
import { Type, type Static } from 'typebox';

export const SchemaField = Type.Object(
  {
    key: Type.String(),
    label: Type.String(),
    type: Type.Union([
      Type.Literal('string'),
      Type.Literal('number'),
      Type.Literal('boolean'),
      Type.Literal('date'),
      Type.Literal('url'),
      Type.Literal('dateRanges'),
    ]),
    required: Type.Optional(Type.Boolean()),
    defaultValue: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
    helper: Type.Optional(Type.String()),
    options: Type.Optional(
      Type.Array(
        Type.Object({ label: Type.String(), value: Type.Union([Type.String(), Type.Number(), Type.Boolean()]) }),
      ),
    ),
    arrayField: Type.Optional(Type.Boolean()),
    hideFromDetailsDisplay: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, $id: 'PluginSchemaField' },
);
export type SchemaField = Static<typeof SchemaField>;

export const PluginDescription = Type.Object(
  {
    pluginId: Type.String(),
    metadata: Type.Object({ name: Type.String(), description: Type.String() }),
    duplicatesAllowed: Type.Boolean(),
    stateful: Type.Boolean(),
    requiresSessions: Type.Boolean(),
    requiresUserInputs: Type.Boolean(),
    reuseForNonIndexed: Type.Boolean(),
    /** May be named by the claim's `assignMethod`. */
    canAssignClaimNumbers: Type.Boolean(),
    /** Present on every indexed claim; the builder adds it once. */
    mandatory: Type.Boolean(),
    publicParamsSchema: Type.Array(Type.Ref('PluginSchemaField')),
    privateParamsSchema: Type.Array(Type.Ref('PluginSchemaField')),
    userInputsSchema: Type.Array(Type.Ref('PluginSchemaField')),
    customDetailsDisplay: Type.String(),
  },
  { additionalProperties: false, $id: 'PluginDescription' },
);
export type PluginDescription = Static<typeof PluginDescription>;

const base = {
  duplicatesAllowed: true,
  stateful: false,
  requiresSessions: false,
  requiresUserInputs: false,
  reuseForNonIndexed: false,
  canAssignClaimNumbers: false,
  mandatory: false,
  publicParamsSchema: [],
  privateParamsSchema: [],
  userInputsSchema: [],
};

export const CORE_PLUGIN_DESCRIPTIONS: PluginDescription[] = [
  {
    ...base,
    pluginId: 'numUses',
    metadata: {
      name: 'Number of uses',
      description: 'Caps the total number of successful claims and numbers them from 0.',
    },
    duplicatesAllowed: false,
    stateful: true,
    canAssignClaimNumbers: true,
    mandatory: true,
    publicParamsSchema: [
      {
        key: 'maxUses',
        label: 'Maximum uses',
        type: 'number',
        required: true,
        helper: 'How many times the claim can succeed in total.',
      },
      {
        key: 'hideCurrentState',
        label: 'Hide the current count',
        type: 'boolean',
        helper: 'Only you see how many claims were made.',
      },
      { key: 'displayAsUnlimited', label: 'Display as unlimited', type: 'boolean' },
    ],
    customDetailsDisplay: 'At most {{maxUses}} claims in total.',
  },
  {
    ...base,
    pluginId: 'codes',
    metadata: {
      name: 'Codes',
      description: 'One-time codes: each code can be used once. The server generates them; download them as CSV.',
    },
    stateful: true,
    requiresUserInputs: true,
    canAssignClaimNumbers: true,
    publicParamsSchema: [
      {
        key: 'numCodes',
        label: 'Number of codes',
        type: 'number',
        required: true,
        helper: 'The server generates this many codes from a secret seed.',
      },
      { key: 'hideCurrentState', label: 'Hide which codes were used', type: 'boolean' },
    ],
    userInputsSchema: [{ key: 'code', label: 'Claim code', type: 'string', required: true }],
    customDetailsDisplay: 'Requires one of {{numCodes}} one-time codes.',
  },
  {
    ...base,
    pluginId: 'password',
    metadata: { name: 'Password', description: 'A shared secret the user must enter.' },
    requiresUserInputs: true,
    privateParamsSchema: [
      {
        key: 'password',
        label: 'Password',
        type: 'string',
        required: true,
        helper: 'Stored encrypted; only you can read it back.',
      },
    ],
    userInputsSchema: [{ key: 'password', label: 'Password', type: 'string', required: true }],
    customDetailsDisplay: 'Requires the password.',
  },
  {
    ...base,
    pluginId: 'transferTimes',
    metadata: { name: 'Time windows', description: 'The claim is open only inside these windows.' },
    reuseForNonIndexed: true,
    publicParamsSchema: [
      {
        key: 'transferTimes',
        label: 'Open between',
        type: 'dateRanges',
        required: true,
        helper: 'Inclusive windows; the claim fails outside all of them.',
      },
    ],
    customDetailsDisplay: 'Open only during the listed time windows.',
  },
  {
    ...base,
    pluginId: 'initiatedBy',
    metadata: { name: 'Signed in', description: 'The claimer must prove the address by signing in with the wallet.' },
    requiresSessions: true,
    customDetailsDisplay: 'Sign in with the claiming wallet.',
  },
  {
    ...base,
    pluginId: 'whitelist',
    metadata: {
      name: 'Whitelist',
      description: 'Only listed addresses may claim: a public list, a private list or a dynamic store.',
    },
    stateful: true,
    canAssignClaimNumbers: true,
    publicParamsSchema: [
      {
        key: 'list.addresses',
        label: 'Public list of addresses',
        type: 'string',
        arrayField: true,
        helper: 'One address per line (0x… or bb1…). Leave empty to use a private list or a dynamic store.',
      },
      { key: 'maxUsesPerAddress', label: 'Maximum claims per address', type: 'number', helper: '0 or empty: no cap.' },
      { key: 'hasPrivateList', label: 'The list is private', type: 'boolean', hideFromDetailsDisplay: true },
    ],
    privateParamsSchema: [
      {
        key: 'list.addresses',
        label: 'Private list of addresses',
        type: 'string',
        arrayField: true,
        helper: 'One address per line; hidden from claimers.',
      },
      { key: 'useDynamicStore', label: 'Use a dynamic store', type: 'boolean' },
      {
        key: 'dynamicDataId',
        label: 'Dynamic store id',
        type: 'string',
        helper: 'From the store page ("copy whitelist snippet").',
      },
      {
        key: 'dataSecret',
        label: 'Dynamic store secret',
        type: 'string',
        helper: 'Needed unless the store is public for claims.',
      },
    ],
    customDetailsDisplay: 'Only listed addresses may claim.',
  },
  {
    ...base,
    pluginId: 'halt',
    metadata: { name: 'Halt', description: 'Pauses the claim: every attempt fails while it is present.' },
    reuseForNonIndexed: true,
    customDetailsDisplay: 'This claim is paused.',
  },
  {
    ...base,
    pluginId: 'anonymous',
    metadata: { name: 'Anonymous', description: 'Claims are made for the null address only.' },
    duplicatesAllowed: false,
    reuseForNonIndexed: true,
    customDetailsDisplay: 'Claimed anonymously (the null address).',
  },
];
