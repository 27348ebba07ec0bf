// Console sign-in over HTTP, as the console page does it: a challenge for the built-in "console"
// client, a wallet signature, then POST /api/v0/console/session from the portal's origin.
import { privateKeyToAccount } from 'viem/accounts';
import { SCOPE_IDS } from '../../src/signin/scopes.ts';
import type { TestApp } from '../helpers/app.ts';
import { testAccount } from '../helpers/signin.ts';

export interface ConsoleSignIn {
  cookie: string;
  csrfToken: string;
  setCookie: string;
  platformAddress: string;
  privateKey: `0x${string}`;
  origin: string;
}

export const originOf = (t: TestApp) => new URL(t.config.publicUrl).origin;

export async function consoleSignIn(
  t: TestApp,
  opts: { privateKey?: `0x${string}`; clientId?: string; redirectUri?: string } = {},
): Promise<ConsoleSignIn> {
  const who = testAccount(opts.privateKey);
  const challenge = await t.request('POST', '/api/v0/signin/challenge', {
    apiKey: null,
    body: {
      client_id: opts.clientId ?? 'console',
      scope: SCOPE_IDS.join(' '),
      address: who.address,
      ...(opts.redirectUri ? { redirect_uri: opts.redirectUri } : {}),
    },
  });
  if (challenge.statusCode !== 200) throw new Error(`challenge: ${challenge.statusCode} ${challenge.body}`);
  const { requestId, message } = challenge.json() as { requestId: string; message: string };
  const signature = await privateKeyToAccount(who.privateKey).signMessage({ message });
  const res = await t.request('POST', '/api/v0/console/session', {
    apiKey: null,
    headers: { origin: originOf(t), 'sec-fetch-site': 'same-origin' },
    body: { requestId, signature },
  });
  if (res.statusCode !== 200)
    throw Object.assign(new Error(`console session: ${res.statusCode} ${res.body}`), { response: res });
  const setCookie = String(res.headers['set-cookie']);
  const cookie = setCookie.split(';')[0];
  const body = res.json() as { csrfToken: string; platformAddress: string };
  return {
    cookie,
    csrfToken: body.csrfToken,
    setCookie,
    platformAddress: body.platformAddress,
    privateKey: who.privateKey,
    origin: originOf(t),
  };
}

/** A same-origin console call: the cookie, the Origin, and (for non-GET) the CSRF token. */
export function consoleRequest(
  t: TestApp,
  s: ConsoleSignIn,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  return t.request(method, path, {
    apiKey: null,
    body,
    headers: {
      cookie: s.cookie,
      origin: s.origin,
      'sec-fetch-site': 'same-origin',
      ...(method === 'GET' ? {} : { 'x-csrf-token': s.csrfToken }),
      ...headers,
    },
  });
}
