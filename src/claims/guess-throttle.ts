// Guess throttling: wrong passwords and codes (a failing user-input plugin) on a claim are limited
// without giving any claimer a lever against the others. Policy and figures: docs/security.md,
// "Guess throttle". In short, before a claim with a password or codes plugin is evaluated:
// - the claiming address waits after each wrong answer past the fifth in a row, twice as long
//   every time (1 s … 15 min); a right answer starts the count again;
// - the client IP (IPv6: its /64) gets GUESS_LIMIT_PER_MINUTE wrong answers in any 60 s: a rolling
//   limit (GCRA), a burst of a quarter and then one at a steady pace, so no window edge doubles it.
//   Its slot is taken before the evaluation (so parallel requests cannot overrun it) and given
//   back when the answer was not wrong;
// - the claim gets GUESS_CLAIM_LIMIT_PER_MINUTE wrong answers in any 60 s, the same way. When they
//   are used up, only participants (an address, IP or IPv6 /48 with a wrong answer on this claim
//   in the last 10 minutes) are refused: anyone else is still evaluated, once at a time per IP,
//   so a right answer from someone who did not take part always gets through.
// The state is one row per bucket in the database (claim_guess_buckets), so every process
// sharing it enforces one budget; each step is a single statement, atomic on both databases.
import ipaddr from 'ipaddr.js';
import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import type { AppContext } from '../context.ts';
import type { DB, Tx } from '../db/index.ts';
import { ipBucket } from '../api-keys/rate-limit.ts';
import { tooManyRequests } from '../shared/errors.ts';

export const GUESS_MINUTE_MS = 60_000;
/** How long the owner's per-minute counts and idle buckets are kept. */
export const GUESS_RETENTION_MS = 60 * 60_000;
/** A wrong answer this recent makes its address, IP and IPv6 /48 participants of the guessing. */
export const GUESS_PARTICIPATION_MS = 10 * 60_000;
/** Wrong answers in a row an address may give before it has to wait. */
export const GUESS_FREE_FAILURES = 5;
const FIRST_WAIT_MS = 1000;
const LONGEST_WAIT_MS = 15 * 60_000;

/** The wait after the n-th wrong answer in a row: none up to 4, then 1 s, 2 s, 4 s, … 15 min. */
export function addressWaitMs(n: number): number {
  if (n < GUESS_FREE_FAILURES) return 0;
  return Math.min(LONGEST_WAIT_MS, FIRST_WAIT_MS * 2 ** Math.min(n - GUESS_FREE_FAILURES, 30));
}

export interface Guesser {
  /** The end user's IP (the socket's, a trusted proxy's X-Forwarded-For, or a trusted backend's x-end-user-ip). */
  ip: string;
  /** Canonical claiming address. */
  platformAddress: string;
}

/** A rolling limit of `limit` per 60 s as GCRA: a burst of `burst`, then one every `intervalMs`. */
interface Rolling {
  limit: number;
  burst: number;
  intervalMs: number;
  /** How far ahead of now the theoretical arrival time may be and still admit one more. */
  toleranceMs: number;
}

/**
 * In any 60 s (closed) at most burst + floor(60,000 / interval) ≤ limit are admitted: the burst is
 * a quarter of the limit and the interval is rounded up, so the steady pace never adds to it.
 */
export function rollingLimit(limit: number): Rolling | null {
  if (limit <= 0) return null;
  const burst = Math.max(1, Math.ceil(limit / 4));
  const rest = limit - burst;
  const intervalMs = rest > 0 ? Math.ceil(GUESS_MINUTE_MS / rest) : GUESS_MINUTE_MS + 1;
  return { limit, burst, intervalMs, toleranceMs: (burst - 1) * intervalMs };
}

/** IPv6 only: the /48 around the address (a site's usual allocation), for who took part. */
function networkOf(ip: string): string | null {
  try {
    const addr = ipaddr.parse(ip);
    if (addr.kind() !== 'ipv6' || (addr as ipaddr.IPv6).isIPv4MappedAddress()) return null;
    return `net:${(addr as ipaddr.IPv6).parts
      .slice(0, 3)
      .map((p) => p.toString(16))
      .join(':')}::/48`;
  } catch {
    return null;
  }
}

