// codes: one-time codes. Either a seed (codes are derived: sha256hex("<seed>-<i>") + "-<i>") or
// an explicit list. Given only numCodes, the server generates the seed. Used code indices are the
// state; when codes assigns claim numbers, the claim number is the code index.
import { randomHex, safeEqual, sha256Hex } from '../shared/crypto.ts';
import { badRequest } from '../shared/errors.ts';
import { parseUintRanges, rangesToJson, sortAndMerge } from '../shared/uint-ranges.ts';
import { asObject, compact, int, onlyKeys, optBool } from './params.ts';
import type { ClaimPlugin, StoredStateEntry } from './types.ts';

export const MAX_NUM_CODES = 10_000_000;
export const MAX_CODES_LIST = 100_000;

/** Claim code format (docs/onchain-claims.md): lowercase hex SHA-256 of `<seed>-<i>`, then `-<i>`. */
export const codeFor = (seedCode: string, index: number): string => `${sha256Hex(`${seedCode}-${index}`)}-${index}`;

interface Pub {
  numCodes: number;
  hideCurrentState?: boolean;
}
interface Priv {
  codes?: string[];
  seedCode?: string;
}

const INVALID_INPUT = 'Invalid code in body provided.';
const NOT_FOUND = 'Invalid code. Not found in list of codes.';
const USED = 'Code already used.';

// code -> index, built once per (cached) params object
const indexes = new WeakMap<string[], Map<string, number>>();
function indexOf(codes: string[], code: string): number {
  let m = indexes.get(codes);
  if (!m) {
    m = new Map(codes.map((c, i) => [c, i]));
    indexes.set(codes, m);
  }
  return m.get(code) ?? -1;
}

const usedKey = (i: number) => `c${i}`;
const usedIndices = (entries: StoredStateEntry[]) =>
  entries.filter((e) => /^c\d+$/.test(e.key)).map((e) => Number(e.key.slice(1)));

export const codes: ClaimPlugin<Pub, Priv> = {
  id: 'codes',
  duplicatesAllowed: true,
  stateful: true,
  requiresUserInput: true,
  inputFields: ['code'],
  requiresSession: false,
  canAssignClaimNumbers: () => null,
  validate(pub, priv, { path, previous }) {
    const p = asObject(pub, `${path}.publicParams`);
    onlyKeys(p, ['numCodes', 'hideCurrentState'], `${path}.publicParams`);
    const numCodes = int(p, 'numCodes', `${path}.publicParams`, 1, MAX_NUM_CODES, true);
    const s = asObject(priv, `${path}.privateParams`);
    onlyKeys(s, ['codes', 'seedCode'], `${path}.privateParams`);
    let seedCode: string | undefined;
    let list: string[] | undefined;
    if (s.seedCode !== undefined) {
      if (typeof s.seedCode !== 'string' || s.seedCode.length === 0 || s.seedCode.length > 256) {
        throw badRequest(`${path}.privateParams.seedCode must be a non-empty string of at most 256 characters`);
      }
      seedCode = s.seedCode;
    }
    if (s.codes !== undefined) {
      if (!Array.isArray(s.codes)) throw badRequest(`${path}.privateParams.codes must be an array of strings`);
      if (s.codes.length > MAX_CODES_LIST)
        throw badRequest(`${path}.privateParams.codes must hold at most ${MAX_CODES_LIST} codes`);
      s.codes.forEach((c, i) => {
        if (typeof c !== 'string' || c.length === 0 || c.length > 512)
          throw badRequest(`${path}.privateParams.codes[${i}] must be a non-empty string of at most 512 characters`);
      });
      if (new Set(s.codes).size !== s.codes.length)
        throw badRequest(`${path}.privateParams.codes must not repeat a code`);
      list = s.codes as string[];
      if (seedCode === undefined && list.length !== numCodes) {
        throw badRequest(
          `${path}.privateParams.codes has ${list.length} codes but publicParams.numCodes is ${numCodes}; they must be equal`,
        );
      }
    }
    if (seedCode === undefined && list === undefined) {
      // Only numCodes given: keep the seed this instance already has, else generate one.
      const prev = previous?.privateParams.seedCode;
      seedCode = typeof prev === 'string' ? prev : randomHex(32);
    }
    return {
      publicParams: compact({ numCodes, hideCurrentState: optBool(p, 'hideCurrentState', `${path}.publicParams`) }),
      // the seed wins when both are given (docs/plugins.md), so a list beside it is not kept
      privateParams: seedCode !== undefined ? { seedCode } : { codes: list },
    };
  },
  async evaluate({ publicParams, privateParams, input, state }) {
    const code = (input as { code?: unknown } | undefined)?.code;
    if (typeof code !== 'string' || code.length === 0 || code.length > 512)
      return { success: false, error: INVALID_INPUT };
    let index: number;
    if (privateParams.seedCode !== undefined) {
      const m = /-(\d{1,9})$/.exec(code);
      index = m ? Number(m[1]) : -1;
      if (index < 0 || index >= publicParams.numCodes || !safeEqual(code, codeFor(privateParams.seedCode, index)))
        return { success: false, error: NOT_FOUND };
    } else {
      index = indexOf(privateParams.codes ?? [], code);
      if (index < 0) return { success: false, error: NOT_FOUND };
    }
    if (await state.get(usedKey(index))) return { success: false, error: USED, rightAnswer: true };
    return { success: true, stateChanges: [{ key: usedKey(index), value: 1 }], claimNumber: index };
  },
  publicState(entries, params, { privileged }) {
    if (params.publicParams.hideCurrentState && !privileged) return {};
    return {
      usedCodeRanges: rangesToJson(
        sortAndMerge(usedIndices(entries).map((i) => ({ start: BigInt(i), end: BigInt(i) }))),
      ),
    };
  },
  stateFromDocument(newState, path) {
    const s = asObject(newState, path);
    onlyKeys(s, ['usedCodeRanges'], path);
    const ranges = sortAndMerge(parseUintRanges(s.usedCodeRanges ?? [], `${path}.usedCodeRanges`));
    const out: StoredStateEntry[] = [];
    for (const r of ranges) {
      if (r.end >= BigInt(MAX_NUM_CODES))
        throw badRequest(`${path}.usedCodeRanges goes beyond the largest code index (${MAX_NUM_CODES - 1})`);
      for (let i = Number(r.start); i <= Number(r.end); i++) out.push({ key: usedKey(i), value: 1 });
      if (out.length > 1_000_000) throw badRequest(`${path}.usedCodeRanges covers more than 1000000 codes`);
    }
    return out;
  },
};
