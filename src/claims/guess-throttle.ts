// Guess throttling: wrong passwords and codes (a failing user-input plugin) on a claim are limited
// without giving any claimer a lever against the others. Policy and figures: docs/security.md,
// "Guess throttle". In short, before a claim with a password or codes plugin is evaluated:
// - the claiming address waits after each wrong answer past the fifth in a row, twice as long
//   every time (1 s … 15 min); a right answer starts the count again. Its count holds only real
//   wrong answers; its evaluations in flight are counted apart, and at most as many may run at
//   once as it has wrong answers left before a wait (5 − count, or 1 once a wait is over): a
//   further attempt waits for their verdicts instead of being refused, so parallel attempts cannot
//   overrun the count and are never refused for failures that did not happen;
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
import { backoffMs } from '../shared/poll-loop.ts';
import { waitForWake, wakeOne } from './queue-wakeup.ts';

export const GUESS_MINUTE_MS = 60_000;
/** How long the owner's per-minute counts and idle buckets are kept. */
export const GUESS_RETENTION_MS = 60 * 60_000;
/** A wrong answer this recent makes its address, IP and IPv6 /48 participants of the guessing. */
export const GUESS_PARTICIPATION_MS = 10 * 60_000;
/** Wrong answers in a row an address may give before it has to wait. */
export const GUESS_FREE_FAILURES = 5;
const FIRST_WAIT_MS = 1000;
const LONGEST_WAIT_MS = 15 * 60_000;
/** An address's evaluations in flight lapse this long after the last one started (a process may die mid-evaluation). */
export const GUESS_IN_FLIGHT_MS = 60_000;

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
  in_flight: number | string;
  in_flight_until: number | string;
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
  /** One of the address's evaluations in flight is this one's (released when it settles). */
  addressReserved: boolean;
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

/** The address row's count in SQL as of `now`: a count idle for an hour starts again from 0. */
function addressCount(now: number): RawBuilder<number> {
  const stale = now - GUESS_RETENTION_MS;
  return sql<number>`(case when claim_guess_buckets.last_failure_at < ${big(stale)} and claim_guess_buckets.tat < ${big(stale)} then 0 else claim_guess_buckets.failures end)`;
}

/** The wait after the `count`-th wrong answer in a row, in SQL (addressWaitMs). */
function addressWait(count: RawBuilder<number>): RawBuilder<number> {
  const waits: RawBuilder<unknown>[] = [];
  for (let n = GUESS_FREE_FAILURES; addressWaitMs(n - 1) < LONGEST_WAIT_MS; n++)
    waits.push(sql`when ${count} = ${n} then ${big(addressWaitMs(n))}`);
  const longest = GUESS_FREE_FAILURES + waits.length;
  return sql<number>`(case ${sql.join(waits, sql` `)} when ${count} >= ${longest} then ${big(LONGEST_WAIT_MS)} else ${big(0)} end)`;
}

/** How many evaluations of an address with this count may run at once: its wrong answers left before a wait. */
function addressAllowance(failures: number, tat: number, now: number): number {
  if (failures < GUESS_FREE_FAILURES) return GUESS_FREE_FAILURES - failures;
  return tat <= now ? 1 : 0;
}

/** The address's state as read: its real count (0 when idle for an hour) and its evaluations in flight. */
function addressState(r: BucketRow | undefined, now: number) {
  if (!r) return { failures: 0, tat: 0, inFlight: 0, lastFailureAt: 0 };
  const stale = now - GUESS_RETENTION_MS;
  const lastFailureAt = Number(r.last_failure_at);
  const tat = Number(r.tat);
  return {
    failures: lastFailureAt < stale && tat < stale ? 0 : Number(r.failures),
    tat,
    inFlight: Number(r.in_flight_until) > now ? Number(r.in_flight) : 0,
    lastFailureAt,
  };
}

/** Waits until one of the address's evaluations in this process settles, or a poll interval passes (other processes). */
const waitForTurn = (ctx: AppContext, key: string, round: number) => waitForWake(ctx, key, backoffMs(round, 5, 200));

