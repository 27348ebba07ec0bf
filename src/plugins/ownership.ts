// Ownership requirements (must-own-badges): nested `$and` / `$or` groups whose leaves are assets.
// An asset asks that the address own an amount within `mustOwnAmounts` of token ids `assetIds` of
// a collection during `ownershipTimes` (empty: now). A leaf group passes when every asset piece is in
// range, or, with `options.numMatchesForVerification: N`, when at least N token ids are (an id
// counts once, when it is in range at every requested time). Balances come from a reader, so the
// evaluation itself is pure and exact (bigint).
import { badRequest } from '../shared/errors.ts';
import { balancesForIds, type Balance } from '../shared/balances.ts';
import {
  MAX_UINT64,
  parseUintRange,
  parseUintRanges,
  rangesSize,
  rangesToJson,
  sortAndMerge,
  subtractRanges,
  type UintRange,
} from '../shared/uint-ranges.ts';

export interface Asset {
  collectionId: string;
  assetIds: UintRange[];
  /** Empty: the evaluation time. */
  ownershipTimes: UintRange[];
  mustOwnAmounts: UintRange;
}

export type Requirement =
  | { $and: Requirement[] }
  | { $or: Requirement[] }
  | { assets: Asset[]; options: { numMatchesForVerification?: bigint } };

export const MAX_DEPTH = 5;
export const MAX_ASSETS = 100;
const CHAINS = ['BitBadges'];

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Validates and normalises the public param; every problem is a 400 naming the path. */
export function parseRequirement(v: unknown, path: string, depth = 1, count = { assets: 0 }): Requirement {
  if (!isObj(v)) throw badRequest(`${path} must be an object with $and, $or or assets`);
  if (depth > MAX_DEPTH) throw badRequest(`${path} nests groups deeper than ${MAX_DEPTH} levels`);
  for (const op of ['$and', '$or'] as const) {
    if (!(op in v)) continue;
    const extra = Object.keys(v).find((k) => k !== op);
    if (extra) throw badRequest(`${path} has unknown field "${extra}" beside ${op}`);
    const list = v[op];
    if (!Array.isArray(list) || list.length === 0)
      throw badRequest(`${path}.${op} must be a non-empty array of groups`);
    const children = list.map((c, i) => parseRequirement(c, `${path}.${op}[${i}]`, depth + 1, count));
    return op === '$and' ? { $and: children } : { $or: children };
  }
  const extra = Object.keys(v).find((k) => k !== 'assets' && k !== 'options');
  if (extra) throw badRequest(`${path} has unknown field "${extra}" (a group is $and, $or, or assets with options)`);
  if (!Array.isArray(v.assets) || v.assets.length === 0) throw badRequest(`${path}.assets must be a non-empty array`);
  const assets = v.assets.map((a, i) => parseAsset(a, `${path}.assets[${i}]`));
  count.assets += assets.length;
  if (count.assets > MAX_ASSETS) throw badRequest(`ownershipRequirements may name at most ${MAX_ASSETS} assets`);
  const options: { numMatchesForVerification?: bigint } = {};
  if (v.options !== undefined) {
    if (!isObj(v.options)) throw badRequest(`${path}.options must be an object`);
    const extraOpt = Object.keys(v.options).find((k) => k !== 'numMatchesForVerification');
    if (extraOpt) throw badRequest(`${path}.options has unknown field "${extraOpt}"`);
    const n = v.options.numMatchesForVerification;
    if (n !== undefined) {
      if (
        !(typeof n === 'number' && Number.isSafeInteger(n) && n >= 0) &&
        !(typeof n === 'string' && /^\d{1,20}$/.test(n))
      ) {
        throw badRequest(`${path}.options.numMatchesForVerification must be a non-negative integer`);
      }
      if (BigInt(n) > 0n) options.numMatchesForVerification = BigInt(n);
    }
  }
  return { assets, options };
}

