// The typed TypeScript client of this service, for integrators and for the web portal: openapi-fetch
// over the declarations generated from the service's own OpenAPI document (schema.d.ts). Paths,
// parameters, bodies and answers are checked at compile time:
//
//   import { createPlatformClient } from './clients/typescript/index.ts';
//   const api = createPlatformClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.API_KEY });
//   const { data, error } = await api.GET('/api/v0/claim/{claimId}', { params: { path: { claimId: 'my-claim' } } });
//   // data: the claim document; error: { errorMessage, … } on a 4xx
import createClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch';
import type { paths } from './schema.d.ts';

export type { paths, components } from './schema.d.ts';
export type PlatformClient = Client<paths>;

export interface PlatformClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Origin of the service, e.g. `http://127.0.0.1:3000` ('' in the browser: same origin). */
  baseUrl: string;
  /** `x-api-key` for server-side callers. Browsers on the portal's origin use the console cookie instead. */
  apiKey?: string;
  /** A user's access token (`Authorization: Bearer`), for session routes. */
  accessToken?: string | (() => string | undefined);
  /** Header sent on every non-GET call (the portal's CSRF token); read at each call. */
  csrfToken?: () => string | undefined;
}

export function createPlatformClient(opts: PlatformClientOptions): PlatformClient {
  const { apiKey, accessToken, csrfToken, ...rest } = opts;
  const client = createClient<paths>(rest);
  const auth: Middleware = {
    onRequest({ request }) {
      if (apiKey) request.headers.set('x-api-key', apiKey);
      const token = typeof accessToken === 'function' ? accessToken() : accessToken;
      if (token) request.headers.set('authorization', `Bearer ${token}`);
      const csrf = csrfToken?.();
      if (csrf && request.method !== 'GET' && request.method !== 'HEAD') request.headers.set('x-csrf-token', csrf);
      return request;
    },
  };
  client.use(auth);
  return client;
}
