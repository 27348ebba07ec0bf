// Shared pieces of the dynamic store tests: sessions through the real sign-in flow, store
// creation, and small HTTP wrappers.
import { randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.ts';
import { signIn } from '../helpers/signin.ts';
import { toChecksumAddress, toPlatformAddress } from '../../src/shared/addresses.ts';

export const ALL_SCOPES = [
  'completeClaims',
  'readPrivateClaimData',
  'manageClaims',
  'manageDynamicStores',
  'manageDeveloperApps',
];

export interface User {
  token: string;
  platformAddress: string;
  /** The 0x form of the same account. */
  evmAddress: string;
  privateKey: `0x${string}`;
}

/** A signed-in user (the real sign-in flow) holding `scopes` (default: all); `sameAs` signs the same account in again. */
export async function signInUser(t: TestApp, scopes: string[] = ALL_SCOPES, sameAs?: User): Promise<User> {
  const s = await signIn(t, { scopes, ...(sameAs ? { privateKey: sameAs.privateKey } : {}) });
  return { token: s.accessToken, platformAddress: s.platformAddress, evmAddress: s.address, privateKey: s.privateKey };
}

export function randomAddress(): { platformAddress: string; evmAddress: string } {
  const bytes = randomBytes(20);
  return { platformAddress: toPlatformAddress(bytes), evmAddress: toChecksumAddress(bytes) };
}

export interface CreatedStore {
  dynamicDataId: string;
  dataSecret: string;
}

export async function createStore(t: TestApp, owner: User, body: Record<string, unknown> = {}): Promise<CreatedStore> {
  const res = await t.request('POST', '/api/v0/dynamicStores', {
    token: owner.token,
    body: { handlerId: 'addresses', label: 'test store', ...body },
  });
  assert.equal(res.statusCode, 200, res.body);
  const { doc } = res.json();
  return { dynamicDataId: doc.dynamicDataId, dataSecret: doc.dataSecret };
}

/** Every member, walking /values to the end. */
export async function allMembers(
  t: TestApp,
  id: string,
  auth: { token?: string; dataSecret?: string },
): Promise<string[]> {
  const out: string[] = [];
  let bookmark = '';
  for (let i = 0; i < 10_000; i++) {
    const qs = new URLSearchParams({ bookmark, ...(auth.dataSecret ? { dataSecret: auth.dataSecret } : {}) });
    const res = await t.request(
      'GET',
      `/api/v0/dynamicStore/${id}/values?${qs}`,
      auth.token ? { token: auth.token } : {},
    );
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json();
    out.push(
      ...page.lookupValues.map((v: { key: string; inStore: boolean }) => (assert.equal(v.inStore, true), v.key)),
    );
    if (!page.hasMore) return out;
    bookmark = page.bookmark;
  }
  throw new Error('values did not finish');
}

export async function isMember(
  t: TestApp,
  id: string,
  key: string,
  auth: { token?: string; dataSecret?: string },
): Promise<boolean> {
  const qs = new URLSearchParams({ key, ...(auth.dataSecret ? { dataSecret: auth.dataSecret } : {}) });
  const res = await t.request('GET', `/api/v0/dynamicStore/${id}/value?${qs}`, auth.token ? { token: auth.token } : {});
  assert.equal(res.statusCode, 200, res.body);
  return res.json().inStore;
}
