// A user's sign-ins to apps (signin_authorizations) as the console and the account views list them:
// the apps a user is signed in to (and signing out of one), an app's sign-ins for its owner, and
// every sign-in of an account.
import type { AppContext } from '../context.ts';
import { mapPage, newestFirst, paginate, type Page, type SortKey } from '../shared/pagination.ts';
import { parseList, type SigninAuthorizationTable } from './storage.ts';

/** An app the user is signed in to. */
export interface SignedInApp {
  authorizationId: string;
  clientId: string;
  appName: string;
  scopes: string[];
  createdAt: string;
  expiresAt: string;
}

/** The apps `platformAddress` is signed in to (live authorizations), newest first, at most 100. */
export async function liveAuthorizationsOf(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  platformAddress: string,
): Promise<SignedInApp[]> {
  const now = ctx.clock.now();
  const rows = await ctx.db
    .selectFrom('signin_authorizations as a')
    .innerJoin('signin_apps as p', 'p.client_id', 'a.client_id')
    .select([
      'a.authorization_id',
      'a.client_id',
      'p.name',
      'a.scopes',
      'a.created_at',
      'a.expires_at',
      'a.refresh_expires_at',
    ])
    .where('a.platform_address', '=', platformAddress)
    .where('a.revoked_at', 'is', null)
    // a live sign-in: its refresh token still renews, within the optional absolute end
    .where('a.refresh_expires_at', '>', now)
    .where((eb) => eb.or([eb('a.expires_at', 'is', null), eb('a.expires_at', '>', now)]))
    .orderBy('a.created_at', 'desc')
    .limit(100)
    .execute();
  return rows.map((r) => ({
    authorizationId: r.authorization_id,
    clientId: r.client_id,
    appName: r.name,
    scopes: parseList(r.scopes),
    createdAt: String(r.created_at),
    expiresAt: String(Math.min(r.refresh_expires_at ?? 0, r.expires_at ?? Number.MAX_SAFE_INTEGER)),
  }));
}

/**
 * Signs `platformAddress` out of one of its authorizations: its access and refresh tokens stop
 * working. False when the user has no authorization with that id.
 */
export async function revokeOwnAuthorization(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  platformAddress: string,
  authorizationId: string,
): Promise<boolean> {
  const row = await ctx.db
    .selectFrom('signin_authorizations')
    .select(['authorization_id'])
    .where('authorization_id', '=', authorizationId)
    .where('platform_address', '=', platformAddress)
    .executeTakeFirst();
  if (!row) return false;
  await ctx.db
    .updateTable('signin_authorizations')
    .set({ revoked_at: ctx.clock.now() })
    .where('authorization_id', '=', row.authorization_id)
    .where('revoked_at', 'is', null)
    .execute();
  return true;
}

export type SigninStatus = 'pending' | 'active' | 'revoked' | 'ended';

type StatusColumns = Pick<
  SigninAuthorizationTable,
  'revoked_at' | 'code_consumed_at' | 'code_expires_at' | 'expires_at' | 'refresh_expires_at'
>;

/**
 * Where a sign-in stands at `now`: revoked; pending (approved, code not exchanged yet); active
 * (tokens live: the refresh token renews, within the optional absolute end); ended otherwise.
 */
export function signinStatus(r: StatusColumns, now: number): SigninStatus {
  if (r.revoked_at !== null) return 'revoked';
  if (r.code_consumed_at === null) return now < r.code_expires_at ? 'pending' : 'ended';
  const renews = now < (r.refresh_expires_at ?? 0);
  const withinEnd = r.expires_at === null || now < r.expires_at;
  return renews && withinEnd ? 'active' : 'ended';
}

/** A sign-in to an app, as its owner sees it. */
export interface AppSignin {
  address: string;
  platformAddress: string;
  chain: string;
  scopes: string[];
  createdAt: string;
  status: SigninStatus;
}

/** The sign-ins to the app `clientId`, newest first, a page at a time. */
export async function signinsToApp(
  ctx: Pick<AppContext, 'db' | 'clock' | 'keyring'>,
  clientId: string,
  bookmark: string | undefined,
): Promise<Page<AppSignin>> {
  const now = ctx.clock.now();
  const page = await paginate({
    query: ctx.db
      .selectFrom('signin_authorizations')
      .select([
        'authorization_id',
        'address',
        'platform_address',
        'chain',
        'scopes',
        'created_at',
        'code_consumed_at',
        'code_expires_at',
        'expires_at',
        'refresh_expires_at',
        'revoked_at',
      ])
      .where('client_id', '=', clientId),
    keys: newestFirst('authorization_id'),
    bookmark,
    keyring: ctx.keyring,
    scope: `appSignins|${clientId}`,
  });
  return mapPage(page, (r) => ({
    address: r.address,
    platformAddress: r.platform_address,
    chain: r.chain,
    scopes: parseList(r.scopes),
    createdAt: String(r.created_at),
    status: signinStatus(r, now),
  }));
}

/** Where a page of a list starts and which way it runs; `scope` binds its bookmarks to the list. */
export interface PageRequest {
  bookmark: string;
  oldestFirst: boolean;
  scope: string;
}

const order = (oldestFirst: boolean, ...columns: string[]): SortKey[] =>
  columns.map((column) => ({ column, direction: oldestFirst ? 'asc' : 'desc' }));

/** Every authorization `platformAddress` approved (code, then tokens), with its app's name and image. */
export async function authorizationsOf(
  ctx: Pick<AppContext, 'db' | 'keyring'>,
  platformAddress: string,
  req: PageRequest,
) {
  return paginate({
    query: ctx.db
      .selectFrom('signin_authorizations as a')
      .leftJoin('signin_apps as app', 'app.client_id', 'a.client_id')
      .select([
        'a.authorization_id',
        'a.client_id',
        'a.redirect_uri',
        'a.scopes',
        'a.address',
        'a.chain',
        'a.platform_address',
        'a.created_at',
        'a.code_expires_at',
        'a.code_consumed_at',
        'a.expires_at',
        'a.refresh_expires_at',
        'a.revoked_at',
        'app.name',
        'app.image',
      ])
      .where('a.platform_address', '=', platformAddress),
    keys: order(req.oldestFirst, 'a.created_at', 'a.authorization_id'),
    bookmark: req.bookmark,
    keyring: ctx.keyring,
    scope: req.scope,
  });
}
