// transferTimes: passes while the current time (UNIX ms) lies inside one of the allowed windows.
import { badRequest } from '../shared/errors.ts';
import { parseUintRanges, rangesContain, rangesToJson, type UintRangeJson } from '../shared/uint-ranges.ts';
import { definePlugin } from './define.ts';

export const transferTimes = definePlugin<{ transferTimes: UintRangeJson[] }>({
  id: 'transferTimes',
  params: {
    public: [
      {
        key: 'transferTimes',
        label: 'Open between',
        type: 'dateRanges',
        required: true,
        helper: 'Inclusive windows; the claim fails outside all of them.',
        parse(v, path) {
          if (Array.isArray(v) && v.length > 1000) throw badRequest(`${path} must hold at most 1000 ranges`);
          return rangesToJson(parseUintRanges(v, path));
        },
      },
    ],
  },
  form: {
    name: 'Time windows',
    description: 'The claim is open only inside these windows.',
    details: 'Open only during the listed time windows.',
  },
  async evaluate({ publicParams, now }) {
    const ranges = publicParams.transferTimes.map((r) => ({ start: BigInt(r.start), end: BigInt(r.end) }));
    if (!rangesContain(ranges, BigInt(now)))
      return { success: false, error: 'We are currently outside the approved time window.' };
    return { success: true };
  },
});
