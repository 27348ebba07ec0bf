// The portal's only way to the service: the generated typed client over the public HTTP API. The
// browser holds no key or token: same-origin calls carry the HttpOnly console cookie, and every
// non-GET call sends the CSRF token learned from the session routes.
import { createPlatformClient, type components, type paths } from '../../clients/typescript/index.ts';

export type { paths };

let csrf: string | undefined;

export const api = createPlatformClient({ baseUrl: location.origin, csrfToken: () => csrf, credentials: 'same-origin' });

export type SessionInfo = paths['/api/v0/console/session']['get']['responses'][200]['content']['application/json'];
export type PluginDescription = components['schemas']['def-2'];
export type SchemaField = PluginDescription['publicParamsSchema'][number];
export type ClaimDoc = paths['/api/v0/claim/{claimId}']['get']['responses'][200]['content']['application/json']['claim'];

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

export const formatTime = (ms: string | number | null | undefined): string => (ms === null || ms === undefined || ms === '' ? '—' : new Date(Number(ms)).toLocaleString());