function parseAsset(v: unknown, path: string): Asset {
  if (!isObj(v)) throw badRequest(`${path} must be an object`);
  const extra = Object.keys(v).find(
    (k) => !['chain', 'collectionId', 'assetIds', 'ownershipTimes', 'mustOwnAmounts'].includes(k),
  );
  if (extra) throw badRequest(`${path} has unknown field "${extra}"`);
  const chain = v.chain ?? 'BitBadges';
  if (typeof chain !== 'string' || !CHAINS.includes(chain))
    throw badRequest(
      `${path}.chain ${JSON.stringify(chain)} is not supported: this service reads only its own chain ("BitBadges")`,
    );
  if (typeof v.collectionId !== 'string' || !/^[1-9]\d{0,19}$/.test(v.collectionId))
    throw badRequest(`${path}.collectionId must be a positive integer string (lists are not supported)`);
  const assetIds = parseUintRanges(v.assetIds, `${path}.assetIds`);
  if (assetIds.length === 0) throw badRequest(`${path}.assetIds must name at least one token id range`);
  if (assetIds.some((r) => r.start === 0n)) throw badRequest(`${path}.assetIds start at token id 1`);
  const ownershipTimes =
    v.ownershipTimes === undefined ? [] : parseUintRanges(v.ownershipTimes, `${path}.ownershipTimes`);
  return {
    collectionId: v.collectionId,
    assetIds: sortAndMerge(assetIds),
    ownershipTimes,
    mustOwnAmounts: parseUintRange(v.mustOwnAmounts, `${path}.mustOwnAmounts`),
  };
}

export function requirementToJson(r: Requirement): unknown {
  if ('$and' in r) return { $and: r.$and.map(requirementToJson) };
  if ('$or' in r) return { $or: r.$or.map(requirementToJson) };
  return {
    assets: r.assets.map((a) => ({
      chain: 'BitBadges',
      collectionId: a.collectionId,
      assetIds: rangesToJson(a.assetIds),
      ownershipTimes: rangesToJson(a.ownershipTimes),
      mustOwnAmounts: { start: a.mustOwnAmounts.start.toString(), end: a.mustOwnAmounts.end.toString() },
    })),
    options:
      r.options.numMatchesForVerification !== undefined
        ? { numMatchesForVerification: r.options.numMatchesForVerification.toString() }
        : {},
  };
}

/** Every collection the requirement reads (for prefetching), once per parsed requirement. */
export function collectionsOf(r: Requirement): string[] {
  let ids = collectionLists.get(r);
  if (!ids) collectionLists.set(r, (ids = [...new Set(leafCollections(r))]));
  return ids;
}
const leafCollections = (r: Requirement): string[] =>
  '$and' in r
    ? r.$and.flatMap(leafCollections)
    : '$or' in r
      ? r.$or.flatMap(leafCollections)
      : r.assets.map((a) => a.collectionId);
// a parsed requirement is never changed, so what it reads is computed once
const collectionLists = new WeakMap<Requirement, string[]>();

export type BalanceReader = (collectionId: string) => Promise<Balance[]>;

const fmt = (rs: UintRange[]) => rs.map((r) => (r.start === r.end ? `${r.start}` : `${r.start}-${r.end}`)).join(', ');

/** A group's failure whose reason nobody reads (a member of an `$or`, which has its own). */
const FAILED = 'failed';

/** null when the address meets the requirement; otherwise the reason. */
export function checkRequirement(
  r: Requirement,
  address: string,
  now: number,
  read: BalanceReader,
): Promise<string | null> {
  return check(r, address, { now, range: null }, read, true);
}

/**
 * As checkRequirement, at once, over balances read beforehand (by collection); undefined when the
 * verdict needs a collection `known` does not hold (checkRequirement then reads it).
 */
export function checkKnownBalances(
  r: Requirement,
  address: string,
  now: number,
  known: ReadonlyMap<string, Balance[]>,
): string | null | undefined {
  const why = checkKnown(r, address, { now, range: null }, known, true);
  return why === UNKNOWN ? undefined : why;
}

/** The evaluation time, and the range of it an asset without `ownershipTimes` asks about (made once). */
interface EvaluationTime {
  now: number;
  range: UintRange[] | null;
}

