// codes: one-time codes. Either a seed (codes are derived: sha256hex("<seed>-<i>") + "-<i>") or
// an explicit list. Given only numCodes, the server generates the seed. Used code indices are the
// state; when codes assigns claim numbers, the claim number is the code index.
import { randomHex, safeEqual, sha256Hex } from '../shared/crypto.ts';
import { badRequest } from '../shared/errors.ts';
import { parseUintRanges, rangesToJson, sortAndMerge } from '../shared/uint-ranges.ts';
import { definePlugin } from './define.ts';
import { asObject, onlyKeys } from './params.ts';
import type { StoredStateEntry } from './types.ts';

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

/** An explicit list of codes: distinct non-empty strings. */
function parseCodeList(v: unknown, path: string): string[] {
  if (!Array.isArray(v)) throw badRequest(`${path} must be an array of strings`);
  if (v.length > MAX_CODES_LIST) throw badRequest(`${path} must hold at most ${MAX_CODES_LIST} codes`);
  v.forEach((c, i) => {
    if (typeof c !== 'string' || c.length === 0 || c.length > 512)
      throw badRequest(`${path}[${i}] must be a non-empty string of at most 512 characters`);
  });
  if (new Set(v).size !== v.length) throw badRequest(`${path} must not repeat a code`);
  return v as string[];
}

export const codes = definePlugin<Pub, Priv>({
  id: 'codes',
  stateful: true,
  canAssignClaimNumbers: () => null,
  params: {
    public: [
      {
        key: 'numCodes',
        label: 'Number of codes',
        type: 'number',
        required: true,
        helper: 'The server generates this many codes from a secret seed.',
        min: 1,
        max: MAX_NUM_CODES,
      },
      { key: 'hideCurrentState', label: 'Hide which codes were used', type: 'boolean' },
    ],
    // not in the console's form: the server generates the seed (codes are downloaded as CSV)
    private: [
      { key: 'codes', type: 'string', arrayField: true, parse: parseCodeList },
      { key: 'seedCode', type: 'string', nonEmpty: true, maxLength: 256 },
    ],
  },
  refine({ publicParams, privateParams }, { path, previous }) {
    const numCodes = publicParams.numCodes as number;
    let { seedCode } = privateParams as Priv;
    const list = (privateParams as Priv).codes;
    if (seedCode === undefined && list !== undefined && list.length !== numCodes) {
      throw badRequest(
        `${path}.privateParams.codes has ${list.length} codes but publicParams.numCodes is ${numCodes}; they must be equal`,
      );
    }
    if (seedCode === undefined && list === undefined) {
      // Only numCodes given: keep the seed this instance already has, else generate one.
      const prev = previous?.privateParams.seedCode;
      seedCode = typeof prev === 'string' ? prev : randomHex(32);
    }
    return {
      publicParams,
      // the seed wins when both are given (docs/plugins.md), so a list beside it is not kept
      privateParams: seedCode !== undefined ? { seedCode } : { codes: list },
    };
  },
  input: [{ key: 'code', label: 'Claim code', type: 'string', required: true }],
  form: {
    name: 'Codes',
    description: 'One-time codes: each code can be used once. The server generates them; download them as CSV.',
    details: 'Requires one of {{numCodes}} one-time codes.',
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
});
