// The compliance pre-check for routes through tokenization denoms (`badges:` / `badgeslp:`).
//
// What it evaluates (nothing else): against the chain's REST endpoint,
//   1. every collection named by a `badges:<id>:…` / `badgeslp:<id>:…` denom on the route exists
//      (`GET /bitbadges/bitbadgeschain/tokenization/get_collection/{id}`);
//   2. when the input itself is such a denom, the sender can move the input amount under the
//      collection's current balances (`GET …/tokenization/get_wrappable_balances/{denom}/{sender}`
//      answers the largest movable amount).
// It does not run the collection's transfer-approval rules (time windows, amount trackers,
// challenges); the chain enforces those only at execution. Chain answers are cached for 5 minutes
// per (sender, route pool ids, route denoms); the amount is compared against the cached answer on
// every request. `forcefulRecheckCompliance` skips the cache. Without CHAIN_REST_URL the check
// cannot run and the response carries neither compliance field.
import { ChainError, type ChainClient } from '../chain/client.ts';

export const COMPLIANCE_TTL_MS = 5 * 60_000;
const MAX_ENTRIES = 10_000;

export const isTokenizationDenom = (d: string): boolean => d.startsWith('badges:') || d.startsWith('badgeslp:');

export interface ComplianceInput {
  sender: string;
  poolIds: string[];
  /** Every denom the route touches, input first, output last. */
  denoms: string[];
  tokenInDenom: string;
  tokenInAmount: bigint;
  force: boolean;
}

export interface ComplianceResult {
  /** false when no check applies or none could run (no chain endpoint). */
  evaluated: boolean;
  passed: boolean;
  message?: string;
}

interface Facts {
  missingCollections: string[];
  /** Largest input amount the sender can move, when the input is a tokenization denom. */
  movableInput: bigint | null;
  /** A chain refusal (4xx) worth reporting verbatim. */
  refusal?: string;
}

export class ComplianceChecker {
  private cache = new Map<string, { facts: Facts; expiresAt: number }>();
  private readonly client: ChainClient | null;
  private readonly now: () => number;
  /** Chain lookups performed (tests observe caching through it). */
  lookups = 0;

  constructor(client: ChainClient | null, now: () => number) {
    this.client = client;
    this.now = now;
  }

  async check(input: ComplianceInput): Promise<ComplianceResult> {
    const tokenization = input.denoms.filter(isTokenizationDenom);
    if (tokenization.length === 0) return { evaluated: true, passed: true };
    if (!this.client) return { evaluated: false, passed: true };
    const key = `${input.sender}|${input.poolIds.join(',')}|${input.denoms.join(',')}`;
    const now = this.now();
    let entry = input.force ? undefined : this.cache.get(key);
    if (!entry || entry.expiresAt <= now) {
      let facts: Facts;
      try {
        facts = await this.lookup(this.client, input, tokenization);
      } catch (err) {
        // not cached: the next request tries again
        return {
          evaluated: true,
          passed: false,
          message: `Compliance could not be checked: ${(err as Error).message}`,
        };
      }
      if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
      entry = { facts, expiresAt: now + COMPLIANCE_TTL_MS };
      this.cache.set(key, entry);
    }
    return verdict(entry.facts, input);
  }

  private async lookup(client: ChainClient, input: ComplianceInput, denoms: string[]): Promise<Facts> {
    this.lookups++;
    const collections = [...new Set(denoms.map((d) => d.split(':')[1]))];
    const missingCollections: string[] = [];
    for (const id of collections) {
      try {
        const body = (await client.get(`/bitbadges/bitbadgeschain/tokenization/get_collection/${id}`)) as {
          collection?: unknown;
        } | null;
        if (!body || body.collection === null || body.collection === undefined) missingCollections.push(id);
      } catch (err) {
        if (err instanceof ChainError && err.upstreamStatus === 404) missingCollections.push(id);
        else throw new Error('the chain REST endpoint did not answer the collection query');
      }
    }
    let movableInput: bigint | null = null;
    let refusal: string | undefined;
    if (isTokenizationDenom(input.tokenInDenom) && missingCollections.length === 0) {
      const path = `/bitbadges/bitbadgeschain/tokenization/get_wrappable_balances/${encodeURIComponent(input.tokenInDenom)}/${encodeURIComponent(input.sender)}`;
      try {
        const body = (await client.get(path)) as { amount?: unknown } | null;
        const amount = body?.amount;
        if (typeof amount !== 'string' || !/^\d+$/.test(amount))
          throw new Error('the chain REST endpoint answered the balance query in an unexpected format');
        movableInput = BigInt(amount);
      } catch (err) {
        if (
          err instanceof ChainError &&
          err.upstreamStatus !== null &&
          err.upstreamStatus >= 400 &&
          err.upstreamStatus < 500
        ) {
          refusal = `The chain refused the balance check for ${input.tokenInDenom}: ${err.upstreamMessage ?? `status ${err.upstreamStatus}`}`;
        } else if (err instanceof ChainError) {
          throw new Error('the chain REST endpoint did not answer the balance query');
        } else throw err;
      }
    }
    return { missingCollections, movableInput, ...(refusal ? { refusal } : {}) };
  }
}

function verdict(facts: Facts, input: ComplianceInput): ComplianceResult {
  if (facts.missingCollections.length > 0) {
    return {
      evaluated: true,
      passed: false,
      message: `Collection ${facts.missingCollections.join(', ')} does not exist on chain; its tokens cannot be transferred through the pool`,
    };
  }
  if (facts.refusal) return { evaluated: true, passed: false, message: facts.refusal };
  if (facts.movableInput !== null && facts.movableInput < input.tokenInAmount) {
    return {
      evaluated: true,
      passed: false,
      message: `The sender can move at most ${facts.movableInput} ${input.tokenInDenom} under the collection's current balances; the swap needs ${input.tokenInAmount}`,
    };
  }
  return { evaluated: true, passed: true };
}