/**
 * `explain`: whether the reason of a failure is read; when not, a failure is FAILED (the members
 * of an `$or` are tried in order until one passes, and a failing `$or` gives its own reason).
 */
async function check(
  r: Requirement,
  address: string,
  at: EvaluationTime,
  read: BalanceReader,
  explain: boolean,
): Promise<string | null> {
  if ('$and' in r) {
    for (const c of r.$and) {
      const why = await check(c, address, at, read, explain);
      if (why) return why;
    }
    return null;
  }
  if ('$or' in r) {
    for (const c of r.$or) if ((await check(c, address, at, read, false)) === null) return null;
    return OR_FAILED;
  }
  const tally = { matched: 0n };
  for (const a of r.assets) {
    const why = assetFailure(r, a, await read(a.collectionId), at, tally, explain);
    if (why !== null) return why;
  }
  return groupFailure(r, address, tally, explain);
}

/** A verdict of checkKnown that needs a collection it was not given. */
const UNKNOWN = 'unknown';

/** `check` over balances read beforehand: the same verdicts, in the same order, or UNKNOWN. */
function checkKnown(
  r: Requirement,
  address: string,
  at: EvaluationTime,
  known: ReadonlyMap<string, Balance[]>,
  explain: boolean,
): string | null {
  if ('$and' in r) {
    for (const c of r.$and) {
      const why = checkKnown(c, address, at, known, explain);
      if (why) return why;
    }
    return null;
  }
  if ('$or' in r) {
    for (const c of r.$or) {
      const why = checkKnown(c, address, at, known, false);
      if (why === null || why === UNKNOWN) return why;
    }
    return OR_FAILED;
  }
  const tally = { matched: 0n };
  for (const a of r.assets) {
    const stored = known.get(a.collectionId);
    if (stored === undefined) return UNKNOWN;
    const why = assetFailure(r, a, stored, at, tally, explain);
    if (why !== null) return why;
  }
  return groupFailure(r, address, tally, explain);
}

const OR_FAILED = 'Address did not meet the asset ownership requirements.';

/**
 * One asset of a group of assets against the holder's balances in its collection: the reason it
 * fails the group, or null (with `numMatchesForVerification`, its ids in range are added to `tally`).
 */
function assetFailure(
  group: { options: { numMatchesForVerification?: bigint } },
  a: Asset,
  stored: Balance[],
  at: EvaluationTime,
  tally: { matched: bigint },
  explain: boolean,
): string | null {
  const times = a.ownershipTimes.length
    ? a.ownershipTimes
    : (at.range ??= [{ start: BigInt(at.now), end: BigInt(at.now) }]);
  const pieces = balancesForIds(a.assetIds, times, stored);
  const { start: min, end: max } = a.mustOwnAmounts;
  if (group.options.numMatchesForVerification === undefined) {
    for (const p of pieces) {
      if (p.amount < min)
        return explain
          ? `Address does not own enough of IDs ${fmt(p.tokenIds)} in collection ${a.collectionId} to meet minimum balance requirement of ${min}`
          : FAILED;
      if (p.amount > max)
        return explain
          ? `Address owns too much of IDs ${fmt(p.tokenIds)} in collection ${a.collectionId} to meet maximum balance requirement of ${max}`
          : FAILED;
    }
  } else {
    const failing = pieces.filter((p) => p.amount < min || p.amount > max).flatMap((p) => p.tokenIds);
    tally.matched += rangesSize(subtractRanges(a.assetIds, failing));
  }
  return null;
}

/** A group of assets whose every asset passed: fails only short of `numMatchesForVerification`. */
function groupFailure(
  group: { options: { numMatchesForVerification?: bigint } },
  address: string,
  tally: { matched: bigint },
  explain: boolean,
): string | null {
  const need = group.options.numMatchesForVerification;
  if (need !== undefined && tally.matched < need)
    return explain ? `Address ${address} did not meet the ownership requirements.` : FAILED;
  return null;
}

export { MAX_UINT64 };
