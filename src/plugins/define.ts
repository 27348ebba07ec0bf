// definePlugin: a core plugin written as what sets it apart. Its params are declared once
// (ParamField, params.ts, in the schema-field vocabulary of plugin documents) and drive its
// `validate`, its `inputFields` and its console form (src/portal/core-plugins.ts); the flags most
// plugins share are defaults. Hand-written checks remain only where a value is structured or
// params depend on each other (`refine`, and a field's `parse`).
import { checkDeclaredParams, type ParamField, type ParamsDeclaration } from './params.ts';
import type { ClaimPlugin, JsonObject, ValidateContext, ValidatedParams } from './types.ts';

/** What the console shows of a plugin offered in the claim builder (GET /api/v0/plugins/core). */
export interface PluginForm {
  name: string;
  description: string;
  /** The claim page's line, with `{{key}}` standing for a public param. */
  details: string;
}

/** The parts of a plugin definePlugin fills in when absent, and what it derives. */
type Derived = 'duplicatesAllowed' | 'stateful' | 'requiresUserInput' | 'requiresSession' | 'validate' | 'inputFields';

export interface PluginDefinition<Pub, Priv> extends Omit<ClaimPlugin<Pub, Priv>, Derived> {
  /** Default true. */
  duplicatesAllowed?: boolean;
  /** Default false. */
  stateful?: boolean;
  /** Default false. */
  requiresSession?: boolean;
  /** Default: whether `input` is declared. */
  requiresUserInput?: boolean;
  /** The params, checked in this order; absent: the plugin takes none. */
  params?: ParamsDeclaration;
  /** The fields `body[instanceId]` may hold (the claim page's inputs); `inputFields` is their keys. */
  input?: readonly ParamField[];
  /** Checks across params and normalisation beyond the fields (after every field passed). */
  refine?(
    checked: { publicParams: JsonObject; privateParams: JsonObject },
    ctx: ValidateContext,
  ): Promise<ValidatedParams> | ValidatedParams;
  /** The console's form of a plugin the claim builder offers (the hosted ones have plugin documents). */
  form?: PluginForm;
}

/** A declared core plugin: a ClaimPlugin that still carries its declaration (for its form). */
export interface DefinedPlugin<Pub = JsonObject, Priv = JsonObject> extends ClaimPlugin<Pub, Priv> {
  params: ParamsDeclaration;
  input?: readonly ParamField[];
  form?: PluginForm;
}

export function definePlugin<Pub = JsonObject, Priv = JsonObject>(
  def: PluginDefinition<Pub, Priv>,
): DefinedPlugin<Pub, Priv> {
  const { params = {}, input, refine, ...rest } = def;
  return {
    duplicatesAllowed: true,
    stateful: false,
    requiresSession: false,
    requiresUserInput: input !== undefined,
    ...(input ? { inputFields: input.map((f) => f.key) } : {}),
    ...rest,
    params,
    ...(input ? { input } : {}),
    validate(pub, priv, ctx) {
      const checked = checkDeclaredParams(params, pub, priv, ctx.path);
      return refine ? refine(checked, ctx) : checked;
    },
  };
}
