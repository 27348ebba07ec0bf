// The rules of plugin documents that span fields (docs/plugins-platform.md): schema fields and their
// options, reserved and repeated keys, header fields, customDetailsDisplay, the verification
// call, the preset's companions; and the check of param / input values against a schema, used by
// the custom plugin runtime. Every problem is a 400 naming the field.
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, VERSION_HEADER } from '../egress/signature.ts';
import { badRequest } from '../shared/errors.ts';
import type { JsonObject } from '../plugins/types.ts';
import type { HardcodedInput, SchemaField, VersionConfig } from './model.ts';
import type { VersionConfigInput } from './schemas.ts';

/** The request's own fields in a plugin call's flat body, beside the params (docs/plugins-platform.md). */
export const REQUEST_KEYS = [
  'pluginSecret',
  'version',
  'claimId',
  'platformAddress',
  'ethAddress',
  'claimAttemptId',
  '_isSimulation',
  '_isQueueHandler',
  '_attemptStatus',
  'lastUpdated',
  'createdAt',
  'email',
  'isAddressSignedIn',
  'locale',
  'instanceId',
];
/** Keys a schema may not use: the request's own fields and the signature headers (docs/plugins-platform.md). */
export const RESERVED_KEYS = [...REQUEST_KEYS, SIGNATURE_HEADER, TIMESTAMP_HEADER, VERSION_HEADER];
const RESERVED_LOWER = new Set(RESERVED_KEYS.map((k) => k.toLowerCase()));

/** Headers the HTTP exchange itself owns; a header field may not set them. */
const FORBIDDEN_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-authorization',
  'cookie',
]);

// letters, digits, _ and -: valid as a JSON key without dots and as an HTTP header name
const KEY = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

export const MAX_STRING_VALUE = 4096;
export const MAX_ARRAY_VALUES = 1000;

// What a header field may carry, as sent (`String(value)`): printable ASCII, space and tab. CR,
// LF and NUL would be refused by the egress client only at call time, and non-ASCII is read
// differently by different servers; both are the saver's or claimer's input, not the endpoint's
// fault. The length is already bounded by the type (strings MAX_STRING_VALUE, urls 2048).
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

function checkHeaderValue(field: SchemaField, v: unknown, path: string): void {
  if (field.headerField && !HEADER_VALUE.test(String(v)))
    throw badRequest(
      `${path} must be a valid HTTP header value (headerField): printable ASCII characters, space and tab only`,
    );
}

function checkScalar(field: SchemaField, v: unknown, path: string): void {
  switch (field.type) {
    case 'string':
      if (typeof v !== 'string' || v.length > MAX_STRING_VALUE)
        throw badRequest(`${path} must be a string of at most ${MAX_STRING_VALUE} characters`);
      return;
    case 'number':
      if (typeof v !== 'number' || !Number.isFinite(v)) throw badRequest(`${path} must be a number`);
      return;
    case 'boolean':
      if (typeof v !== 'boolean') throw badRequest(`${path} must be a boolean`);
      return;
    case 'date':
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
        throw badRequest(`${path} must be a date as UNIX milliseconds (a non-negative integer)`);
      return;
    case 'url': {
      let ok = false;
      if (typeof v === 'string' && v.length <= 2048) {
        try {
          const u = new URL(v);
          ok = u.protocol === 'https:' || u.protocol === 'http:';
        } catch {
          ok = false;
        }
      }
      if (!ok) throw badRequest(`${path} must be an absolute http(s) URL`);
      return;
    }
    case 'ownershipRequirements':
      if (typeof v !== 'object' || v === null || Array.isArray(v))
        throw badRequest(`${path} must be an ownershipRequirements object`);
      return;
  }
}

/** Checks one value against its field: type, array form and options. */
export function checkFieldValue(field: SchemaField, v: unknown, path: string): void {
  const values = field.arrayField ? v : [v];
  if (field.arrayField) {
    if (!Array.isArray(v)) throw badRequest(`${path} must be an array (arrayField)`);
    if (v.length > MAX_ARRAY_VALUES) throw badRequest(`${path} must hold at most ${MAX_ARRAY_VALUES} values`);
  }
  (values as unknown[]).forEach((x, i) => {
    const p = field.arrayField ? `${path}[${i}]` : path;
    checkScalar(field, x, p);
    checkHeaderValue(field, x, p);
    if (field.options && !field.options.some((o) => o.value === x)) {
      throw badRequest(
        `${p} must be one of the options: ${field.options.map((o) => JSON.stringify(o.value)).join(', ')}`,
      );
    }
  });
}

