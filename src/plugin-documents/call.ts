// The signed call to a custom plugin's endpoint (docs/plugins-platform.md): the flat JSON body, header fields
// as headers, the X-Platform-* signature headers, one deadline for the whole exchange and a cap
// on the response, all through the one egress module. Every failure comes back as a sentence fit
// for the attempt's error and the plugin's error record.
import { EgressError, type Egress } from '../egress/index.ts';
import { signRequest } from '../egress/signature.ts';
import { evmAddressOf } from '../shared/addresses.ts';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../shared/http-input.ts';
import type { JsonObject } from '../plugins/types.ts';
import type { PluginVersion } from './model.ts';

export const CALL_TIMEOUT_MS = 10_000;
export const MAX_RESPONSE_BYTES = 1024 * 1024;
const MAX_MESSAGE_LENGTH = 1000;

export interface CallContext {
  pluginId: string;
  pluginSecret: string;
  version: PluginVersion;
  instanceId: string;
  claim: { claimId: string; createdAt: number; lastUpdated: number };
  claimAttemptId: string;
  isSimulation: boolean;
  attemptStatus: 'executing' | 'success' | 'failure';
  platformAddress: string;
  isAddressSignedIn: boolean;
  locale: string;
  publicParams: JsonObject;
  privateParams: JsonObject;
  inputs: JsonObject;
}

/**
 * What a call needs of its version: the same for every call of one version object (a version
 * changes only by being replaced), so it is derived once per version (`specOf`). The plugin call
 * thread receives it as text (`specTextOf`) and keeps the parsed form (`specFromText`).
 */
export interface CallSpec {
  /** verificationCall.uri, or null when the version has none. */
  uri: string | null;
  version: number;
  passAddress: boolean;
  /** Keys of the header fields, across the schemas and the hardcoded inputs. */
  headerKeys: ReadonlySet<string>;
  /** The hardcoded inputs with a value, in order. */
  hardcoded: ReadonlyArray<readonly [key: string, value: unknown]>;
}

/** A call's context without its version: what varies per call (the version's part is a CallSpec). */
export type CallFields = Omit<CallContext, 'version'>;

const specs = new WeakMap<PluginVersion, { spec: CallSpec; text: string }>();
function specEntry(v: PluginVersion): { spec: CallSpec; text: string } {
  let entry = specs.get(v);
  if (!entry) {
    const headerKeys = [
      ...v.userInputsSchema,
      ...v.publicParamsSchema,
      ...v.privateParamsSchema,
      ...(v.verificationCall?.hardcodedInputs ?? []),
    ]
      .filter((f) => f.headerField)
      .map((f) => f.key);
    // a hardcoded input without a value is never sent (as `put` skips undefined values)
    const hardcoded = (v.verificationCall?.hardcodedInputs ?? [])
      .filter((h) => h.value !== undefined)
      .map((h) => [h.key, h.value] as const);
    const uri = v.verificationCall?.uri ?? null;
    const passAddress = v.verificationCall?.passAddress === true;
    const spec: CallSpec = { uri, version: v.version, passAddress, headerKeys: new Set(headerKeys), hardcoded };
    entry = { spec, text: JSON.stringify([uri, v.version, passAddress, headerKeys, hardcoded]) };
    specs.set(v, entry);
  }
  return entry;
}

/** The version's CallSpec, once per version object. */
export const specOf = (v: PluginVersion): CallSpec => specEntry(v).spec;
/** The version's CallSpec as text (what crosses to the plugin call thread), once per version object. */
export const specTextOf = (v: PluginVersion): string => specEntry(v).text;

// the thread's parsed specs, by text: a few per plugin version in use, the oldest dropped beyond this
const MAX_SPECS = 256;
const parsedSpecs = new Map<string, CallSpec>();
/** The CallSpec of `specTextOf`'s text (parsed once while it stays in use). */
export function specFromText(text: string): CallSpec {
  let spec = parsedSpecs.get(text);
  if (!spec) {
    const [uri, version, passAddress, headerKeys, hardcoded] = JSON.parse(text) as [
      string | null,
      number,
      boolean,
      string[],
      Array<[string, unknown]>,
    ];
    spec = { uri, version, passAddress, headerKeys: new Set(headerKeys), hardcoded };
    if (parsedSpecs.size >= MAX_SPECS) parsedSpecs.delete(parsedSpecs.keys().next().value!);
    parsedSpecs.set(text, spec);
  }
  return spec;
}

/**
 * The request: the flat body (schema values first, then the context fields docs/plugins-platform.md lists)
 * and the header fields, which leave the body. Keys are unique across the schemas (validation).
 */
export function buildRequest(c: CallContext): { body: JsonObject; headers: Record<string, string> } {
  return requestOf(specOf(c.version), c);
}