/** Lets the oldest request waiting on the address look again. */
const nextTurn = wakeOne;

const turnKey = (claimId: string, address: string) => `guess ${claimId} ${address}`;

/**
 * Admits one evaluation of a guessable claim or throws the 429 (with Retry-After). On admission
 * the IP's slot and one of the address's evaluations in flight are taken; pass the ticket to
 * `settleGuess` afterwards. While the address has as many in flight as it may, this waits.
 */
export async function admitGuess(ctx: AppContext, claimId: string, who: Guesser, now: number): Promise<GuessTicket> {
  const key = turnKey(claimId, who.platformAddress);
  for (let round = 0; ; round++) {
    let outcome: GuessTicket | 'busy' | 'again';
    try {
      outcome = await tryAdmit(ctx, claimId, who, round === 0 ? now : Math.max(now, ctx.clock.now()));
    } catch (err) {
      // refused: the next waiter is likely refused too, and need not wait for its poll to learn it
      if (round > 0) nextTurn(ctx, key);
      throw err;
    }
    if (outcome === 'busy') await waitForTurn(ctx, key, round);
    else if (outcome !== 'again') return outcome;
  }
}

async function tryAdmit(
  ctx: AppContext,
  claimId: string,
  who: Guesser,
  now: number,
): Promise<GuessTicket | 'busy' | 'again'> {
  const { perClientPerMinute, perClaimPerMinute } = ctx.config.guessLimits;
  const ticket: GuessTicket = {
    claimId,
    now,
    address: `address:${who.platformAddress}`,
    ip: ipBucket(who.ip),
    net: networkOf(who.ip),
    ipInterval: 0,
    addressReserved: false,
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
      .select(['scope', 'tat', 'failures', 'last_failure_at', 'in_flight', 'in_flight_until'])
      .where('claim_id', '=', claimId)
      .where('scope', 'in', scopes)
      .compile(),
  );
  const row = (scope: string | null) => {
    const r = rows.find((x) => x.scope === scope);
    return r ? { tat: Number(r.tat), failures: Number(r.failures), lastFailureAt: Number(r.last_failure_at) } : null;
  };
  const address = addressState(
    rows.find((x) => x.scope === ticket.address),
    now,
  );
  const ip = row(ticket.ip);
  const claim = row('claim');

  const addressRefusal = (count: number, waitMs: number) =>
    tooManyRequests(
      `Too many failed guesses for this address on claim ${claimId}: ${count} in a row. Try again in ${seconds(waitMs)} s.`,
      seconds(waitMs),
    );
  // the count is of real wrong answers only: its wait is set by the last of them
  if (ipLimit && address.failures >= GUESS_FREE_FAILURES && address.tat > now)
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
    // (an address without a row has lastFailureAt 0: not recent)
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
  // as many in flight as may turn out wrong before a wait: wait for their verdicts
  if (address.inFlight >= addressAllowance(address.failures, address.tat, now)) return 'busy';

  const count = addressCount(now);
  const inFlight = sql<number>`(case when claim_guess_buckets.in_flight_until > ${big(now)} then claim_guess_buckets.in_flight else 0 end)`;
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
      }>`insert into claim_guess_buckets (claim_id, scope, tat, failures, last_failure_at, in_flight, in_flight_until)
        values (${claimId}, ${ticket.address}, ${big(0)}, 0, 0, 1, ${big(now + GUESS_IN_FLIGHT_MS)})
        on conflict (claim_id, scope) do update set in_flight = ${inFlight} + 1, in_flight_until = ${big(now + GUESS_IN_FLIGHT_MS)}
        where ${inFlight} < (case when ${count} < ${GUESS_FREE_FAILURES} then ${GUESS_FREE_FAILURES} - ${count}
          when claim_guess_buckets.tat <= ${big(now)} then 1 else 0 end)
        returning failures`.compile(ctx.db),
    ),
  ]);
  // Nothing taken here means parallel requests took the slot between the read and the update.
  if (ipTaken.length === 1) ticket.ipInterval = ipLimit.intervalMs;
  if (addressTaken.length === 1) ticket.addressReserved = true;
  if (ipTaken.length === 0 || addressTaken.length === 0) {
    await giveBack(ctx, ticket);
    if (ipTaken.length === 0) throw ipRefusal(ipLimit.intervalMs);
    return 'again'; // read again: a wrong answer may have ended in a wait meanwhile, or the others are in flight
  }
  return ticket;
}

