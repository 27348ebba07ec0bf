// Request and response schemas of the plugin document routes (docs/plugins-platform.md), on the
// reference client's body shapes. Structure is checked here; the rules that span fields
// (reserved and duplicate keys, options against types, the endpoint URL) are in validation.ts.
import { Type, type Static } from 'typebox';
import { AddressString, Bookmark } from '../shared/schemas.ts';

export const PluginIdString = Type.String({
  minLength: 1,
  maxLength: 80,
  pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$',
  description: 'Plugin id (letters, digits, _ and -); localised documents end in -<locale>',
});
const Locale = Type.String({
  pattern: '^[a-z]{2}(-[A-Z]{2})?$',
  description: "Locale, e.g. 'en' (default), 'es', 'pt-BR'",
});
const Scalar = Type.Union([Type.String({ maxLength: 4096 }), Type.Number(), Type.Boolean()]);

const schemaFieldProps = {
  key: Type.String({ minLength: 1, maxLength: 64 }),
  label: Type.String({ maxLength: 256 }),
  type: Type.Union([
    Type.Literal('string'),
    Type.Literal('number'),
    Type.Literal('boolean'),
    Type.Literal('date'),
    Type.Literal('url'),
    Type.Literal('ownershipRequirements'),
  ]),
  required: Type.Optional(Type.Boolean()),
  defaultValue: Type.Optional(Scalar),
  helper: Type.Optional(Type.String({ maxLength: 2048 })),
  options: Type.Optional(
    Type.Array(
      Type.Object({ label: Type.String({ maxLength: 256 }), value: Scalar }, { additionalProperties: false }),
      { minItems: 1, maxItems: 200 },
    ),
  ),
  arrayField: Type.Optional(Type.Boolean()),
  headerField: Type.Optional(Type.Boolean()),
  hideFromDetailsDisplay: Type.Optional(Type.Boolean()),
  hyperlink: Type.Optional(
    Type.Object(
      { url: Type.String({ maxLength: 2048 }), showAsGenericView: Type.Optional(Type.Boolean()) },
      { additionalProperties: false },
    ),
  ),
};
export const SchemaFieldSchema = Type.Object(schemaFieldProps, { additionalProperties: false });
const HardcodedInputSchema = Type.Object(
  { ...schemaFieldProps, value: Type.Unknown() },
  { additionalProperties: false },
);
const FieldList = Type.Array(SchemaFieldSchema, { maxItems: 50 });

const configProps = {
  stateFunctionPreset: Type.Union([
    Type.Literal('Stateless'),
    Type.Literal('ClaimToken'),
    Type.Literal('ClaimNumbers'),
    Type.Literal('CustomResponseHandler'),
  ]),
  duplicatesAllowed: Type.Optional(Type.Boolean()),
  requiresSessions: Type.Optional(Type.Boolean()),
  requiresUserInputs: Type.Optional(Type.Boolean()),
  reuseForNonIndexed: Type.Optional(Type.Boolean()),
  receiveStatusWebhook: Type.Optional(Type.Boolean()),
  skipProcessingWebhook: Type.Optional(Type.Boolean()),
  ignoreSimulations: Type.Optional(Type.Boolean()),
  requireSignIn: Type.Optional(Type.Boolean()),
  userInputsSchema: Type.Optional(FieldList),
  publicParamsSchema: Type.Optional(FieldList),
  privateParamsSchema: Type.Optional(FieldList),
  verificationCall: Type.Optional(
    Type.Object(
      {
        uri: Type.String({ maxLength: 2048 }),
        hardcodedInputs: Type.Optional(Type.Array(HardcodedInputSchema, { maxItems: 50 })),
        passAddress: Type.Optional(Type.Boolean()),
        method: Type.Optional(
          Type.String({
            maxLength: 16,
            description: 'Only "POST" (calls are always POST); accepted because the reference client always sends it',
          }),
        ),
        postProcessingJs: Type.Optional(
          Type.String({
            maxLength: 65536,
            description:
              'Only "" (this service runs no creator-supplied code); accepted because the reference client always sends it',
          }),
        ),
      },
      { additionalProperties: false },
    ),
  ),
  customDetailsDisplay: Type.Optional(Type.String({ maxLength: 4096 })),
  finalized: Type.Optional(Type.Boolean({ description: 'Lock this version (immutable from then on)' })),
};
/** A version's config as sent: every field docs/plugins-platform.md lists except `version` (assigned). */
export const VersionConfigBody = Type.Object(configProps, { additionalProperties: false });
export type VersionConfigInput = Static<typeof VersionConfigBody>;

/** A change to an existing version: any config fields (a finalized version takes none). */
export const VersionConfigPatch = Type.Partial(Type.Object(configProps), { additionalProperties: false });
export type VersionConfigPatchInput = Static<typeof VersionConfigPatch>;

const MetadataBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    description: Type.Optional(Type.String({ maxLength: 8192 })),
    image: Type.Optional(Type.String({ maxLength: 2048 })),
    createdBy: Type.Optional(Type.String({ maxLength: 256 })),
    documentation: Type.Optional(Type.String({ maxLength: 2048 })),
    sourceCode: Type.Optional(Type.String({ maxLength: 2048 })),
    supportLink: Type.Optional(Type.String({ maxLength: 2048 })),
    parentApp: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: false },
);
export type MetadataInput = Static<typeof MetadataBody>;

const ApprovedUsers = Type.Array(AddressString, {
  maxItems: 1000,
  description: 'Addresses that may use the plugin before it is published',
});

export const CreateBody = Type.Object(
  {
    pluginId: PluginIdString,
    metadata: MetadataBody,
    toPublish: Type.Boolean(),
    approvedUsers: Type.Optional(ApprovedUsers),
    initialVersion: VersionConfigBody,
    locale: Type.Optional(Locale),
    managedBy: Type.Optional(AddressString),
  },
  { additionalProperties: false },
);
export type CreateInput = Static<typeof CreateBody>;

export const UpdateBody = Type.Object(
  {
    pluginId: PluginIdString,
    metadata: Type.Optional(MetadataBody),
    toPublish: Type.Optional(Type.Boolean()),
    approvedUsers: Type.Optional(ApprovedUsers),
    rotatePluginSecret: Type.Optional(Type.Boolean()),
    versionCreate: Type.Optional(VersionConfigBody),
    versionUpdates: Type.Optional(
      Type.Array(
        Type.Object(
          {
            version: Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^[1-9][0-9]{0,8}$' })]),
            config: VersionConfigPatch,
          },
          { additionalProperties: false },
        ),
        { maxItems: 50 },
      ),
    ),
    locale: Type.Optional(Locale),
    managedBy: Type.Optional(AddressString),
  },
  { additionalProperties: false },
);
export type UpdateInput = Static<typeof UpdateBody>;

export const DeleteBody = Type.Object({ pluginId: PluginIdString }, { additionalProperties: false });
export const IdParams = Type.Object({ pluginId: PluginIdString });
export const FetchBody = Type.Object(
  { pluginIds: Type.Array(PluginIdString, { maxItems: 250 }), returnSensitiveData: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export const SearchQuery = Type.Object(
  {
    searchValue: Type.Optional(Type.String({ maxLength: 256 })),
    bookmark: Type.Optional(Bookmark),
    locale: Type.Optional(Locale),
    pluginsForSignedInUser: Type.Optional(
      Type.Boolean({
        description: 'List the caller’s own plugins (published or not) instead of published ones; needs a session',
      }),
    ),
  },
  { additionalProperties: false },
);
export const ErrorsQuery = Type.Object(
  {
    pluginId: Type.Optional({
      ...PluginIdString,
      description: 'One plugin (owner or manager only); without it, every plugin the caller creates or manages',
    }),
    bookmark: Type.Optional(Bookmark),
  },
  { additionalProperties: false },
);

const VersionDoc = Type.Object(
  {
    ...configProps,
    version: Type.String(),
    finalized: Type.Boolean(),
    createdAt: Type.String(),
    lastUpdated: Type.String(),
  },
  { additionalProperties: false },
);
export const PluginDocSchema = Type.Object(
  {
    _docId: Type.String(),
    pluginId: Type.String(),
    createdBy: Type.String(),
    managedBy: Type.String(),
    metadata: Type.Object({}, { additionalProperties: true }),
    locale: Type.String(),
    toPublish: Type.Boolean(),
    reviewCompleted: Type.Boolean(),
    approvedUsers: Type.Optional(Type.Array(Type.String())),
    pluginSecret: Type.Optional(
      Type.String({ description: 'Only for the creator or manager, with returnSensitiveData' }),
    ),
    lastUpdated: Type.String(),
    createdAt: Type.String(),
    versions: Type.Array(VersionDoc),
  },
  { additionalProperties: false },
);
export const PluginResponse = Type.Object({ plugin: PluginDocSchema });
// `plugins`, as the reference client reads it (`data.plugins`)
export const PluginsResponse = Type.Object({ plugins: Type.Array(PluginDocSchema) });
export const SearchResponse = Type.Object({
  plugins: Type.Array(PluginDocSchema),
  bookmark: Type.String(),
  hasMore: Type.Boolean(),
});
export const ErrorsResponse = Type.Object({
  docs: Type.Array(
    Type.Object({
      _docId: Type.String(),
      pluginId: Type.String(),
      timestamp: Type.Number(),
      error: Type.String(),
      context: Type.Object({ claimId: Type.String(), claimAttemptId: Type.String(), instanceId: Type.String() }),
    }),
  ),
  bookmark: Type.String(),
  hasMore: Type.Boolean(),
  total: Type.Integer(),
});
