// The published reference client (`bitbadgesjs-sdk`, a dev dependency) pointed at a running
// service. The only layer between them renames the brand word in request PATHS, as a user moving
// over would: `siwbb` → `signin` and `bitbadges` → `platform`. Bodies, queries and answers pass
// untouched, so every shape the client sends or reads is the service's own.
import { registerHooks } from 'node:module';
import type { TestApp } from '../helpers/app.ts';

// The client imports `@noble/hashes/sha256` without declaring @noble/hashes (it relied on an
// older copy hoisted by another package). This project has @noble/hashes 2, whose export of the
// same function is `sha2.js`: point that one import there, for the client's files only.
registerHooks({
  resolve(specifier, context, next) {
    if (specifier === '@noble/hashes/sha256' && context.parentURL?.includes('/node_modules/bitbadgesjs-sdk/'))
      return next('@noble/hashes/sha2.js', context);
    return next(specifier, context);
  },
});
const sdk = await import('bitbadgesjs-sdk');
// BitBadgesAdminAPI is BitBadgesAPI plus the plugin, API-key and sign-out calls.
export const { BitBadgesAdminAPI, Stringify } = sdk;
export type Api = InstanceType<typeof sdk.BitBadgesAdminAPI>;

/** `/api/v0/siwbb/token` → `/api/v0/signin/token`; only the path of the URL changes. */
export function renamePath(url: string): string {
  const u = new URL(url);
  u.pathname = u.pathname
    .split('/')
    .map((seg) =>
      seg
        .replace(/siwbb/gi, (m) => (m === 'SIWBB' ? 'SIGNIN' : m[0] === 'S' ? 'Signin' : 'signin'))
        .replace(/bitbadges/gi, 'platform'),
    )
    .join('/');
  return u.toString();
}

/** Every path the client asked for (after renaming), in order. */
export interface SdkClient {
  api: Api;
  paths: string[];
}

/**
 * A client for the test app (listening), with its API key and, when given, a bearer token.
 * Numbers stay strings (`Stringify`), so answers compare with the service's JSON directly.
 */
export function sdkClient(t: TestApp, token?: string): SdkClient {
  if (!t.url) throw new Error('sdkClient needs an app started with listen: true');
  const api = new BitBadgesAdminAPI({ apiUrl: t.url, apiKey: t.apiKey, convertFunction: Stringify });
  const paths: string[] = [];
  api.axios.interceptors.request.use((config) => {
    const full = renamePath(new URL(config.url!, t.url).toString());
    paths.push(`${(config.method ?? 'get').toUpperCase()} ${new URL(full).pathname}`);
    config.url = full;
    return config;
  });
  // The client logs every refused call with console.error before rejecting with the answer's
  // body; the refusals here are expected, so only the logging is left out.
  (api as unknown as { handleApiError: (e: unknown) => Promise<never> }).handleApiError = async (error: unknown) => {
    const data = (error as { response?: { data?: unknown } })?.response?.data;
    return Promise.reject(data ?? error);
  };
  if (token) api.setAccessToken(token);
  return { api, paths };
}

/** The body of a refused call (the client rejects with it), with the HTTP status. */
export async function refusal(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to be refused');
}
