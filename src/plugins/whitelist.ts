// whitelist: gates on an address list (public or private params) or on a dynamic store. A list
// with `whitelist: false` is a denylist. Both address forms match: lists are stored in the native
// form. Private state counts claims per address (`maxUsesPerAddress`). As the claim-number
// assigner, the claim number is the address's index in the (allow) list.
import { attachStore, readStoreMembership } from '../stores/claims-integration.ts';
import { tryParseAddress } from '../shared/addresses.ts';
import { badRequest } from '../shared/errors.ts';
import { definePlugin } from './define.ts';
import { asObject, compact, onlyKeys, optBool, optString, type ParamField } from './params.ts';
import type { JsonObject, StoredStateEntry, ValidatedParams } from './types.ts';

export const MAX_LIST_ADDRESSES = 100_000;

export interface AddressList {
  addresses: string[];
  whitelist: boolean;
  listId?: string;
  label?: string;
  description?: string;
  uri?: string;
  customData?: string;
}

interface Pub {
  listId?: string;
  list?: AddressList;
  maxUsesPerAddress?: number;
  hasPrivateList?: boolean;
}
interface Priv {
  useDynamicStore?: boolean;
  dynamicDataId?: string;
  dataSecret?: string;
  listId?: string;
  list?: AddressList;
}

function parseList(v: unknown, path: string): AddressList {
  const l = asObject(v, path);
  onlyKeys(l, ['addresses', 'whitelist', 'listId', 'label', 'description', 'uri', 'customData'], path);
  if (!Array.isArray(l.addresses)) throw badRequest(`${path}.addresses must be an array of addresses`);
  if (l.addresses.length > MAX_LIST_ADDRESSES)
    throw badRequest(`${path}.addresses must hold at most ${MAX_LIST_ADDRESSES} addresses`);
  const seen = new Set<string>();
  const addresses = l.addresses.map((a, i) => {
    const parsed = tryParseAddress(a);
    if (!parsed) throw badRequest(`${path}.addresses[${i}] is not a valid address: ${JSON.stringify(a)}`);
    if (seen.has(parsed.platformAddress))
      throw badRequest(`${path}.addresses[${i}] repeats ${parsed.platformAddress} (both address forms name one user)`);
    seen.add(parsed.platformAddress);
    return parsed.platformAddress;
  });
  const whitelist = optBool(l, 'whitelist', path) ?? true;
  return compact({
    addresses,
    whitelist,
    listId: optString(l, 'listId', path),
    label: optString(l, 'label', path),
    description: optString(l, 'description', path, 10_000),
    uri: optString(l, 'uri', path, 4096),
    customData: optString(l, 'customData', path, 10_000),
  }) as unknown as AddressList;
}

/** The list the plugin gates on (public first, then private), or null for a dynamic store. */
export function whitelistList(params: { publicParams: JsonObject; privateParams: JsonObject }): AddressList | null {
  return ((params.publicParams as Pub).list ?? (params.privateParams as Priv).list ?? null) as AddressList | null;
}

// address -> index, built once per (cached) list
const indexes = new WeakMap<string[], Map<string, number>>();
function indexOf(list: string[], address: string): number {
  let m = indexes.get(list);
  if (!m) {
    m = new Map(list.map((a, i) => [a, i]));
    indexes.set(list, m);
  }
  return m.get(address) ?? -1;
}

const countKey = (address: string) => `a:${address}`;

/** An address list param (public or private); the form asks for its addresses only, first. */
const listField = (label: string, helper: string): ParamField => ({
  key: 'list',
  label,
  type: 'addressList',
  helper,
  form: { key: 'list.addresses', type: 'string', arrayField: true, first: true },
  parse: parseList,
});