/**
 * Checks values (public params, private params or user inputs) against a schema: unknown keys
 * are refused, required fields must be present, defaults fill absent fields.
 */
export function checkValues(schema: SchemaField[], input: unknown, path: string): JsonObject {
  if (input === undefined || input === null) input = {};
  if (typeof input !== 'object' || Array.isArray(input)) throw badRequest(`${path} must be an object`);
  const obj = input as JsonObject;
  for (const k of Object.keys(obj)) {
    if (!schema.some((f) => f.key === k)) {
      throw badRequest(
        schema.length
          ? `${path} has unknown field "${k}" (allowed: ${schema.map((f) => f.key).join(', ')})`
          : `${path} has unknown field "${k}" (this plugin takes none here)`,
      );
    }
  }
  const out: JsonObject = {};
  for (const f of schema) {
    let v = obj[f.key];
    if (v === undefined || v === null) {
      if (f.defaultValue !== undefined) v = f.arrayField ? [f.defaultValue] : f.defaultValue;
      else if (f.required) throw badRequest(`${path}.${f.key} is required`);
      else continue;
    }
    checkFieldValue(f, v, `${path}.${f.key}`);
    out[f.key] = v;
  }
  return out;
}

function checkField(
  f: SchemaField,
  path: string,
  where: 'userInputsSchema' | 'publicParamsSchema' | 'privateParamsSchema' | 'hardcodedInputs',
): void {
  if (!KEY.test(f.key))
    throw badRequest(
      `${path}.key "${f.key}" must be 1 to 64 letters, digits, _ or - and start with a letter or _ (no dots)`,
    );
  if (RESERVED_LOWER.has(f.key.toLowerCase()))
    throw badRequest(`${path}.key "${f.key}" is reserved (reserved keys: ${RESERVED_KEYS.join(', ')})`);
  if (f.headerField) {
    if (FORBIDDEN_HEADERS.has(f.key.toLowerCase()) || f.key.toLowerCase().startsWith('x-platform-'))
      throw badRequest(
        `${path}.key "${f.key}" cannot be sent as a header (headerField): the HTTP exchange owns that header`,
      );
    if (f.arrayField) throw badRequest(`${path}: a headerField cannot be an arrayField`);
    if (f.type === 'ownershipRequirements')
      throw badRequest(`${path}: a headerField must hold a string, number, boolean, date or url`);
  }
  if (f.hideFromDetailsDisplay !== undefined && where !== 'publicParamsSchema')
    throw badRequest(`${path}.hideFromDetailsDisplay applies to publicParamsSchema fields only`);
  if (f.options) {
    if (f.type === 'ownershipRequirements' || f.type === 'boolean')
      throw badRequest(`${path}.options: a ${f.type} field takes no options`);
    f.options.forEach((o, i) =>
      checkFieldValue({ ...f, options: undefined, arrayField: false }, o.value, `${path}.options[${i}].value`),
    );
  }
  if (f.defaultValue !== undefined)
    checkFieldValue({ ...f, arrayField: false }, f.defaultValue, `${path}.defaultValue`);
  if (f.hyperlink) checkScalar({ ...f, type: 'url' }, f.hyperlink.url, `${path}.hyperlink.url`);
}

/** `{{key}}` references of a customDetailsDisplay template. */
export const templateKeys = (template: string): string[] =>
  [...template.matchAll(/\{\{\s*([^{}\s]*)\s*\}\}/g)].map((m) => m[1]);

/**
 * Validates a version's config (as sent) and returns it normalised (absent booleans false,
 * absent schemas empty). `checkUri` applies the egress rules to verificationCall.uri.
 */
