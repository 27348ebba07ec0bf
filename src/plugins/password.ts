// password: a shared secret, compared in constant time. Stored encrypted with the private params.
import { safeEqual } from '../shared/crypto.ts';
import { badRequest } from '../shared/errors.ts';
import { asObject, onlyKeys } from './params.ts';
import type { ClaimPlugin } from './types.ts';

export const password: ClaimPlugin<Record<string, never>, { password: string }> = {
  id: 'password',
  duplicatesAllowed: true,
  stateful: false,
  requiresUserInput: true,
  inputFields: ['password'],
  requiresSession: false,
  validate(pub, priv, { path }) {
    onlyKeys(asObject(pub, `${path}.publicParams`), [], `${path}.publicParams`);
    const p = asObject(priv, `${path}.privateParams`);
    onlyKeys(p, ['password'], `${path}.privateParams`);
    if (typeof p.password !== 'string' || p.password.length === 0 || p.password.length > 1024) {
      throw badRequest(`${path}.privateParams.password must be a non-empty string of at most 1024 characters`);
    }
    return { publicParams: {}, privateParams: { password: p.password } };
  },
  async evaluate({ privateParams, input }) {
    const given = (input as { password?: unknown } | undefined)?.password;
    if (typeof given !== 'string' || !safeEqual(given, privateParams.password))
      return { success: false, error: 'Incorrect password.' };
    return { success: true };
  },
};
