// github-contributions: the claimer's linked GitHub account (connections flow) has at least
// `minContributions` commits counted by GitHub for `repository` ("owner/name"). It pages through
// the repository's contributors (GitHub links at most the top 500 to accounts) and matches the
// account by its stable numeric id, not its login, which can be renamed. Stateless, so usable in
// on-demand claims. The list of a repository is cached for CACHE_MS (GitHub itself caches it for
// hours) and concurrent reads share one fetch, so a busy claim does not spend the rate limit.
import type { ConnectionsConfig } from '../connections/config.ts';
import { findConnection } from '../connections/storage.ts';
import { badRequest } from '../shared/errors.ts';
import { asObject, compact, int, onlyKeys } from './params.ts';
import type { ClaimPlugin } from './types.ts';

interface Pub {
  repository: string;
  minContributions?: number;
}

export const CACHE_MS = 5 * 60_000;
/** 10 pages of 100: twice what GitHub links to accounts. */
const MAX_PAGES = 10;
const REPO = /^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/;

type Contributors = Map<string, number>; // account id → contributions
class GithubError extends Error {}

const cache = new Map<string, { expires: number; list: Promise<Contributors> }>();

async function fetchContributors(cfg: ConnectionsConfig, repository: string): Promise<Contributors> {
  const out: Contributors = new Map();
  let url: string | null = `${cfg.githubApiUrl}/repos/${repository}/contributors?per_page=100`;
  for (let page = 0; url && page < MAX_PAGES; page++) {
    let res: Response;
    try {
      res = await fetch(url, {
        headers: {
          accept: 'application/vnd.github+json',
          'user-agent': 'platform-github-contributions',
          ...(cfg.githubApiToken ? { authorization: `Bearer ${cfg.githubApiToken}` } : {}),
        },
        signal: AbortSignal.timeout(cfg.timeoutMs),
      });
    } catch (err) {
      throw new GithubError(
        (err as Error).name === 'TimeoutError'
          ? `GitHub API did not answer within ${cfg.timeoutMs} ms.`
          : 'GitHub API could not be reached.',
      );
    }
    if (
      (res.status === 403 || res.status === 429) &&
      (res.headers.get('x-ratelimit-remaining') === '0' || res.headers.has('retry-after'))
    ) {
      const reset = Number(res.headers.get('x-ratelimit-reset'));
      const after = Number.isFinite(reset) && reset > 0 ? ` after ${new Date(reset * 1000).toISOString()}` : ' later';
      throw new GithubError(`GitHub API rate limit reached; try again${after}.`);
    }
    if (res.status === 404) throw new GithubError(`Repository ${repository} was not found on GitHub.`);
    if (res.status === 204) return out; // empty repository
    if (!res.ok) throw new GithubError(`GitHub API answered ${res.status} for ${repository}.`);
    const body = (await res.json().catch(() => null)) as unknown;
    if (!Array.isArray(body)) throw new GithubError(`GitHub API answered an unexpected body for ${repository}.`);
    for (const c of body as Array<{ id?: unknown; contributions?: unknown }>) {
      if ((typeof c.id === 'number' || typeof c.id === 'string') && typeof c.contributions === 'number')
        out.set(String(c.id), c.contributions);
    }
    url = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1] ?? null;
  }
  return out;
}

function contributors(cfg: ConnectionsConfig, repository: string, now: number): Promise<Contributors> {
  const key = `${cfg.githubApiUrl}|${repository.toLowerCase()}`;
  const hit = cache.get(key);
  if (hit && hit.expires > now) return hit.list;
  const list = fetchContributors(cfg, repository);
  cache.set(key, { expires: now + CACHE_MS, list });
  list.catch(() => cache.delete(key)); // failures are not cached
  return list;
}

export const githubContributions: ClaimPlugin<Pub> = {
  id: 'github-contributions',
  duplicatesAllowed: true,
  stateful: false,
  requiresUserInput: false,
  requiresSession: false,
  validate(pub, priv, { path }) {
    const pp = `${path}.publicParams`;
    const p = asObject(pub, pp);
    onlyKeys(p, ['repository', 'minContributions'], pp);
    onlyKeys(asObject(priv, `${path}.privateParams`), [], `${path}.privateParams`);
    if (typeof p.repository !== 'string' || !REPO.test(p.repository))
      throw badRequest(`${pp}.repository must be "owner/name" (letters, digits, _ . -)`);
    return {
      publicParams: compact({
        repository: p.repository,
        minContributions: int(p, 'minContributions', pp, 1, 1_000_000_000),
      }),
      privateParams: {},
    };
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
      list = await contributors(ctx.app.config.connections, repository, ctx.now);
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
};
