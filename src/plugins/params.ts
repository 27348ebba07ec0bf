// Small validators for plugin params. Every failure is a 400 naming the exact field.
import { badRequest } from '../shared/errors.ts';
import type { JsonObject } from './types.ts';

export function asObject(v: unknown, path: string): JsonObject {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw badRequest(`${path} must be an object`);
  return v as JsonObject;
}

/** Refuses keys the plugin does not know (unknown fields are refused, never dropped). */
export function onlyKeys(obj: JsonObject, allowed: string[], path: string): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) {
      throw badRequest(
        allowed.length
          ? `${path} has unknown field "${k}" (allowed: ${allowed.join(', ')})`
          : `${path} has unknown field "${k}" (this plugin takes no params here)`,
      );
    }
  }
}

export function optBool(obj: JsonObject, key: string, path: string): boolean | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') throw badRequest(`${path}.${key} must be a boolean`);
  return v;
}

export function optString(obj: JsonObject, key: string, path: string, maxLength = 1024): string | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw badRequest(`${path}.${key} must be a string`);
  if (v.length > maxLength) throw badRequest(`${path}.${key} must be at most ${maxLength} characters`);
  return v;
}

/** An optional integer from `min` to `max` (state documents; declared params use ParamField). */
export function int(obj: JsonObject, key: string, path: string, min: number, max: number): number | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw badRequest(`${path}.${key} must be an integer from ${min} to ${max}`);
  }
  return v;
}

/** Drops undefined values so stored params stay minimal. */
export function compact(obj: Record<string, unknown>): JsonObject {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));
}

/**
 * One param of a core plugin, declared once in the schema-field vocabulary of plugin documents
 * (docs/plugins-platform.md: key, label, type, required, helper, arrayField, hideFromDetailsDisplay),
 * plus the bounds the core checks need. The plugin's `validate`, its `inputFields` and the console's
 * form (GET /api/v0/plugins/core, src/portal/core-plugins.ts) are all derived from these.
 */
export interface ParamField {
  key: string;
  /** The form's label; a field without one is checked but not shown in the console's forms. */
  label?: string;
  /**
   * Structured types, each `parse`d by its plugin: `dateRanges` (UintRange[] of UNIX ms),
   * `ownershipRequirements` (must-own-badges' groups), `addressList` (whitelist's list object).
   */
  type: 'string' | 'number' | 'boolean' | 'url' | 'dateRanges' | 'ownershipRequirements' | 'addressList';
  required?: boolean;
  helper?: string;
  arrayField?: boolean;
  hideFromDetailsDisplay?: boolean;
  /** The form field, where it differs from the param: a nested key (`list.addresses`), its own type, listed first. */
  form?: { key?: string; type?: 'string'; arrayField?: boolean; first?: true };
  /** number: an integer from `min` to `max` (`must be an integer from min to max`). */
  min?: number;
  max?: number;
  /** string / url: the longest value (default 1024 for a string). */
  maxLength?: number;
  /** string: refuse '' (`must be a non-empty string of at most N characters`); 'trimmed' also refuses blanks. */
  nonEmpty?: true | 'trimmed';
  /** string: the value must match. */
  pattern?: RegExp;
  /** The text (after the field's path) of any failure of this field, replacing the type's own. */
  invalid?: string;
  /** A required field that is absent fails with its type's text (or `invalid`) rather than `is required`. */
  missingIsInvalid?: true;
  /** A structured value's own check (lists, time ranges, ownership requirements): returns the value to store (undefined stores none). */
  parse?: (value: unknown, path: string) => unknown;
}

function stringText(f: ParamField, maxLength: number): string {
  return f.nonEmpty ? `must be a non-empty string of at most ${maxLength} characters` : 'must be a string';
}

/** Checks one present value against its field and returns the value to store. */
function checkParam(f: ParamField, v: unknown, path: string): unknown {
  if (f.parse) return f.parse(v, path);
  const fail = (text: string) => badRequest(`${path} ${f.invalid ?? text}`);
  switch (f.type) {
    case 'boolean':
      if (typeof v !== 'boolean') throw fail('must be a boolean');
      return v;
    case 'number': {
      const min = f.min ?? 0;
      const max = f.max ?? Number.MAX_SAFE_INTEGER;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
        throw fail(`must be an integer from ${min} to ${max}`);
      return v;
    }
    case 'string': {
      const maxLength = f.maxLength ?? 1024;
      if (typeof v !== 'string') throw fail(stringText(f, maxLength));
      if (f.nonEmpty && (f.nonEmpty === 'trimmed' ? v.trim() === '' : v.length === 0))
        throw fail(stringText(f, maxLength));
      if (v.length > maxLength)
        throw fail(f.nonEmpty ? stringText(f, maxLength) : `must be at most ${maxLength} characters`);
      if (f.pattern && !f.pattern.test(v)) throw fail('does not have the expected form');
      return v;
    }
    case 'url': {
      const maxLength = f.maxLength ?? 2048;
      let u: URL | null = null;
      try {
        u = typeof v === 'string' && v.length <= maxLength ? new URL(v) : null;
      } catch {
        u = null;
      }
      if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:')) throw fail('must be an absolute http(s) URL');
      return v;
    }
    default:
      throw new Error(`param ${f.key}: a ${f.type} field needs its own parse`);
  }
}

/** Checks one params object (public or private) against its fields: present values, required ones, in declaration order. */
function checkFields(fields: readonly ParamField[], obj: JsonObject, path: string): JsonObject {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const v = obj[f.key];
    const p = `${path}.${f.key}`;
    if (v === undefined) {
      if (!f.required) continue;
      if (f.missingIsInvalid) checkParam(f, v, p); // throws the type's text
      throw badRequest(`${p} is required`);
    }
    out[f.key] = checkParam(f, v, p);
  }
  return compact(out);
}

/** The params a core plugin declares: public and private fields (each absent: none). */
export interface ParamsDeclaration {
  public?: readonly ParamField[];
  private?: readonly ParamField[];
}

/**
 * The checks derived from a declaration: both objects, unknown keys refused (public, then private),
 * then every field, public first. Stored params keep the declared order and drop absent values.
 */
export function checkDeclaredParams(
  params: ParamsDeclaration,
  pub: unknown,
  priv: unknown,
  path: string,
): { publicParams: JsonObject; privateParams: JsonObject } {
  const pp = `${path}.publicParams`;
  const sp = `${path}.privateParams`;
  const publicFields = params.public ?? [];
  const privateFields = params.private ?? [];
  const p = asObject(pub, pp);
  onlyKeys(
    p,
    publicFields.map((f) => f.key),
    pp,
  );
  const s = asObject(priv, sp);
  onlyKeys(
    s,
    privateFields.map((f) => f.key),
    sp,
  );
  return { publicParams: checkFields(publicFields, p, pp), privateParams: checkFields(privateFields, s, sp) };
}