interface BucketRow {
  scope: string;
  tat: number | string;
  failures: number | string;
  last_failure_at: number | string;
}

/** What `admitGuess` took; `settleGuess` completes or gives it back. */
export interface GuessTicket {
  claimId: string;
  now: number;
  address: string;
  ip: string;
  net: string | null;
  /** The IP's slot taken (its interval), 0 when the IP limit is off. */
  ipInterval: number;
  /** The address's wrong-answer count was raised in advance; this was its wait before. */
  addressTatBefore: number | null;
  /** The claim's budget was used up and this claimer was let through as a non-participant. */
  outsideClaimBudget: boolean;
}

/** Runs one statement: synchronously on SQLite when the connection is free, else through Kysely. */
async function run<R>(ctx: AppContext, query: CompiledQuery): Promise<R[]> {
  const fast = ctx.sqlite?.run<R>(query);
  if (fast) return fast.rows;
  return (await ctx.db.executeQuery<R>(query)).rows;
}

const big = (n: number): RawBuilder<number> => sql<number>`cast(${n} as bigint)`;
const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** The address's new count and wait, in SQL: a count idle for an hour starts again at 1. */
function addressReservation(now: number): { count: RawBuilder<number>; tat: RawBuilder<number> } {
  const stale = now - GUESS_RETENTION_MS;
  const count = sql<number>`(case when claim_guess_buckets.last_failure_at < ${big(stale)} and claim_guess_buckets.tat < ${big(stale)} then 1 else claim_guess_buckets.failures + 1 end)`;
  const waits: RawBuilder<unknown>[] = [];
  for (let n = GUESS_FREE_FAILURES; addressWaitMs(n - 1) < LONGEST_WAIT_MS; n++)
    waits.push(sql`when ${count} = ${n} then ${big(addressWaitMs(n))}`);
  const longest = GUESS_FREE_FAILURES + waits.length;
  const tat = sql<number>`${big(now)} + (case ${sql.join(waits, sql` `)} when ${count} >= ${longest} then ${big(LONGEST_WAIT_MS)} else ${big(0)} end)`;
  return { count, tat };
}

/**
 * Admits one evaluation of a guessable claim or throws the 429 (with Retry-After). On admission
 * the IP's slot and the address's count are taken; pass the ticket to `settleGuess` afterwards.
 */
