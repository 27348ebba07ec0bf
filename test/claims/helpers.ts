// Shared steps of the claims tests: a manager session, claim creation over HTTP, attempts, and
// waiting for the queue to resolve an attempt.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { TestApp } from '../helpers/app.ts';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import { toPlatformAddress } from '../../src/shared/addresses.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

export const ALL_SCOPES = [
  'completeClaims',
  'readPrivateClaimData',
  'manageClaims',
  'manageDynamicStores',
  'manageDeveloperApps',
];

/** A random native address (no key behind it). */
export const randomAddress = (): string => toPlatformAddress(randomBytes(20));

let counter = 0;
export const newClaimId = (prefix = 'c'): string =>
  `${prefix}${Date.now().toString(36)}${(counter++).toString(36)}${randomBytes(3).toString('hex')}`;

export const numUses = (maxUses: number, instanceId = 'numUses', extra: Record<string, unknown> = {}) => ({
  pluginId: 'numUses',
  instanceId,
  publicParams: { maxUses, ...extra },
  privateParams: {},
});

export async function manager(t: TestApp, scopes = ALL_SCOPES): Promise<SignedIn> {
  return signIn(t, { scopes });
}

export async function createClaim(
  t: TestApp,
  token: string,
  claim: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const res = await t.request('POST', '/api/v0/claims', { token, body: { claims: [claim], ...extra } });
  assert.equal(res.statusCode, 200, res.body);
}

/** Creates a claim of these plugins (plus any other claim fields) over HTTP; returns its new id. */
export async function claimWithPlugins(
  t: TestApp,
  token: string,
  plugins: unknown[],
  extra: Record<string, unknown> = {},
): Promise<string> {
  const claimId = newClaimId();
  await createClaim(t, token, { claimId, plugins, ...extra });
  return claimId;
}

export async function getClaim(t: TestApp, claimId: string, query = '', token?: string) {
  const res = await t.request('GET', `/api/v0/claim/${claimId}${query ? `?${query}` : ''}`, token ? { token } : {});
  assert.equal(res.statusCode, 200, res.body);
  return res.json().claim;
}

export function attempt(
  t: TestApp,
  kind: 'complete' | 'simulate',
  claimId: string,
  address: string,
  body: Record<string, unknown> = {},
  token?: string,
) {
  return t.request('POST', `/api/v0/claims/${kind}/${claimId}/${address}`, {
    body: { _expectedVersion: -1, ...body },
    ...(token ? { token } : {}),
  });
}

export async function status(t: TestApp, id: string, token?: string) {
  const res = await t.request('GET', `/api/v0/claims/status/${id}`, token ? { token } : {});
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { success?: boolean; error: string; code?: string; platformAddress: string };
}

/**
 * Checks an attempt refused on both routes: simulate and complete each answer `statusCode` with
 * exactly `{ errorMessage: error }`.
 */
export const refusedOnBothRoutes =
  (t: TestApp) =>
  async (
    claimId: string,
    address: string,
    body: Record<string, unknown>,
    error: string,
    statusCode = 400,
    token?: string,
  ): Promise<void> => {
    for (const kind of ['simulate', 'complete'] as const) {
      const res = await attempt(t, kind, claimId, address, body, token);
      assert.equal(res.statusCode, statusCode, `${kind}: ${res.body}`);
      assert.deepEqual(res.json(), { errorMessage: error }, kind);
    }
  };

/** Polls the status route until the attempt resolves. */
export async function resolved(t: TestApp, id: string, token?: string, timeoutMs = PATIENCE_MS) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = await status(t, id, token);
    if (s.success !== undefined) return s;
    if (Date.now() > until) throw new Error(`attempt ${id} did not resolve within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Completes and waits: returns the resolved status (asserting the complete itself was accepted). */
export async function completeAndWait(
  t: TestApp,
  claimId: string,
  address: string,
  body: Record<string, unknown> = {},
  token?: string,
) {
  const res = await attempt(t, 'complete', claimId, address, body, token);
  assert.equal(res.statusCode, 200, res.body);
  const { claimAttemptId } = res.json();
  assert.match(claimAttemptId, /^[0-9a-f]{32}$/);
  return { claimAttemptId: claimAttemptId as string, ...(await resolved(t, claimAttemptId, token)) };
}
