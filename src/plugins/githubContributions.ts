// github-contributions: the claimer's linked GitHub account (connections flow) has at least
// `minContributions` commits counted by GitHub for `repository` ("owner/name"). It pages through
// the repository's contributors (GitHub links at most the top 500 to accounts) and matches the
// account by its stable numeric id, not its login, which can be renamed. Stateless, so usable in
// on-demand claims. The list of a repository is cached for CACHE_MS (GitHub itself caches it for
// hours) and concurrent reads share one fetch, so a busy claim does not spend the rate limit.
// Calls go through the egress module, as every outbound call does (https only, public addresses,
// no redirects followed: a renamed repository answers 301, reported as moved).
import type { ConnectionsConfig } from '../connections/config.ts';
import { findConnection } from '../connections/storage.ts';
import { type Egress, EgressError, egressFor } from '../egress/index.ts';
import { definePlugin } from './define.ts';

interface Pub {
  repository: string;
  minContributions?: number;
}

export const CACHE_MS = 5 * 60_000;
/** 10 pages of 100: twice what GitHub links to accounts. */
const MAX_PAGES = 10;
const REPO = /^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/;

export type Contributors = Map<string, number>; // account id → contributions
class GithubError extends Error {}

/** A repository's contributors, kept on the context (`githubContributors`) for CACHE_MS. */
export interface CachedContributors {
  expires: number;
  list: Promise<Contributors>;
}

/** A page of the contributors list is about 100 kB; GitHub's answers are far below this cap. */
const MAX_PAGE_BYTES = 4 * 1024 * 1024;

async function fetchContributors(
  egress: Pick<Egress, 'request'>,
  cfg: ConnectionsConfig,
  repository: string,
): Promise<Contributors> {
  const out: Contributors = new Map();
  let url: string | null = `${cfg.githubApiUrl}/repos/${repository}/contributors?per_page=100`;
  for (let page = 0; url && page < MAX_PAGES; page++) {
    let res: { status: number; header(name: string): string | undefined; body: Buffer };
    try {
      const r = await egress.request({
        url,
        method: 'GET',
        headers: {
          accept: 'application/vnd.github+json',
          'user-agent': 'platform-github-contributions',
          ...(cfg.githubApiToken ? { authorization: `Bearer ${cfg.githubApiToken}` } : {}),
        },
        timeoutMs: cfg.timeoutMs,
        maxResponseBytes: MAX_PAGE_BYTES,
      });
      res = {
        status: r.status,
        header: (name) => {
          const v = r.headers[name];
          return Array.isArray(v) ? v.join(', ') : v;
        },
        body: r.body,
      };
    } catch (err) {
      if (!(err instanceof EgressError)) throw err;
      if (err.kind === 'redirect')
        throw new GithubError(`Repository ${repository} has moved on GitHub; use its new "owner/name".`);
      throw new GithubError(
        err.kind === 'timeout'
          ? `GitHub API did not answer within ${cfg.timeoutMs} ms.`
          : 'GitHub API could not be reached.',
      );
    }
    if (
      (res.status === 403 || res.status === 429) &&
      (res.header('x-ratelimit-remaining') === '0' || res.header('retry-after') !== undefined)
    ) {
      const reset = Number(res.header('x-ratelimit-reset'));
      const after = Number.isFinite(reset) && reset > 0 ? ` after ${new Date(reset * 1000).toISOString()}` : ' later';
      throw new GithubError(`GitHub API rate limit reached; try again${after}.`);
    }
    if (res.status === 404) throw new GithubError(`Repository ${repository} was not found on GitHub.`);
    if (res.status === 204) return out; // empty repository
    if (res.status < 200 || res.status > 299)
      throw new GithubError(`GitHub API answered ${res.status} for ${repository}.`);
    let body: unknown = null;
    try {
      body = JSON.parse(res.body.toString('utf8'));
    } catch {}
    if (!Array.isArray(body)) throw new GithubError(`GitHub API answered an unexpected body for ${repository}.`);
    for (const c of body as Array<{ id?: unknown; contributions?: unknown }>) {
      if ((typeof c.id === 'number' || typeof c.id === 'string') && typeof c.contributions === 'number')
        out.set(String(c.id), c.contributions);
    }
    url = /<([^>]+)>;\s*rel="next"/.exec(res.header('link') ?? '')?.[1] ?? null;
  }
  return out;
}

function contributors(
  cache: Map<string, CachedContributors>,
  egress: Pick<Egress, 'request'>,
  cfg: ConnectionsConfig,
  repository: string,
  now: number,
): Promise<Contributors> {
  const key = `${cfg.githubApiUrl}|${repository.toLowerCase()}`;
  const hit = cache.get(key);
  if (hit && hit.expires > now) return hit.list;
  const list = fetchContributors(egress, cfg, repository);
  cache.set(key, { expires: now + CACHE_MS, list });
  list.catch(() => cache.delete(key)); // failures are not cached
  return list;
}

export const githubContributions = definePlugin<Pub>({
  id: 'github-contributions',
  params: {
    public: [
      {
        key: 'repository',
        type: 'string',
        required: true,
        pattern: REPO,
        invalid: 'must be "owner/name" (letters, digits, _ . -)',
        missingIsInvalid: true,
      },
      { key: 'minContributions', type: 'number', min: 1, max: 1_000_000_000 },
    ],
  },
  async evaluate(ctx) {
    const account = await findConnection(ctx.db, ctx.platformAddress, 'github');
    if (!account)
      return {
        success: false,
        error: 'No GitHub account is linked to this address. Link one through the connections flow first.',
      };
    const { repository, minContributions = 1 } = ctx.publicParams;
    let list: Contributors;
    try {
      list = await contributors(
        ctx.app.githubContributors,
        egressFor(ctx.app),
        ctx.app.config.connections,
        repository,
        ctx.now,
      );
    } catch (err) {
      if (err instanceof GithubError) return { success: false, error: err.message };
      throw err;
    }
    const n = list.get(account.id) ?? 0;
    // the text names no account: anyone with an API key may simulate a claim for any address
    if (n < minContributions)
      return {
        success: false,
        error: `The linked GitHub account has ${n} contribution${n === 1 ? '' : 's'} to ${repository}; at least ${minContributions} required.`,
      };
    return { success: true };
  },
});