export async function admitGuess(ctx: AppContext, claimId: string, who: Guesser, now: number): Promise<GuessTicket> {
  const { perClientPerMinute, perClaimPerMinute } = ctx.config.guessLimits;
  const ticket: GuessTicket = {
    claimId,
    now,
    address: `address:${who.platformAddress}`,
    ip: ipBucket(who.ip),
    net: networkOf(who.ip),
    ipInterval: 0,
    addressTatBefore: null,
    outsideClaimBudget: false,
  };
  const ipLimit = rollingLimit(perClientPerMinute);
  const claimLimit = rollingLimit(perClaimPerMinute);
  if (!ipLimit && !claimLimit) return ticket;
  const scopes = [ticket.address, ticket.ip, ...(ticket.net ? [ticket.net] : []), 'claim'];
  const rows = await run<BucketRow>(
    ctx,
    ctx.db
      .selectFrom('claim_guess_buckets')
      .select(['scope', 'tat', 'failures', 'last_failure_at'])
      .where('claim_id', '=', claimId)
      .where('scope', 'in', scopes)
      .compile(),
  );
  const row = (scope: string | null) => {
    const r = rows.find((x) => x.scope === scope);
    return r ? { tat: Number(r.tat), failures: Number(r.failures), lastFailureAt: Number(r.last_failure_at) } : null;
  };
  const address = row(ticket.address);
  const ip = row(ticket.ip);
  const claim = row('claim');

  const addressRefusal = (count: number, waitMs: number) =>
    tooManyRequests(
      `Too many failed guesses for this address on claim ${claimId}: ${count} in a row. Try again in ${seconds(waitMs)} s.`,
      seconds(waitMs),
    );
  // Only a count past the free ones carries a wait: below it, `tat` is merely the time of the last
  // reservation, which a parallel request of the same address may have stamped a moment after this
  // request's `now` (PostgreSQL runs them in any order), and is no reason to refuse.
  if (ipLimit && address && address.failures >= GUESS_FREE_FAILURES && address.tat > now)
    throw addressRefusal(address.failures, address.tat - now);

  const claimRefusal = () => {
    const waitMs = claim!.tat - claimLimit!.toleranceMs - now;
    return tooManyRequests(
      `Too many failed guesses on claim ${claimId} (${claimLimit!.limit} per minute); until it is under that, only addresses and IP addresses without a wrong answer in the last ${GUESS_PARTICIPATION_MS / 60_000} minutes are evaluated. Try again in ${seconds(waitMs)} s.`,
      seconds(waitMs),
    );
  };
  const exhausted = !!claimLimit && !!claim && claim.tat - now > claimLimit.toleranceMs;
  if (exhausted) {
    const recent = (r: { lastFailureAt: number } | null) => !!r && r.lastFailureAt > now - GUESS_PARTICIPATION_MS;
    if (recent(address) || recent(ip) || recent(row(ticket.net))) throw claimRefusal();
    ticket.outsideClaimBudget = true;
  }
  if (!ipLimit) return ticket;

  // Outside the claim's budget an IP is evaluated once at a time: its slot must be free (no tolerance).
  const tolerance = exhausted ? 0 : ipLimit.toleranceMs;
  const ipRefusal = (waitMs: number) =>
    exhausted
      ? claimRefusal()
      : tooManyRequests(
          `Too many failed guesses from this IP address on claim ${claimId}: ${ipLimit.limit} per minute. Try again in ${seconds(waitMs)} s.`,
          seconds(waitMs),
        );
  if (ip && ip.tat - now > tolerance) throw ipRefusal(ip.tat - tolerance - now);

  const { count, tat } = addressReservation(now);
  const [ipTaken, addressTaken] = await Promise.all([
    run<{ tat: number }>(
      ctx,
      sql<{
        tat: number;
      }>`insert into claim_guess_buckets (claim_id, scope, tat, failures, last_failure_at) values (${claimId}, ${ticket.ip}, ${big(now + ipLimit.intervalMs)}, 0, 0)
        on conflict (claim_id, scope) do update set tat = (case when claim_guess_buckets.tat > ${big(now)} then claim_guess_buckets.tat else ${big(now)} end) + ${big(ipLimit.intervalMs)}
        where claim_guess_buckets.tat <= ${big(now + tolerance)}
        returning tat`.compile(ctx.db),
    ),
    run<{ failures: number }>(
      ctx,
      sql<{
        failures: number;
      }>`insert into claim_guess_buckets (claim_id, scope, tat, failures, last_failure_at) values (${claimId}, ${ticket.address}, ${big(now)}, 1, 0)
        on conflict (claim_id, scope) do update set failures = ${count}, tat = ${tat}
        where claim_guess_buckets.tat <= ${big(now)} or claim_guess_buckets.failures < ${GUESS_FREE_FAILURES}
        returning failures`.compile(ctx.db),
    ),
  ]);
  // A refusal here means parallel requests took the slot between the read and the update.
  if (ipTaken.length === 1) ticket.ipInterval = ipLimit.intervalMs;
  if (addressTaken.length === 1) ticket.addressTatBefore = address?.tat ?? 0;
  if (ipTaken.length === 0 || addressTaken.length === 0) {
    await giveBack(ctx, ticket);
    if (addressTaken.length === 0) throw addressRefusal((address?.failures ?? 0) + 1, FIRST_WAIT_MS);
    throw ipRefusal(ipLimit.intervalMs);
  }
  return ticket;
}

/** Returns what the ticket took: the IP's slot, and the address's count and wait as they were. */
async function giveBack(ctx: AppContext, t: GuessTicket): Promise<void> {
  const scopes = [...(t.addressTatBefore !== null ? [t.address] : []), ...(t.ipInterval > 0 ? [t.ip] : [])];
  if (scopes.length === 0) return;
  await run(
    ctx,
    sql`update claim_guess_buckets
      set tat = case when scope = ${t.ip} then tat - ${big(t.ipInterval)} else ${big(t.addressTatBefore ?? 0)} end,
        failures = case when scope = ${t.ip} then failures else failures - 1 end
      where claim_id = ${t.claimId} and scope in (${sql.join(scopes)})`.compile(ctx.db),
  );
}

