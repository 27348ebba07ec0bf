// The portal's only way to the service: the generated typed client over the public HTTP API. The
// browser holds no key or token: same-origin calls carry the HttpOnly console cookie, and every
// non-GET call sends the CSRF token learned from the session routes.
import { createPlatformClient, type components, type paths } from '../../clients/typescript/index.ts';

export type { paths };

let csrf: string | undefined;

export const api = createPlatformClient({
  baseUrl: location.origin,
  csrfToken: () => csrf,
  credentials: 'same-origin',
});

export type SessionInfo = paths['/api/v0/console/session']['get']['responses'][200]['content']['application/json'];
export type PluginDescription = components['schemas']['def-2'];
export type SchemaField = PluginDescription['publicParamsSchema'][number];
export type ClaimDoc =
  paths['/api/v0/claim/{claimId}']['get']['responses'][200]['content']['application/json']['claim'];

export function rememberSession(s: SessionInfo): SessionInfo {
  csrf = s.csrfToken || undefined;
  return s;
}

/** Thrown for any non-2xx answer: the service's own `errorMessage` (exact plugin texts included). */
export class ApiFailure extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** Unwraps an openapi-fetch result: the data, or an ApiFailure with the service's message. */
export async function call<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await p;
  if (error !== undefined || !response.ok) {
    const message = (error as { errorMessage?: string } | undefined)?.errorMessage ?? `HTTP ${response.status}`;
    // the console session ended (expired, signed out elsewhere): the console shows sign-in again
    if (response.status === 401 && csrf) dispatchEvent(new CustomEvent('console-session-ended'));
    throw new ApiFailure(message, response.status);
  }
  return data as T;
}

export async function loadSession(): Promise<SessionInfo> {
  return rememberSession(await call(api.GET('/api/v0/console/session')));
}

let descriptions: Promise<PluginDescription[]> | undefined;
export function pluginDescriptions(): Promise<PluginDescription[]> {
  descriptions ??= call(api.GET('/api/v0/plugins/core')).then((r) => r.plugins);
  return descriptions;
}

export const formatTime = (ms: string | number | null | undefined): string =>
  ms === null || ms === undefined || ms === '' ? '—' : new Date(Number(ms)).toLocaleString();

export type PluginDoc =
  paths['/api/v0/plugin/{pluginId}']['get']['responses'][200]['content']['application/json']['plugin'];
export type PluginVersion = PluginDoc['versions'][number];

/** A plugin the builder can add: a core description, or a document's version in the same shape. */
export type PluginOption = PluginDescription & { version?: string; custom?: boolean };

/** The version a claim pins: the latest finalized one, or for its owner the latest of all. */
export function usableVersion(doc: PluginDoc, owner: boolean): PluginVersion | undefined {
  const finalized = doc.versions.filter((v) => v.finalized);
  return (owner ? doc.versions : finalized).at(-1) ?? finalized.at(-1);
}

/** A document's version as a form description (its schema fields have the shape docs/plugins-platform.md describes). */
export function describeVersion(doc: PluginDoc, v: PluginVersion): PluginOption {
  const meta = doc.metadata as { name?: string; description?: string };
  return {
    pluginId: doc.pluginId,
    version: v.version,
    custom: true,
    metadata: { name: meta.name ?? doc.pluginId, description: meta.description ?? '' },
    duplicatesAllowed: v.duplicatesAllowed === true,
    stateful: v.stateFunctionPreset !== 'Stateless',
    requiresSessions: v.requiresSessions === true,
    requiresUserInputs: v.requiresUserInputs === true,
    reuseForNonIndexed: v.reuseForNonIndexed === true,
    canAssignClaimNumbers: v.stateFunctionPreset === 'ClaimNumbers',
    mandatory: false,
    publicParamsSchema: (v.publicParamsSchema ?? []) as SchemaField[],
    privateParamsSchema: (v.privateParamsSchema ?? []) as SchemaField[],
    userInputsSchema: (v.userInputsSchema ?? []) as SchemaField[],
    customDetailsDisplay: v.customDetailsDisplay ?? '',
  };
}

async function searchAll(mine: boolean): Promise<PluginDoc[]> {
  const out: PluginDoc[] = [];
  let bookmark = '';
  // a few pages are plenty for a picker; the search route pages by 25
  for (let i = 0; i < 8; i++) {
    const r = await call(
      api.GET('/api/v0/plugins/search', {
        params: { query: { bookmark, ...(mine ? { pluginsForSignedInUser: true } : {}) } },
      }),
    );
    out.push(...(r.plugins as PluginDoc[]));
    if (!r.hasMore) break;
    bookmark = r.bookmark;
  }
  return out;
}

/** Everything the console's builder can add: core plugins, published documents, and my own. */
export async function builderPlugins(): Promise<PluginOption[]> {
  const [core, published, mine] = await Promise.all([
    pluginDescriptions(),
    searchAll(false),
    searchAll(true).catch(() => [] as PluginDoc[]),
  ]);
  const out: PluginOption[] = [...core];
  const seen = new Set(out.map((d) => d.pluginId));
  for (const [docs, owner] of [
    [mine, true],
    [published, false],
  ] as const) {
    for (const doc of docs) {
      if (seen.has(doc.pluginId)) continue;
      const v = usableVersion(doc, owner);
      if (!v) continue;
      seen.add(doc.pluginId);
      out.push(describeVersion(doc, v));
    }
  }
  return out;
}
