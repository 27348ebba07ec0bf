// The OAuth 2.0 client of the connections flow, on oauth4webapi: the authorization URL, the code
// exchange, and the read of the provider's user endpoint. Provider quirks are absorbed in one
// place, the token response normaliser:
//  - GitHub answers a failed exchange with 200 and an `error` body: made a 400, so it is an error;
//  - Twitch's `scope` is a JSON array where RFC 6749 has a string: joined with spaces;
//  - `id_token` is dropped: the account is read from the user endpoint for every provider, so no
//    provider-specific ID-token validation is needed.
// Both server-side calls (the code exchange and the account read) go through the egress module, as
// every outbound call does: https only, public addresses only (EGRESS_ALLOW_PRIVATE_CIDRS opens a
// provider on a private network), one deadline, a size cap, no redirects followed.
import * as oauth from 'oauth4webapi';
import { type Egress, EgressError } from '../egress/index.ts';
import type { ConfiguredProvider } from './config.ts';
import type { SocialIdentity } from './providers.ts';

/** A provider or its user endpoint failed; the message is safe to show to the user. */
export class ConnectionError extends Error {}

export async function authorizationUrl(
  p: ConfiguredProvider,
  redirectUri: string,
  state: string,
  codeVerifier: string | null,
): Promise<string> {
  const u = new URL(p.authorizationUrl);
  u.searchParams.set('response_type', 'code');
  u.searchParams.set('client_id', p.clientId);
  u.searchParams.set('redirect_uri', redirectUri);
  if (p.scope) u.searchParams.set('scope', p.scope);
  u.searchParams.set('state', state);
  if (codeVerifier) {
    u.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
    u.searchParams.set('code_challenge_method', 'S256');
  }
  return u.toString();
}

/** The largest provider answer read (a token response or an account is a few hundred bytes). */
const MAX_PROVIDER_ANSWER_BYTES = 64 * 1024;

/** A call to the provider through the egress module, as a fetch Response (what oauth4webapi reads). */
async function egressFetch(
  egress: Pick<Egress, 'request'>,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string },
  timeoutMs: number,
): Promise<Response> {
  const res = await egress.request({
    url,
    method: init.method ?? 'GET',
    headers: init.headers,
    body: init.body,
    timeoutMs,
    maxResponseBytes: MAX_PROVIDER_ANSWER_BYTES,
  });
  // 204/304 carry no body in a Response
  const body = res.status === 204 || res.status === 304 ? null : new Uint8Array(res.body);
  return new Response(body, { status: res.status });
}

/** The token response, normalised (see the header) for oauth4webapi. */
async function normalisedTokenFetch(
  egress: Pick<Egress, 'request'>,
  url: string,
  init: { method?: string; headers?: Headers | Record<string, string>; body?: unknown },
  timeoutMs: number,
): Promise<Response> {
  const headers: Record<string, string> = {};
  new Headers(init.headers as HeadersInit).forEach((v, k) => {
    headers[k] = v;
  });
  const res = await egressFetch(
    egress,
    url,
    { method: init.method, headers, body: String(init.body ?? '') },
    timeoutMs,
  );
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    return new Response('{}', { status: res.ok ? 502 : res.status, headers: { 'content-type': 'application/json' } });
  }
  let status = res.status;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    if (status === 200 && typeof b.error === 'string') status = 400;
    if (Array.isArray(b.scope)) b.scope = b.scope.join(' ');
    delete b.id_token;
  }
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

/** Exchanges the callback's code for an access token (used once, to read the account, then dropped). */
export async function exchangeCode(
  egress: Pick<Egress, 'request'>,
  p: ConfiguredProvider,
  redirectUri: string,
  callback: URLSearchParams,
  state: string,
  codeVerifier: string | null,
  timeoutMs: number,
): Promise<string> {
  const as: oauth.AuthorizationServer = {
    issuer: new URL(p.authorizationUrl).origin,
    authorization_endpoint: p.authorizationUrl,
    token_endpoint: p.tokenUrl,
  };
  const client: oauth.Client = { client_id: p.clientId };
  const auth =
    p.clientAuth === 'basic' ? oauth.ClientSecretBasic(p.clientSecret) : oauth.ClientSecretPost(p.clientSecret);
  try {
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const res = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth,
      params,
      redirectUri,
      codeVerifier ?? oauth.nopkce,
      {
        [oauth.customFetch]: (url, init) => normalisedTokenFetch(egress, url, init, timeoutMs),
      },
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, res);
    return tokens.access_token;
  } catch (err) {
    if (err instanceof oauth.AuthorizationResponseError) {
      throw new ConnectionError(
        err.error === 'access_denied'
          ? `You declined the ${p.id} authorization.`
          : `${p.id} refused the authorization: ${err.error}`,
      );
    }
    if (err instanceof oauth.ResponseBodyError)
      throw new ConnectionError(`${p.id} refused the code exchange: ${err.error}`);
    if (err instanceof EgressError && err.kind === 'timeout')
      throw new ConnectionError(`${p.id} did not answer the code exchange within ${timeoutMs} ms.`);
    if (err instanceof EgressError) throw new ConnectionError(`The code exchange with ${p.id} failed: ${err.reason}`);
    throw new ConnectionError(`The code exchange with ${p.id} failed: ${(err as Error).message}`);
  }
}

/** Reads the provider account (stable id and handle) with the access token. */
export async function fetchIdentity(
  egress: Pick<Egress, 'request'>,
  p: ConfiguredProvider,
  accessToken: string,
  timeoutMs: number,
): Promise<SocialIdentity> {
  let res: Response;
  try {
    const headers = {
      authorization: `Bearer ${accessToken}`,
      accept: 'application/json',
      ...p.userInfoHeaders?.(p.clientId),
    };
    res = await egressFetch(egress, p.userInfoUrl, { headers }, timeoutMs);
  } catch (err) {
    if (!(err instanceof EgressError)) throw err;
    throw new ConnectionError(
      err.kind === 'timeout'
        ? `${p.id} did not answer the account read within ${timeoutMs} ms.`
        : `${p.id} could not be reached to read the account (${err.reason}).`,
    );
  }
  if (!res.ok) throw new ConnectionError(`${p.id} answered ${res.status} when reading the account.`);
  const identity = p.identity(await res.json().catch(() => null));
  if (!identity) throw new ConnectionError(`${p.id} did not name the account (no id or username in its answer).`);
  return identity;
}
