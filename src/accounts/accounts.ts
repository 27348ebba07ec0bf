// Accounts: usernames and the account document with its views. An account is any valid address;
// it needs no sign-up. What it holds beyond its two address forms: an optional username, the native
// balance read from the chain, and the pages of the views asked for.
import type { AppContext } from '../context.ts';
import { parseAddress } from '../shared/addresses.ts';
import { badRequest, conflict, forbidden, notFound, unauthorized } from '../shared/errors.ts';
import type { Session } from '../shared/session.ts';
import { accountBalance } from './chain-views.ts';
import { forReads } from '../db/replicas.ts';
import { addressOfUsername, usernamesOf, writeUsername } from './storage.ts';
import { ACCOUNT_VIEW_TYPES, accountView, type AccountView, type ViewDoc } from './views.ts';

/** The scope that lets an app set the user's username and read the user's private views. */
export const ACCOUNT_SCOPE = 'manageAccount';

export const USERNAME_MAX = 15;
const USERNAME = new RegExp(`^[A-Za-z0-9_]{1,${USERNAME_MAX}}$`);
export const USERNAME_RULE = `Username must be 1 to ${USERNAME_MAX} characters long and can only contain letters, numbers, and underscores.`;

/** At most this many accounts per POST /api/v0/users, and views per account. */
export const MAX_ACCOUNTS_PER_REQUEST = 250;
export const MAX_VIEWS_PER_ACCOUNT = 10;

/** Sets the signed-in user's username; `''` clears it. Unique regardless of letter case. */
export async function updateUsername(ctx: AppContext, session: Session, username: string): Promise<void> {
  if (username !== '' && !USERNAME.test(username)) throw badRequest(`body.username is invalid: ${USERNAME_RULE}`);
  const result = await writeUsername(
    ctx.db,
    session.platformAddress,
    username === '' ? null : username,
    ctx.clock.now(),
  );
  if (result === 'taken')
    throw conflict(`Username already taken: ${username} (usernames are unique regardless of letter case)`);
}

export interface ViewFetch {
  viewType: string;
  viewId: string;
  bookmark: string;
  oldestFirst?: boolean;
}

export interface AccountFetch {
  address?: string;
  username?: string;
  viewsToFetch?: ViewFetch[];
}

export interface ViewResult {
  ids: string[];
  type: string;
  pagination: { bookmark: string; hasMore: boolean };
}

export interface AccountDocument {
  _docId: string;
  platformAddress: string;
  ethAddress: string;
  username?: string;
  balance?: { amount: string; denom: string };
  balanceError?: string;
  views: Record<string, ViewResult>;
  [field: string]: unknown;
}

/** Every field a view can fill, present (empty) on every account so clients can index them. */
const VIEW_FIELDS = [...new Set(ACCOUNT_VIEW_TYPES.map((t) => accountView(t, '').field))];

async function resolveAddress(ctx: AppContext, item: AccountFetch, path: string): Promise<string> {
  if ((item.address === undefined) === (item.username === undefined))
    throw badRequest(`${path} must give exactly one of address or username`);
  if (item.address !== undefined) return parseAddress(item.address, `${path}.address`).platformAddress;
  const address = await addressOfUsername(ctx.db, item.username!);
  if (!address) throw notFound(`No account has the username ${JSON.stringify(item.username)}`);
  return address;
}

/** Owner-only views: 401 without a session, 403 for another user or without the account scope. */
export function assertOwner(session: Session | null, address: string, viewType: string, path: string): void {
  const rule = `${viewType} is visible only to the account itself (a session of ${address} holding the ${ACCOUNT_SCOPE} scope)`;
  if (!session) throw unauthorized(`Unauthorized request. ${path}: ${rule}.`);
  if (session.platformAddress !== address)
    throw forbidden(`${path}: ${rule}; the session belongs to ${session.platformAddress}.`);
  if (!session.scopes.includes(ACCOUNT_SCOPE)) throw forbidden(`${path}: ${rule}; the session lacks that scope.`);
}

/**
 * The accounts asked for, in order, each with the pages of its views (docs/chain-data.md). The
 * views read from a read replica when one is configured; usernames are read on the primary, so a
 * username the caller has just set is in the next answer.
 */
export async function fetchAccounts(
  ctx: AppContext,
  session: Session | null,
  items: AccountFetch[],
  itemPath: (i: number) => string = (i) => `body.accountsToFetch[${i}]`,
): Promise<AccountDocument[]> {
  // Resolve and validate everything first: a bad item fails the request before any view is read.
  const plans = await Promise.all(
    items.map(async (item, i) => {
      const p = itemPath(i);
      const address = await resolveAddress(ctx, item, p);
      const fetches = item.viewsToFetch ?? [];
      if (fetches.length > MAX_VIEWS_PER_ACCOUNT)
        throw badRequest(`${p}.viewsToFetch must hold at most ${MAX_VIEWS_PER_ACCOUNT} views`);
      const seen = new Set<string>();
      const views = fetches.map((f, j) => {
        const vp = `${p}.viewsToFetch[${j}]`;
        if (seen.has(f.viewId))
          throw badRequest(
            `${vp}.viewId repeats ${JSON.stringify(f.viewId)}: view ids must be unique within an account`,
          );
        seen.add(f.viewId);
        const view = accountView(f.viewType, vp);
        if (view.ownerOnly) assertOwner(session, address, f.viewType, vp);
        return { fetch: f, view };
      });
      return { address, views };
    }),
  );

  // Usernames, balances and every view page are read at once: they are independent.
  const addresses = [...new Set(plans.map((p) => p.address))];
  const reads = forReads(ctx);
  const [usernames, balances, pages] = await Promise.all([
    usernamesOf(ctx.db, addresses),
    Promise.all(addresses.map(async (a) => [a, await accountBalance(ctx, a)] as const)).then((e) => new Map(e)),
    Promise.all(
      plans.map(({ address, views }) =>
        Promise.all(views.map(({ fetch, view }) => loadView(reads, view, address, fetch))),
      ),
    ),
  ]);

  return plans.map(({ address, views }, i) => {
    const account: AccountDocument = {
      _docId: address,
      platformAddress: address,
      ethAddress: parseAddress(address).evmAddress,
      ...(usernames.has(address) ? { username: usernames.get(address) } : {}),
      ...balances.get(address),
      views: {},
    };
    const fields = new Map<string, Map<string, ViewDoc>>(VIEW_FIELDS.map((f) => [f, new Map()]));
    views.forEach(({ fetch, view }, k) => {
      const page = pages[i][k];
      const docs = fields.get(view.field)!;
      // Two views may share a field (public and all claim activity): one document per _docId.
      for (const doc of page.docs) docs.set(doc._docId, { ...docs.get(doc._docId), ...doc });
      account.views[fetch.viewId] = {
        ids: page.docs.map((d) => d._docId),
        type: fetch.viewType,
        pagination: { bookmark: page.bookmark, hasMore: page.hasMore },
      };
    });
    for (const [field, docs] of fields) account[field] = [...docs.values()];
    // No view fills these (trackers belong to collections), but the reference client maps both.
    account.challengeTrackers = [];
    account.approvalTrackers = [];
    // The reference client reads the sign-ins under its brand word (bodies are not renamed).
    account.siwbbRequests = account.signinRequests;
    return account;
  });
}

function loadView(ctx: AppContext, view: AccountView, address: string, fetch: ViewFetch) {
  return view.load(ctx, address, { bookmark: fetch.bookmark, oldestFirst: fetch.oldestFirst ?? false });
}
