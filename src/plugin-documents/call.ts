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
 * The request: the flat body (schema values first, then the context fields docs/plugins-platform.md lists)
 * and the header fields, which leave the body. Keys are unique across the schemas (validation).
 */
export function buildRequest(c: CallContext): { body: JsonObject; headers: Record<string, string> } {
  const v = c.version;
  const headerKeys = headerKeysOf(v);
  const body: JsonObject = {};
  const headers: Record<string, string> = {};
  const put = (key: string, value: unknown) => {
    if (value === undefined) return;
    if (headerKeys.has(key)) headers[key] = String(value);
    else body[key] = value;
  };
  for (const [k, val] of Object.entries(c.inputs)) put(k, val);
  for (const [k, val] of Object.entries(c.publicParams)) put(k, val);
  for (const [k, val] of Object.entries(c.privateParams)) put(k, val);
  for (const h of v.verificationCall?.hardcodedInputs ?? []) put(h.key, h.value);
  const passAddress = v.verificationCall?.passAddress === true;
  body.platformAddress = passAddress ? c.platformAddress : null;
  body.ethAddress = passAddress ? evmAddressOf(c.platformAddress) : null;
  body.isAddressSignedIn = passAddress ? c.isAddressSignedIn : null;
  body.pluginSecret = c.pluginSecret;
  body.version = v.version;
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

// a version's header fields, once per version object (a version changes only by being replaced)
const headerKeysCache = new WeakMap<PluginVersion, Set<string>>();
function headerKeysOf(v: PluginVersion): Set<string> {
  let keys = headerKeysCache.get(v);
  if (!keys) {
    keys = new Set(
      [
        ...v.userInputsSchema,
        ...v.publicParamsSchema,
        ...v.privateParamsSchema,
        ...(v.verificationCall?.hardcodedInputs ?? []),
      ]
        .filter((f) => f.headerField)
        .map((f) => f.key),
    );
    headerKeysCache.set(v, keys);
  }
  return keys;
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
export async function callEndpoint(egress: Egress, c: CallContext, now: number): Promise<CallOutcome> {
  const uri = c.version.verificationCall?.uri;
  if (!uri) return { ok: false, error: `Plugin ${c.pluginId} version ${c.version.version} has no verificationCall` };
  const { body, headers } = buildRequest(c);
  const raw = JSON.stringify(body);
  const signature = signRequest(c.pluginSecret, raw, now);
  let res;
  try {
    res = await egress.request({
      url: uri,
      method: 'POST',
      headers: { ...headers, ...signature, 'content-type': 'application/json' },
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