/**
 * Gives the IP's slot back (`ip`) and releases the address's evaluation in flight, resetting its
 * count on a right answer (`right`). One statement per row: a statement that locks one row cannot
 * deadlock with another (an update of two rows locks them in the order it finds them, which two
 * concurrent ones need not share).
 */
async function release(ctx: AppContext, t: GuessTicket, right: boolean): Promise<void> {
  await Promise.all([
    t.ipInterval > 0
      ? run(
          ctx,
          sql`update claim_guess_buckets set tat = tat - ${big(t.ipInterval)}
            where claim_id = ${t.claimId} and scope = ${t.ip}`.compile(ctx.db),
        )
      : null,
    t.addressReserved
      ? run(
          ctx,
          right
            ? sql`update claim_guess_buckets
                set failures = 0, tat = ${big(0)}, in_flight = case when in_flight > 0 then in_flight - 1 else 0 end
                where claim_id = ${t.claimId} and scope = ${t.address}`.compile(ctx.db)
            : sql`update claim_guess_buckets set in_flight = case when in_flight > 0 then in_flight - 1 else 0 end
                where claim_id = ${t.claimId} and scope = ${t.address}`.compile(ctx.db),
        )
      : null,
  ]);
  if (t.addressReserved) nextTurn(ctx, turnKey(t.claimId, t.address.slice('address:'.length)));
}

/** Returns what the ticket took: the IP's slot, and the address's evaluation in flight. */
const giveBack = (ctx: AppContext, t: GuessTicket) => release(ctx, t, false);

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
  // a right answer gives the IP's slot back and starts the address's count again
  if (outcome === 'right') return release(ctx, t, true);
  const now = t.now;
  const claimLimit = rollingLimit(ctx.config.guessLimits.perClaimPerMinute);
  // Wrong answers let through outside the claim's budget do not push it further away: the claim
  // comes back as soon as participants' guessing slows down.
  const claimInterval = claimLimit && !t.outsideClaimBudget ? claimLimit.intervalMs : 0;
  const minute = now - (now % GUESS_MINUTE_MS);
  const count = addressCount(now);
  // One statement, rows in scope order (as every statement here locks them), so it is atomic and
  // concurrent ones cannot deadlock on PostgreSQL.
  const rows = [
    { scope: t.address, tat: now, failures: 1 },
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
        failures = case when excluded.scope = ${t.address} then ${count} + 1
          else claim_guess_buckets.failures + excluded.failures end,
        last_failure_at = excluded.last_failure_at,
        tat = case when excluded.scope = 'claim'
          then (case when claim_guess_buckets.tat > ${big(now)} then claim_guess_buckets.tat else ${big(now)} end) + ${big(claimInterval)}
          when excluded.scope = ${t.address} then ${big(now)} + ${addressWait(sql<number>`(${count} + 1)`)}
          else claim_guess_buckets.tat end,
        in_flight = case when excluded.scope = ${t.address} and claim_guess_buckets.in_flight > 0
          then claim_guess_buckets.in_flight - ${t.addressReserved ? 1 : 0} else claim_guess_buckets.in_flight end`.compile(
      ctx.db,
    ),
  );
  if (t.addressReserved) nextTurn(ctx, turnKey(t.claimId, t.address.slice('address:'.length)));
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
    .where('in_flight_until', '<', cutoff)
    .where('scope', '!=', 'claim')
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
