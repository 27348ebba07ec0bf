// Token balances, the chain's way: a balance says the holder owns `amount` of EACH token id in
// `tokenIds` during EACH millisecond of `ownershipTimes`. `balancesForIds` answers what a holder owns
// over a requested (ids × times) area: every overlap with a stored balance at its amount, and every
// uncovered part at amount 0, as the chain's and the SDK's getBalancesForIds do. All bigint.
import { sortAndMerge, subtractRanges, type UintRange } from './uint-ranges.ts';

export interface Balance {
  amount: bigint;
  tokenIds: UintRange[];
  ownershipTimes: UintRange[];
}

/** One rectangle of the (ids × times) plane. */
interface Cell {
  ids: UintRange;
  times: UintRange;
}

const overlap = (a: UintRange, b: UintRange): UintRange | null => {
  const start = a.start > b.start ? a.start : b.start;
  const end = a.end < b.end ? a.end : b.end;
  return start <= end ? { start, end } : null;
};

/** A cell minus one rectangle: at most four cells. */
function cut(c: Cell, ids: UintRange, times: UintRange): Cell[] {
  const out: Cell[] = [];
  for (const r of subtractRanges([c.ids], [ids])) out.push({ ids: r, times: c.times });
  const mid = overlap(c.ids, ids);
  if (mid) for (const t of subtractRanges([c.times], [times])) out.push({ ids: mid, times: t });
  return out;
}

export function balancesForIds(ids: UintRange[], times: UintRange[], stored: Balance[]): Balance[] {
  const pieces: Balance[] = [];
  let rest: Cell[] = [];
  for (const i of sortAndMerge(ids)) for (const t of sortAndMerge(times)) rest.push({ ids: i, times: t });
  for (const b of stored) {
    for (const bi of b.tokenIds) {
      for (const bt of b.ownershipTimes) {
        const next: Cell[] = [];
        for (const c of rest) {
          const oi = overlap(c.ids, bi);
          const ot = oi && overlap(c.times, bt);
          if (!oi || !ot) {
            next.push(c);
            continue;
          }
          pieces.push({ amount: b.amount, tokenIds: [oi], ownershipTimes: [ot] });
          next.push(...cut(c, oi, ot));
        }
        rest = next;
      }
    }
  }
  for (const c of rest) pieces.push({ amount: 0n, tokenIds: [c.ids], ownershipTimes: [c.times] });
  return pieces;
}

/** Parses the chain's JSON balances (decimal strings). */
export function balancesFromJson(
  json: Array<{
    amount: string;
    tokenIds: { start: string; end: string }[];
    ownershipTimes: { start: string; end: string }[];
  }>,
): Balance[] {
  const r = (x: { start: string; end: string }) => ({ start: BigInt(x.start), end: BigInt(x.end) });
  return json.map((b) => ({
    amount: BigInt(b.amount),
    tokenIds: b.tokenIds.map(r),
    ownershipTimes: b.ownershipTimes.map(r),
  }));
}

/**
 * Several holders' balances as one holder's: where their (ids × times) areas overlap the amounts
 * add up (exactly, bigint), and the answer's pieces do not overlap, as `balancesForIds` expects.
 */
export function sumBalances(lists: Balance[][]): Balance[] {
  let cells: Array<Cell & { amount: bigint }> = [];
  for (const list of lists) {
    for (const b of list) {
      if (b.amount === 0n) continue;
      for (const bi of b.tokenIds) {
        for (const bt of b.ownershipTimes) {
          let rest: Cell[] = [{ ids: bi, times: bt }];
          const next: Array<Cell & { amount: bigint }> = [];
          for (const e of cells) {
            const oi = overlap(e.ids, bi);
            const ot = oi && overlap(e.times, bt);
            if (!oi || !ot) {
              next.push(e);
              continue;
            }
            for (const c of cut(e, oi, ot)) next.push({ ...c, amount: e.amount });
            next.push({ ids: oi, times: ot, amount: e.amount + b.amount });
            rest = rest.flatMap((c) => {
              const ri = overlap(c.ids, oi);
              const rt = ri && overlap(c.times, ot);
              return ri && rt ? cut(c, ri, rt) : [c];
            });
          }
          for (const c of rest) next.push({ ...c, amount: b.amount });
          cells = next;
        }
      }
    }
  }
  return cells.map((c) => ({ amount: c.amount, tokenIds: [c.ids], ownershipTimes: [c.times] }));
}
