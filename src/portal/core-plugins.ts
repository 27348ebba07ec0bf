// Form descriptions of the core plugins, in the vocabulary of docs/plugins-platform.md (schema fields with key,
// label, type, required, helper, options, arrayField, defaultValue). The console's claim builder
// and the public claim page render only from these (GET /api/v0/plugins/core), so a plugin added
// with a description appears in the UI without UI changes. They are derived, never written here:
// each core plugin declares its params once (definePlugin, src/plugins/define.ts), and that
// declaration also drives its checks; a plugin with a `form` is offered by the claim builder.
//
// Two conventions beyond the schema fields of docs/plugins-platform.md, both needed to describe the core plugins' params:
//  - a `key` with dots names a nested field (`list.addresses` is publicParams.list.addresses);
//  - type `dateRanges`: UintRange[] of UNIX ms (transferTimes), rendered as pairs of date pickers.
//    Like `ownershipRequirements` for hosted plugins, it is a structured type the forms know.
import { Type, type Static } from 'typebox';
import type { DefinedPlugin, PluginForm } from '../plugins/define.ts';
import type { ParamField } from '../plugins/params.ts';
import { corePlugins, onDemandCompatible } from '../plugins/registry.ts';

// A plugin document's field types, with `dateRanges` in place of `ownershipRequirements` (no core form asks for one).
const lit = Type.Literal;

export const SchemaField = Type.Object(
  {
    key: Type.String(),
    label: Type.String(),
    type: Type.Union([lit('string'), lit('number'), lit('boolean'), lit('date'), lit('url'), lit('dateRanges')]),
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

/** A declared param as a form field (the param's own fields, in the schema's order), or null when the form does not show it. */
function formField(f: ParamField): SchemaField | null {
  if (f.label === undefined) return null;
  const type = f.form?.type ?? f.type;
  if (type === 'ownershipRequirements' || type === 'addressList')
    throw new Error(`param ${f.key}: a ${type} param needs a form type`);
  const arrayField = f.form?.arrayField ?? f.arrayField;
  return {
    key: f.form?.key ?? f.key,
    label: f.label,
    type,
    ...(f.required !== undefined ? { required: f.required } : {}),
    ...(f.helper !== undefined ? { helper: f.helper } : {}),
    ...(arrayField !== undefined ? { arrayField } : {}),
    ...(f.hideFromDetailsDisplay !== undefined ? { hideFromDetailsDisplay: f.hideFromDetailsDisplay } : {}),
  };
}

/** A params object's form: the shown fields, those marked `first` ahead, else in declaration order. */
function formOf(fields: readonly ParamField[] = []): SchemaField[] {
  const ordered = [...fields.filter((f) => f.form?.first), ...fields.filter((f) => !f.form?.first)];
  return ordered.map(formField).filter((f): f is SchemaField => f !== null);
}

/** The description of a core plugin with a form, from its declaration and its flags. */
export function describePlugin(plugin: DefinedPlugin & { form: PluginForm }): PluginDescription {
  return {
    pluginId: plugin.id,
    metadata: { name: plugin.form.name, description: plugin.form.description },
    duplicatesAllowed: plugin.duplicatesAllowed,
    stateful: plugin.stateful,
    requiresSessions: plugin.requiresSession,
    requiresUserInputs: plugin.requiresUserInput,
    reuseForNonIndexed: onDemandCompatible(plugin),
    canAssignClaimNumbers: plugin.canAssignClaimNumbers !== undefined,
    mandatory: plugin.mandatory ?? false,
    publicParamsSchema: formOf(plugin.params.public),
    privateParamsSchema: formOf(plugin.params.private),
    userInputsSchema: formOf(plugin.input),
    customDetailsDisplay: plugin.form.details,
  };
}

/** Every core plugin the claim builder offers (those with a form), in registry order. */
export const CORE_PLUGIN_DESCRIPTIONS: PluginDescription[] = corePlugins()
  .filter((p): p is DefinedPlugin & { form: PluginForm } => 'form' in p && p.form !== undefined)
  .map(describePlugin);
