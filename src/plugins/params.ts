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

export function int(obj: JsonObject, key: string, path: string, min: number, max: number, required: true): number;
export function int(
  obj: JsonObject,
  key: string,
  path: string,
  min: number,
  max: number,
  required?: false,
): number | undefined;
export function int(
  obj: JsonObject,
  key: string,
  path: string,
  min: number,
  max: number,
  required = false,
): number | undefined {
  const v = obj[key];
  if (v === undefined) {
    if (required) throw badRequest(`${path}.${key} is required`);
    return undefined;
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw badRequest(`${path}.${key} must be an integer from ${min} to ${max}`);
  }
  return v;
}

/** Drops undefined values so stored params stay minimal. */
export function compact(obj: Record<string, unknown>): JsonObject {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));
}

/** `validate` of a plugin that takes no params: both objects must be empty. */
export function noParams(
  pub: unknown,
  priv: unknown,
  { path }: { path: string },
): { publicParams: JsonObject; privateParams: JsonObject } {
  onlyKeys(asObject(pub, `${path}.publicParams`), [], `${path}.publicParams`);
  onlyKeys(asObject(priv, `${path}.privateParams`), [], `${path}.privateParams`);
  return { publicParams: {}, privateParams: {} };
}