function requestOf(spec: CallSpec, c: CallFields): { body: JsonObject; headers: Record<string, string> } {
  const body: JsonObject = {};
  const headers: Record<string, string> = {};
  const keys = spec.headerKeys;
  putAll(body, headers, keys, c.inputs);
  putAll(body, headers, keys, c.publicParams);
  putAll(body, headers, keys, c.privateParams);
  for (const [key, value] of spec.hardcoded) put(body, headers, keys, key, value);
  const passAddress = spec.passAddress;
  body.platformAddress = passAddress ? c.platformAddress : null;
  body.ethAddress = passAddress ? evmAddressOf(c.platformAddress) : null;
  body.isAddressSignedIn = passAddress ? c.isAddressSignedIn : null;
  body.pluginSecret = c.pluginSecret;
  body.version = spec.version;
  body.claimId = c.claim.claimId;
  body.claimAttemptId = c.claimAttemptId;
  body.instanceId = c.instanceId;
  body._isSimulation = c.isSimulation;
  body._attemptStatus = c.attemptStatus;
  body.lastUpdated = c.claim.lastUpdated;
  body.createdAt = c.claim.createdAt;
  body.locale = c.locale;
  return { body, headers };
}

/** A value goes to the headers (a header field, as text) or to the body; undefined goes nowhere. */
function put(
  body: JsonObject,
  headers: Record<string, string>,
  keys: ReadonlySet<string>,
  key: string,
  value: unknown,
) {
  if (value === undefined) return;
  if (keys.has(key)) headers[key] = String(value);
  else body[key] = value;
}
function putAll(body: JsonObject, headers: Record<string, string>, keys: ReadonlySet<string>, values: JsonObject) {
  for (const key of Object.keys(values)) put(body, headers, keys, key, values[key]);
}

/**
 * A failure's `error` is what claimers see; `detail`, when set, is what the owner's error log
 * records instead (it names the endpoint's host, port or redirect target, which claimers of a
 * public claim have no business learning).
 */
export type CallOutcome = { ok: true; response: JsonObject } | { ok: false; error: string; detail?: string };

/** The claimers' text for an endpoint that could not be reached, refused, or redirected. */
export const NOT_CALLED = 'Plugin endpoint could not be called';

/**
 * A key with a dot anywhere in the returned JSON (a storage constraint of the contract). Called
 * only on answers within MAX_JSON_DEPTH, so the recursion is bounded.
 */
function dottedKey(v: unknown): string | null {
  if (Array.isArray(v)) {
    for (const x of v) {
      const d = dottedKey(x);
      if (d !== null) return d;
    }
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k.includes('.')) return k;
      const d = dottedKey(x);
      if (d !== null) return d;
    }
  }
  return null;
}

function messageOf(body: Buffer): string | null {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    const m = (parsed as { message?: unknown } | null)?.message;
    if (typeof m === 'string' && m.trim() !== '') return m.trim().slice(0, MAX_MESSAGE_LENGTH);
  } catch {
    // not JSON: no message
  }
  return null;
}

/**
 * Calls the endpoint once through `egress`, signed at `now`; a 200 with a dot-free JSON object
 * passes, anything else fails. The service runs it on the plugin call thread (call-thread.ts).
 */
export function callEndpoint(egress: Egress, c: CallContext, now: number): Promise<CallOutcome> {
  return callWith(egress, specOf(c.version), c, now);
}

/** `callEndpoint` with the version's part given as its CallSpec (the plugin call thread's form). */
export async function callWith(egress: Egress, spec: CallSpec, c: CallFields, now: number): Promise<CallOutcome> {
  const uri = spec.uri;
  if (!uri) return { ok: false, error: `Plugin ${c.pluginId} version ${spec.version} has no verificationCall` };
  const { body, headers } = requestOf(spec, c);
  const raw = JSON.stringify(body);
  // the signature headers and the content type are added to the header fields' object (a fresh one per call)
  Object.assign(headers, signRequest(c.pluginSecret, raw, now));
  headers['content-type'] = 'application/json';
  let res;
  try {
    res = await egress.request({
      url: uri,
      method: 'POST',
      headers,
      body: raw,
      timeoutMs: CALL_TIMEOUT_MS,
      maxResponseBytes: MAX_RESPONSE_BYTES,
    });
  } catch (err) {
    if (err instanceof EgressError) {
      if (err.kind === 'timeout')
        return { ok: false, error: `Plugin endpoint did not answer within ${CALL_TIMEOUT_MS / 1000} seconds` };
      if (err.kind === 'too-large')
        return { ok: false, error: `Plugin endpoint response is larger than ${MAX_RESPONSE_BYTES} bytes` };
      return { ok: false, error: NOT_CALLED, detail: `${NOT_CALLED}: ${err.reason}` };
    }
    throw err;
  }
  if (res.status !== 200)
    return { ok: false, error: messageOf(res.body) ?? `Plugin endpoint answered HTTP ${res.status}` };
  let parsed: unknown;
  const text = res.body.toString('utf8');
  if (text.trim() === '') parsed = {};
  else {
    try {
      parsed = JSON.parse(text);
    } catch {
      return { ok: false, error: 'Invalid response from API: the 200 body is not JSON' };
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    return { ok: false, error: 'Invalid response from API: the 200 body is not a JSON object' };
  // the answer is stored, replayed and handed to plugins: nested as deep as a request body may be
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH))
    return {
      ok: false,
      error: `Invalid response from API: the 200 body is nested deeper than ${MAX_JSON_DEPTH} levels`,
    };
  const dotted = dottedKey(parsed);
  if (dotted !== null) return { ok: false, error: `Invalid response from API: key "${dotted}" contains a dot` };
  return { ok: true, response: parsed as JsonObject };
}