/**
 * After the evaluation: `wrong` counts a failed guess (address, IP, IPv6 /48, claim, the minute);
 * `right` gives the IP's slot back and starts the address's count again; `other` (an answer that
 * says nothing about the password or code, e.g. a version mismatch) gives back what was taken.
 */
export async function settleGuess(
  ctx: AppContext,
  t: GuessTicket,
  outcome: 'wrong' | 'right' | 'other',
): Promise<void> {
  if (outcome === 'other') return giveBack(ctx, t);
  if (outcome === 'right') {
    const scopes = [...(t.addressTatBefore !== null ? [t.address] : []), ...(t.ipInterval > 0 ? [t.ip] : [])];
    if (scopes.length === 0) return;
    await run(
      ctx,
      sql`update claim_guess_buckets
        set tat = case when scope = ${t.ip} then tat - ${big(t.ipInterval)} else ${big(0)} end,
          failures = case when scope = ${t.ip} then failures else 0 end
        where claim_id = ${t.claimId} and scope in (${sql.join(scopes)})`.compile(ctx.db),
    );
    return;
  }
  const now = t.now;
  const claimLimit = rollingLimit(ctx.config.guessLimits.perClaimPerMinute);
  // Wrong answers let through outside the claim's budget do not push it further away: the claim
  // comes back as soon as participants' guessing slows down.
  const claimInterval = claimLimit && !t.outsideClaimBudget ? claimLimit.intervalMs : 0;
  const minute = now - (now % GUESS_MINUTE_MS);
  // One statement, rows in scope order (as every statement here locks them), so it is atomic and
  // concurrent ones cannot deadlock on PostgreSQL.
  const rows = [
    { scope: t.address, tat: 0, failures: t.addressTatBefore !== null ? 0 : 1 },
    { scope: 'claim', tat: now + claimInterval, failures: 1 },
    { scope: t.ip, tat: 0, failures: 1 },
    { scope: `minute:${minute}`, tat: minute, failures: 1 },
    ...(t.net ? [{ scope: t.net, tat: 0, failures: 1 }] : []),
  ].sort((x, y) => (x.scope < y.scope ? -1 : x.scope > y.scope ? 1 : 0));
  const values = rows.map((r) => sql`(${t.claimId}, ${r.scope}, ${big(r.tat)}, ${r.failures}, ${big(now)})`);
  await run(
    ctx,
    sql`insert into claim_guess_buckets (claim_id, scope, tat, failures, last_failure_at) values ${sql.join(values)}
      on conflict (claim_id, scope) do update set
        failures = claim_guess_buckets.failures + excluded.failures,
        last_failure_at = excluded.last_failure_at,
        tat = case when excluded.scope = 'claim'
          then (case when claim_guess_buckets.tat > ${big(now)} then claim_guess_buckets.tat else ${big(now)} end) + ${big(claimInterval)}
          else claim_guess_buckets.tat end`.compile(ctx.db),
  );
}

/** What the claim's owner sees: all failed guesses since creation, and those of the last hour. */
export async function failedGuesses(
  db: DB | Tx,
  claimId: string,
  now: number,
): Promise<{ total: number; lastHour: number }> {
  const rows = await db
    .selectFrom('claim_guess_buckets')
    .select(['scope', 'tat', 'failures'])
    .where('claim_id', '=', claimId)
    .where((eb) => eb.or([eb('scope', '=', 'claim'), eb('scope', 'like', 'minute:%')]))
    .execute();
  let total = 0;
  let lastHour = 0;
  for (const r of rows) {
    if (r.scope === 'claim') total = Number(r.failures);
    else if (Number(r.tat) > now - GUESS_RETENTION_MS) lastHour += Number(r.failures);
  }
  return { total, lastHour };
}

/** Deletes buckets idle for an hour but the claim's own (its total stays). Any process may run it. */
export async function sweepGuessBuckets(ctx: AppContext, now = ctx.clock.now()): Promise<number> {
  const cutoff = now - GUESS_RETENTION_MS;
  const res = await ctx.db
    .deleteFrom('claim_guess_buckets')
    .where('last_failure_at', '<', cutoff)
    .where('tat', '<', cutoff)
    .where('scope', '!=', 'claim')
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
