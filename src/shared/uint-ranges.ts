// UintRanges: inclusive `{ start, end }` bounds of unsigned 64-bit integers. They travel as
// strings over HTTP and are computed with bigint so no bound ever loses precision.
import { badRequest } from './errors.ts';

export const MAX_UINT64 = 18446744073709551615n;

export interface UintRange {
  start: bigint;
  end: bigint;
}

export interface UintRangeJson {
  start: string;
  end: string;
}

function toBound(v: unknown, field: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === 'string' && /^\d+$/.test(v)) {
    // past 20 significant digits it is over MAX_UINT64 (refused by the caller for its size), and
    // not worth parsing: the string may be very long
    const digits = v.replace(/^0+(?=\d)/, '');
    return digits.length > 20 ? MAX_UINT64 + 1n : BigInt(digits);
  }
  throw badRequest(`${field} must be an unsigned integer string (got ${JSON.stringify(v)})`);
}

/** Validates one range: both bounds integers in [0, 2^64-1], start <= end. */
export function parseUintRange(v: unknown, field = 'range'): UintRange {
  if (typeof v !== 'object' || v === null) throw badRequest(`${field} must be an object { start, end }`);
  const r = v as Record<string, unknown>;
  const start = toBound(r.start, `${field}.start`);
  const end = toBound(r.end, `${field}.end`);
  if (start > MAX_UINT64 || end > MAX_UINT64) throw badRequest(`${field} exceeds ${MAX_UINT64}`);
  if (start > end) throw badRequest(`${field}.start must not exceed ${field}.end`);
  return { start, end };
}

export function parseUintRanges(v: unknown, field = 'ranges'): UintRange[] {
  if (!Array.isArray(v)) throw badRequest(`${field} must be an array of { start, end }`);
  return v.map((r, i) => parseUintRange(r, `${field}[${i}]`));
}

export const rangeToJson = (r: UintRange): UintRangeJson => ({ start: r.start.toString(), end: r.end.toString() });
export const rangesToJson = (rs: UintRange[]): UintRangeJson[] => rs.map(rangeToJson);

/** Sorts and merges overlapping and adjacent ranges. */
export function sortAndMerge(ranges: UintRange[]): UintRange[] {
  const sorted = [...ranges].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const out: UintRange[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.start <= last.end + 1n) {
      if (r.end > last.end) last.end = r.end;
    } else {
      out.push({ start: r.start, end: r.end });
    }
  }
  return out;
}

/** Whether `value` lies in any range. Ranges need not be sorted. */
export function rangesContain(ranges: UintRange[], value: bigint): boolean {
  return ranges.some((r) => r.start <= value && value <= r.end);
}

/** Ranges minus every value covered by `remove`; the result is sorted and merged. */
export function subtractRanges(ranges: UintRange[], remove: UintRange[]): UintRange[] {
  let current = sortAndMerge(ranges);
  for (const cut of sortAndMerge(remove)) {
    const next: UintRange[] = [];
    for (const r of current) {
      if (cut.end < r.start || cut.start > r.end) {
        next.push(r);
        continue;
      }
      if (cut.start > r.start) next.push({ start: r.start, end: cut.start - 1n });
      if (cut.end < r.end) next.push({ start: cut.end + 1n, end: r.end });
    }
    current = next;
  }
  return current;
}

/** Adds one value to a set of ranges, merging. */
export const addToRanges = (ranges: UintRange[], value: bigint): UintRange[] =>
  sortAndMerge([...ranges, { start: value, end: value }]);

/** Number of values covered (ranges are merged first so overlaps count once). */
export function rangesSize(ranges: UintRange[]): bigint {
  return sortAndMerge(ranges).reduce((n, r) => n + (r.end - r.start + 1n), 0n);
}
