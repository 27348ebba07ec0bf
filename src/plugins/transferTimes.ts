// transferTimes: passes while the current time (UNIX ms) lies inside one of the allowed windows.
import { badRequest } from '../shared/errors.ts';
import { parseUintRanges, rangesContain, rangesToJson, type UintRangeJson } from '../shared/uint-ranges.ts';
import { asObject, onlyKeys } from './params.ts';
import type { ClaimPlugin } from './types.ts';

export const transferTimes: ClaimPlugin<{ transferTimes: UintRangeJson[] }> = {
  id: 'transferTimes',
  duplicatesAllowed: true,
  stateful: false,
  requiresUserInput: false,
  requiresSession: false,
  validate(pub, priv, { path }) {
    const p = asObject(pub, `${path}.publicParams`);
    onlyKeys(p, ['transferTimes'], `${path}.publicParams`);
    onlyKeys(asObject(priv, `${path}.privateParams`), [], `${path}.privateParams`);
    if (p.transferTimes === undefined) throw badRequest(`${path}.publicParams.transferTimes is required`);
    if (Array.isArray(p.transferTimes) && p.transferTimes.length > 1000)
      throw badRequest(`${path}.publicParams.transferTimes must hold at most 1000 ranges`);
    return {
      publicParams: {
        transferTimes: rangesToJson(parseUintRanges(p.transferTimes, `${path}.publicParams.transferTimes`)),
      },
      privateParams: {},
    };
  },
  async evaluate({ publicParams, now }) {
    const ranges = publicParams.transferTimes.map((r) => ({ start: BigInt(r.start), end: BigInt(r.end) }));
    if (!rangesContain(ranges, BigInt(now)))
      return { success: false, error: 'We are currently outside the approved time window.' };
    return { success: true };
  },
};