export async function validateVersionConfig(
  input: VersionConfigInput,
  path: string,
  checkUri: (uri: string) => Promise<string | null>,
): Promise<VersionConfig> {
  const { finalized: _finalized, ...c } = input;
  // The reference client sends both fields on every version. Calls are always POST, and this
  // service runs no creator-supplied code, so only those values are accepted (and not stored).
  const call = c.verificationCall;
  if (call?.method !== undefined && call.method !== 'POST') {
    throw badRequest(
      `${path}.verificationCall.method must be "POST": this service always calls plugin endpoints with POST (got ${JSON.stringify(call.method)})`,
    );
  }
  if (call?.postProcessingJs !== undefined && call.postProcessingJs !== '') {
    throw badRequest(
      `${path}.verificationCall.postProcessingJs must be empty: this service runs no creator-supplied code`,
    );
  }
  const config: VersionConfig = {
    stateFunctionPreset: c.stateFunctionPreset,
    duplicatesAllowed: c.duplicatesAllowed ?? false,
    requiresSessions: c.requiresSessions ?? false,
    requiresUserInputs: c.requiresUserInputs ?? false,
    reuseForNonIndexed: c.reuseForNonIndexed ?? false,
    receiveStatusWebhook: c.receiveStatusWebhook ?? false,
    ...(c.skipProcessingWebhook !== undefined ? { skipProcessingWebhook: c.skipProcessingWebhook } : {}),
    ...(c.ignoreSimulations !== undefined ? { ignoreSimulations: c.ignoreSimulations } : {}),
    ...(c.requireSignIn !== undefined ? { requireSignIn: c.requireSignIn } : {}),
    userInputsSchema: (c.userInputsSchema ?? []) as SchemaField[],
    publicParamsSchema: (c.publicParamsSchema ?? []) as SchemaField[],
    privateParamsSchema: (c.privateParamsSchema ?? []) as SchemaField[],
    ...(c.verificationCall
      ? {
          verificationCall: {
            uri: c.verificationCall.uri,
            hardcodedInputs: (c.verificationCall.hardcodedInputs ?? []) as HardcodedInput[],
            ...(c.verificationCall.passAddress !== undefined ? { passAddress: c.verificationCall.passAddress } : {}),
          },
        }
      : {}),
    ...(c.customDetailsDisplay !== undefined ? { customDetailsDisplay: c.customDetailsDisplay } : {}),
  };

  // every key once across the schemas and the hardcoded inputs (header names compare case-insensitively)
  const seen = new Map<string, string>();
  const lists = [
    ['userInputsSchema', config.userInputsSchema],
    ['publicParamsSchema', config.publicParamsSchema],
    ['privateParamsSchema', config.privateParamsSchema],
    ['verificationCall.hardcodedInputs', config.verificationCall?.hardcodedInputs ?? []],
  ] as const;
  for (const [name, fields] of lists) {
    const where = name === 'verificationCall.hardcodedInputs' ? 'hardcodedInputs' : name;
    fields.forEach((f, i) => {
      const p = `${path}.${name}[${i}]`;
      checkField(f, p, where);
      const lower = f.key.toLowerCase();
      const other = seen.get(lower);
      if (other)
        throw badRequest(
          `${p}.key "${f.key}" is already used by ${other}; a key may appear once across the schemas and hardcodedInputs`,
        );
      seen.set(lower, p);
    });
  }
  config.verificationCall?.hardcodedInputs.forEach((h, i) => {
    const p = `${path}.verificationCall.hardcodedInputs[${i}].value`;
    if (h.value === undefined || h.value === null) throw badRequest(`${p} is required`);
    checkFieldValue(h, h.value, p);
  });

  if (config.customDetailsDisplay !== undefined) {
    for (const key of templateKeys(config.customDetailsDisplay)) {
      if (!config.publicParamsSchema.some((f) => f.key === key)) {
        throw badRequest(
          `${path}.customDetailsDisplay references {{${key}}}, which is not a key of publicParamsSchema`,
        );
      }
    }
  }

  if (config.userInputsSchema.length && !config.requiresUserInputs)
    throw badRequest(`${path}.requiresUserInputs must be true when userInputsSchema has fields`);
  if (config.reuseForNonIndexed) {
    const why =
      config.stateFunctionPreset !== 'Stateless'
        ? `the preset is ${config.stateFunctionPreset}, not Stateless`
        : config.requiresUserInputs
          ? 'it requires user inputs'
          : config.requiresSessions || config.requireSignIn
            ? 'it requires a session'
            : null;
    if (why)
      throw badRequest(`${path}.reuseForNonIndexed needs a stateless plugin without user inputs or sessions: ${why}`);
  }
  if (!config.verificationCall && !config.skipProcessingWebhook)
    throw badRequest(`${path}.verificationCall is required (unless skipProcessingWebhook is true)`);
  if (config.receiveStatusWebhook && !config.verificationCall)
    throw badRequest(`${path}.receiveStatusWebhook needs a verificationCall (the webhook goes to its uri)`);
  if (config.verificationCall) {
    const refusal = await checkUri(config.verificationCall.uri);
    if (refusal) throw badRequest(`${path}.verificationCall.uri is refused: ${refusal}`);
  }
  return config;
}