export const whitelist = definePlugin<Pub, Priv>({
  id: 'whitelist',
  stateful: true,
  canAssignClaimNumbers(params: ValidatedParams) {
    const list = whitelistList(params);
    if (!list) return 'a whitelist backed by a dynamic store cannot assign claim numbers (it has no list order)';
    if (!list.whitelist) return 'a denylist (whitelist: false) cannot assign claim numbers';
    return null;
  },
  params: {
    public: [
      { key: 'listId', type: 'string' },
      listField(
        'Public list of addresses',
        'One address per line (0x… or bb1…). Leave empty to use a private list or a dynamic store.',
      ),
      {
        key: 'maxUsesPerAddress',
        label: 'Maximum claims per address',
        type: 'number',
        helper: '0 or empty: no cap.',
        min: 0,
        max: 2_147_483_647,
      },
      { key: 'hasPrivateList', label: 'The list is private', type: 'boolean', hideFromDetailsDisplay: true },
    ],
    private: [
      { key: 'useDynamicStore', label: 'Use a dynamic store', type: 'boolean' },
      {
        key: 'dynamicDataId',
        label: 'Dynamic store id',
        type: 'string',
        helper: 'From the store page ("copy whitelist snippet").',
        maxLength: 256,
      },
      {
        key: 'dataSecret',
        label: 'Dynamic store secret',
        type: 'string',
        helper: 'Needed unless the store is public for claims.',
        maxLength: 1024,
      },
      { key: 'listId', type: 'string' },
      listField('Private list of addresses', 'One address per line; hidden from claimers.'),
    ],
  },
  form: {
    name: 'Whitelist',
    description: 'Only listed addresses may claim: a public list, a private list or a dynamic store.',
    details: 'Only listed addresses may claim.',
  },
  async refine({ publicParams, privateParams }, { path, creator, caller, previous, db, keyring }) {
    const sp = `${path}.privateParams`;
    const useDynamicStore = privateParams.useDynamicStore as boolean | undefined;
    const sources = [
      publicParams.list !== undefined,
      privateParams.list !== undefined,
      useDynamicStore === true,
    ].filter(Boolean).length;
    if (sources !== 1) {
      throw badRequest(
        `${path} must gate on exactly one of publicParams.list, privateParams.list or a dynamic store (privateParams.useDynamicStore with dynamicDataId)`,
      );
    }
    if (useDynamicStore) {
      if (!privateParams.dynamicDataId)
        throw badRequest(`${sp}.dynamicDataId is required when useDynamicStore is true`);
      const before = previous?.privateParams as Priv | undefined;
      // the same store sent back without its secret (the console never shows it) keeps the stored one
      if (
        before?.dataSecret !== undefined &&
        before.dynamicDataId === privateParams.dynamicDataId &&
        privateParams.dataSecret === undefined
      ) {
        privateParams.dataSecret = before.dataSecret;
      } else if (
        !before ||
        before.dynamicDataId !== privateParams.dynamicDataId ||
        before.dataSecret !== privateParams.dataSecret
      ) {
        // a store reference without its secret, from the store's owner: the service fills it in
        const secret = await attachStore(
          db,
          keyring,
          {
            dynamicDataId: privateParams.dynamicDataId as string,
            dataSecret: privateParams.dataSecret as string | undefined,
          },
          creator,
          caller,
        );
        if (secret !== undefined) privateParams.dataSecret = secret;
      }
    }
    return { publicParams, privateParams };
  },
  async evaluate(ctx) {
    const { publicParams, privateParams, platformAddress, state } = ctx;
    let claimNumber: number | undefined;
    const list = publicParams.list ?? privateParams.list;
    if (list) {
      const index = indexOf(list.addresses, platformAddress);
      if (list.whitelist && index < 0) return { success: false, error: 'User not in whitelist' };
      if (!list.whitelist && index >= 0) return { success: false, error: 'User in denylist' };
      if (list.whitelist) claimNumber = index;
    } else {
      const r = await readStoreMembership(
        ctx.db,
        ctx.keyring,
        {
          dynamicDataId: privateParams.dynamicDataId ?? '',
          ...(privateParams.dataSecret !== undefined ? { dataSecret: privateParams.dataSecret } : {}),
        },
        platformAddress,
      );
      if ('error' in r) return { success: false, error: r.error };
      if (!r.inStore) return { success: false, error: 'User not in whitelist' };
    }
    const used = Number((await state.get(countKey(platformAddress))) ?? 0);
    const max = publicParams.maxUsesPerAddress;
    if (max !== undefined && max > 0 && used >= max) return { success: false, error: 'User already exceeded max uses' };
    return {
      success: true,
      stateChanges: [{ key: countKey(platformAddress), value: used + 1 }],
      ...(claimNumber !== undefined ? { claimNumber } : {}),
    };
  },
  publicStateKeys: [],
  publicState() {
    return {};
  },
  privateState(entries: StoredStateEntry[]) {
    const addresses: Record<string, number> = {};
    for (const e of entries) if (e.key.startsWith('a:')) addresses[e.key.slice(2)] = Number(e.value);
    return { addresses };
  },
  stateFromDocument(newState, path) {
    const s = asObject(newState, path);
    onlyKeys(s, ['addresses'], path);
    const a = asObject(s.addresses, `${path}.addresses`);
    return Object.entries(a).map(([addr, n]) => {
      const parsed = tryParseAddress(addr);
      if (!parsed) throw badRequest(`${path}.addresses has an invalid address key: ${JSON.stringify(addr)}`);
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0)
        throw badRequest(`${path}.addresses.${addr} must be a non-negative integer`);
      return { key: countKey(parsed.platformAddress), value: n };
    });
  },
});
