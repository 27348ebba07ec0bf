// numUses: caps the total number of successful claims and is the default claim-number assigner
// (the claim number is the prior count, zero-based). Always required on an indexed claim; success
// logic cannot make it optional. The ledger of used claim numbers lives beside the state
// (claim_numbers) so no claim number is handed out twice.
import { badRequest } from '../shared/errors.ts';
import { rangesToJson, sortAndMerge } from '../shared/uint-ranges.ts';
import { definePlugin } from './define.ts';
import { asObject, int, onlyKeys } from './params.ts';
import type { StoredStateEntry } from './types.ts';

export const MAX_USES_LIMIT = 2_147_483_647;

interface Params {
  maxUses: number;
  hideCurrentState?: boolean;
  displayAsUnlimited?: boolean;
}

const count = (entries: StoredStateEntry[]) => Number(entries.find((e) => e.key === 'numUses')?.value ?? 0);

export const numUses = definePlugin<Params>({
  id: 'numUses',
  duplicatesAllowed: false,
  stateful: true,
  mandatory: true,
  canAssignClaimNumbers: () => null,
  publicStateKeys: ['numUses'],
  params: {
    public: [
      {
        key: 'maxUses',
        label: 'Maximum uses',
        type: 'number',
        required: true,
        helper: 'How many times the claim can succeed in total.',
        min: 0,
        max: MAX_USES_LIMIT,
      },
      {
        key: 'hideCurrentState',
        label: 'Hide the current count',
        type: 'boolean',
        helper: 'Only you see how many claims were made.',
      },
      { key: 'displayAsUnlimited', label: 'Display as unlimited', type: 'boolean' },
    ],
  },
  form: {
    name: 'Number of uses',
    description: 'Caps the total number of successful claims and numbers them from 0.',
    details: 'At most {{maxUses}} claims in total.',
  },
  async evaluate({ publicParams, state }) {
    const prior = Number((await state.get('numUses')) ?? 0);
    if (prior >= publicParams.maxUses) return { success: false, error: 'Overall max uses exceeded' };
    return { success: true, stateChanges: [{ key: 'numUses', value: prior + 1 }], claimNumber: prior };
  },
  publicState(entries, params, { privileged, claimNumbers }) {
    if (params.publicParams.hideCurrentState && !privileged) return {};
    const out: Record<string, unknown> = { numUses: count(entries) };
    if (claimNumbers) {
      const claimedUsers: Record<string, number[]> = {};
      for (const { claimNumber, platformAddress } of claimNumbers)
        (claimedUsers[platformAddress] ??= []).push(claimNumber);
      out.usedClaimNumbers = rangesToJson(
        sortAndMerge(claimNumbers.map((c) => ({ start: BigInt(c.claimNumber), end: BigInt(c.claimNumber) }))),
      );
      out.claimedUsers = claimedUsers;
    }
    return out;
  },
  stateFromDocument(newState, path) {
    const s = asObject(newState, path);
    onlyKeys(s, ['numUses'], path);
    const n = int(s, 'numUses', path, 0, MAX_USES_LIMIT);
    if (n === undefined) throw badRequest(`${path}.numUses is required`);
    return [{ key: 'numUses', value: n }];
  },
});
