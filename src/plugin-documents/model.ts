// Plugin documents as the service sees them (docs/plugins-platform.md): the document, its versions and their
// config. The stored config of a version is exactly `VersionConfig`; `version`, `finalized` and
// the timestamps live in their own columns.
export const FIELD_TYPES = ['string', 'number', 'boolean', 'date', 'url', 'ownershipRequirements'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const PRESETS = ['Stateless', 'ClaimToken', 'ClaimNumbers', 'CustomResponseHandler'] as const;
export type StateFunctionPreset = (typeof PRESETS)[number];

export interface SchemaField {
  key: string;
  label: string;
  type: FieldType;
  required?: boolean;
  defaultValue?: string | number | boolean;
  helper?: string;
  options?: Array<{ label: string; value: string | number | boolean }>;
  arrayField?: boolean;
  headerField?: boolean;
  hideFromDetailsDisplay?: boolean;
  hyperlink?: { url: string; showAsGenericView?: boolean };
}

/** A schema field with the static value sent on every request. */
export interface HardcodedInput extends SchemaField {
  value: unknown;
}

export interface VerificationCall {
  uri: string;
  hardcodedInputs: HardcodedInput[];
  passAddress?: boolean;
}

export interface VersionConfig {
  stateFunctionPreset: StateFunctionPreset;
  duplicatesAllowed: boolean;
  requiresSessions: boolean;
  requiresUserInputs: boolean;
  reuseForNonIndexed: boolean;
  receiveStatusWebhook: boolean;
  skipProcessingWebhook?: boolean;
  ignoreSimulations?: boolean;
  requireSignIn?: boolean;
  userInputsSchema: SchemaField[];
  publicParamsSchema: SchemaField[];
  privateParamsSchema: SchemaField[];
  verificationCall?: VerificationCall;
  customDetailsDisplay?: string;
}

export interface PluginVersion extends VersionConfig {
  version: number;
  finalized: boolean;
  createdAt: number;
  lastUpdated: number;
}

export interface PluginMetadata {
  name: string;
  description: string;
  image: string;
  createdBy?: string;
  documentation?: string;
  sourceCode?: string;
  supportLink?: string;
  parentApp?: string;
}

export interface PluginRecord {
  pluginId: string;
  createdBy: string;
  managedBy: string;
  locale: string;
  metadata: PluginMetadata;
  toPublish: boolean;
  reviewCompleted: boolean;
  /** Canonical addresses the owner lets use the plugin before it is published. */
  approvedUsers: string[];
  createdAt: number;
  lastUpdated: number;
  versions: PluginVersion[];
}

export const isOwner = (
  p: Pick<PluginRecord, 'createdBy' | 'managedBy'>,
  address: string | null | undefined,
): boolean => !!address && (p.createdBy === address || p.managedBy === address);
