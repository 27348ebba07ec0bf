// discord, github, google, twitch, twitter: the claimer's address must have linked an account at
// the provider (the connections flow), optionally one on a list, and one provider account counts
// its claims across every wallet it is linked to (`maxUsesPerUser`), so linking one account to many
// wallets gains nothing. One definition, five registry lines.
//
// The list (public `users`, or private `usernames` when `hasPrivateList`) holds usernames, matched
// case-insensitively, or account ids; an empty list admits any linked account. State, in the
// reference's shape: `ids` (account id → claims) and `usernames` (username → account id), with
// dots in keys written `[dot]`.
import { findConnection } from '../connections/storage.ts';
import type { ProviderId } from '../connections/providers.ts';
import { badRequest } from '../shared/errors.ts';
import { definePlugin } from './define.ts';
import { asObject, onlyKeys } from './params.ts';
import type { StoredStateEntry } from './types.ts';

export const MAX_SOCIAL_LIST = 100_000;
const RESERVED = '[dot]';

interface Pub {
  users?: string[];
  maxUsesPerUser?: number;
  hasPrivateList?: boolean;
}
interface Priv {
  usernames?: string[];
}

const escapeKey = (k: string) => k.replaceAll('.', RESERVED);
const unescapeKey = (k: string) => k.replaceAll(RESERVED, '.');
const idKey = (id: string) => `i:${id}`;
const nameKey = (username: string) => `u:${username.toLowerCase()}`;

function parseNames(v: unknown, path: string): string[] {
  if (!Array.isArray(v)) throw badRequest(`${path} must be an array of usernames`);
  if (v.length > MAX_SOCIAL_LIST) throw badRequest(`${path} must hold at most ${MAX_SOCIAL_LIST} usernames`);
  return v.map((n, i) => {
    if (typeof n !== 'string' || n.trim() === '' || n.length > 320)
      throw badRequest(`${path}[${i}] must be a non-empty string of at most 320 characters`);
    if (n.includes(RESERVED)) throw badRequest(`${path}[${i}]: Invalid reserved sequence in ID (${RESERVED})`);
    return n.trim();
  });
}

// lowercased list → set, built once per (cached) list
const sets = new WeakMap<string[], Set<string>>();
function listed(list: string[], id: string, username: string): boolean {
  let s = sets.get(list);
  if (!s) sets.set(list, (s = new Set(list.map((n) => n.toLowerCase()))));
  return s.has(username.toLowerCase()) || s.has(id.toLowerCase());
}

export function socialPlugin(provider: ProviderId) {
  return definePlugin<Pub, Priv>({
    id: provider,
    stateful: true,
    params: {
      public: [
        { key: 'users', type: 'string', arrayField: true, parse: parseNames },
        { key: 'maxUsesPerUser', type: 'number', min: 0, max: 2_147_483_647 },
        { key: 'hasPrivateList', type: 'boolean' },
      ],
      private: [{ key: 'usernames', type: 'string', arrayField: true, parse: parseNames }],
    },
    refine(checked, { path }) {
      const { hasPrivateList, users } = checked.publicParams as Pub;
      if (hasPrivateList && users?.length)
        throw badRequest(
          `${path}.publicParams.users must be empty when hasPrivateList is true (the list is privateParams.usernames)`,
        );
      if (!hasPrivateList && checked.privateParams.usernames !== undefined)
        throw badRequest(`${path}.privateParams.usernames needs publicParams.hasPrivateList: true`);
      return checked;
    },
    async evaluate(ctx) {
      const identity = await findConnection(ctx.db, ctx.platformAddress, provider);
      if (!identity) return { success: false, error: 'Invalid details. Could not get user.' };
      if (identity.id.includes(RESERVED) || identity.username.includes(RESERVED))
        return { success: false, error: `Invalid reserved sequence in ID (${RESERVED})` };
      const list = ctx.publicParams.hasPrivateList ? ctx.privateParams.usernames : ctx.publicParams.users;
      if (list?.length && !listed(list, identity.id, identity.username))
        return { success: false, error: 'User not in list of whitelisted users.' };
      const used = Number((await ctx.state.get(idKey(identity.id))) ?? 0);
      const max = ctx.publicParams.maxUsesPerUser;
      if (max !== undefined && max > 0 && used >= max)
        return { success: false, error: 'User already exceeded max uses' };
      return {
        success: true,
        stateChanges: [
          { key: idKey(identity.id), value: used + 1 },
          { key: nameKey(identity.username), value: identity.id },
        ],
      };
    },
    // who claimed is not public: the counts are private state (privateStatesToFetch)
    publicStateKeys: [],
    publicState() {
      return {};
    },
    privateState(entries: StoredStateEntry[]) {
      const ids: Record<string, number> = {};
      const usernames: Record<string, string> = {};
      for (const e of entries) {
        if (e.key.startsWith('i:')) ids[escapeKey(e.key.slice(2))] = Number(e.value);
        else if (e.key.startsWith('u:')) usernames[escapeKey(e.key.slice(2))] = String(e.value);
      }
      return { ids, usernames };
    },
    stateFromDocument(newState, path) {
      const s = asObject(newState, path);
      onlyKeys(s, ['ids', 'usernames'], path);
      const out: StoredStateEntry[] = [];
      for (const [id, n] of Object.entries(asObject(s.ids, `${path}.ids`))) {
        if (typeof n !== 'number' || !Number.isInteger(n) || n < 0)
          throw badRequest(`${path}.ids.${id} must be a non-negative integer`);
        out.push({ key: idKey(unescapeKey(id)), value: n });
      }
      for (const [name, id] of Object.entries(asObject(s.usernames, `${path}.usernames`))) {
        if (typeof id !== 'string') throw badRequest(`${path}.usernames.${name} must be an account id string`);
        out.push({ key: nameKey(unescapeKey(name)), value: id });
      }
      return out;
    },
  });
}
