// Token balances, the chain's way: a balance says the holder owns `amount` of EACH token id in
// `tokenIds` during EACH millisecond of `ownershipTimes`. `balancesForIds` answers what a holder owns
// over a requested (ids × times) area: every overlap with a stored balance at its amount, and every
// uncovered part at amount 0, as the chain's and the SDK's getBalancesForIds do. All bigint.
import { sortAndMerge, type UintRange } from './uint-ranges.ts';

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

/**
 * A cell minus one rectangle, added to `out`: at most four cells, in the order of `subtractRanges`'
 * pieces (the ids left and right of the rectangle over the cell's times, then its times before and
 * after it).
 */
function cut(c: Cell, ids: UintRange, times: UintRange, out: Cell[] = []): Cell[] {
  if (c.ids.start < ids.start)
    out.push({ ids: { start: c.ids.start, end: c.ids.end < ids.start ? c.ids.end : ids.start - 1n }, times: c.times });
  if (ids.end < c.ids.end)
    out.push({ ids: { start: c.ids.start > ids.end ? c.ids.start : ids.end + 1n, end: c.ids.end }, times: c.times });
  if (c.times.start >= times.start && times.end >= c.times.end) return out;
  const mid = overlap(c.ids, ids);
  if (mid) {
    if (c.times.start < times.start)
      out.push({
        ids: mid,
        times: { start: c.times.start, end: c.times.end < times.start ? c.times.end : times.start - 1n },
      });
    if (times.end < c.times.end)
      out.push({
        ids: mid,
        times: { start: c.times.start > times.end ? c.times.start : times.end + 1n, end: c.times.end },
      });
  }
  return out;
}

/** Whether ranges are sorted, without overlaps or adjacent ranges (as `sortAndMerge` leaves them). */
function isMerged(ranges: UintRange[]): boolean {
  for (let i = 1; i < ranges.length; i++) if (ranges[i].start <= ranges[i - 1].end + 1n) return false;
  return true;
}
const merged = (ranges: UintRange[]) => (isMerged(ranges) ? ranges : sortAndMerge(ranges));

export function balancesForIds(ids: UintRange[], times: UintRange[], stored: Balance[]): Balance[] {
  const pieces: Balance[] = [];
  let rest: Cell[] = [];
  for (const i of merged(ids)) for (const t of merged(times)) rest.push({ ids: i, times: t });
  // once the whole area is covered, the other balances add nothing
  for (let k = 0; k < stored.length && rest.length > 0; k++) {
    const b = stored[k];
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
          cut(c, oi, ot, next);
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
