// Developer apps (OAuth clients). The client secret is shown once, at creation or rotation, and
// stored only as its SHA-256 hex. Redirect URIs are matched by exact string comparison.
import type { AppContext } from '../context.ts';
import type { DB } from '../db/index.ts';
import { randomHex, safeEqual, sha256Hex } from '../shared/crypto.ts';
import { badRequest, forbidden, notFound } from '../shared/errors.ts';
import type { Keyring } from '../shared/crypto.ts';
import { mapPage, newestFirst, paginate } from '../shared/pagination.ts';
import { FIND_APP } from './sql.ts';
import { parseList, type SigninAppTable } from './storage.ts';

export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

export const MAX_REDIRECT_URIS = 20;
export const MAX_REDIRECT_URI_LENGTH = 2048;

export interface DeveloperApp {
  clientId: string;
  name: string;
  description: string;
  image: string;
  redirectUris: string[];
  grantTypes: GrantType[];
  /** platformAddress of the owner; null for apps created with the operator CLI. */
  createdBy: string | null;
  createdAt: number;
  updatedAt: number;
}

export const toApp = (r: SigninAppTable): DeveloperApp => ({
  clientId: r.client_id,
  name: r.name,
  description: r.description,
  image: r.image,
  redirectUris: parseList(r.redirect_uris),
  grantTypes: parseList(r.grant_types) as GrantType[],
  createdBy: r.created_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

// The name goes into the signed EIP-4361 statement, whose grammar allows only RFC 3986
// reserved/unreserved characters and spaces; refusing others keeps every message conforming.
const NAME_RE = /^[A-Za-z0-9._~:/?#[\]@!$&'()*+,;= -]{1,64}$/;

export function validateAppName(name: string, field = 'name'): string {
  if (!NAME_RE.test(name) || name.trim() !== name) {
    throw badRequest(
      `Invalid ${field}: 1 to 64 characters from letters, digits, spaces and . _ ~ : / ? # [ ] @ ! $ & ' ( ) * + , ; = - , without leading or trailing spaces`,
    );
  }
  return name;
}

const isLoopback = (host: string) => host === 'localhost' || /^127(\.\d{1,3}){3}$/.test(host) || host === '[::1]';

/** https anywhere; http only on loopback (RFC 8252 §7.3); private-use schemes with a dot (RFC 8252 §7.1). */
export function validateRedirectUri(uri: string, field = 'redirect_uri'): string {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    throw badRequest(`Invalid ${field}: ${JSON.stringify(uri)} is not an absolute URI`);
  }
  if (uri.length > MAX_REDIRECT_URI_LENGTH)
    throw badRequest(`Invalid ${field}: longer than ${MAX_REDIRECT_URI_LENGTH} characters`);
  if (uri.includes('#')) throw badRequest(`Invalid ${field}: a redirect URI must not contain a fragment`);
  const scheme = u.protocol.slice(0, -1);
  const ok =
    scheme === 'https' ||
    (scheme === 'http' && isLoopback(u.hostname)) ||
    (scheme.includes('.') && /^[a-z][a-z0-9+.-]*$/.test(scheme));
  if (!ok)
    throw badRequest(
      `Invalid ${field}: ${JSON.stringify(uri)} must use https (http only on localhost / 127.0.0.1 / [::1], or a private-use scheme such as com.example.app:)`,
    );
  return uri;
}

export function validateRedirectUris(uris: string[], field = 'redirectUris'): string[] {
  if (uris.length > MAX_REDIRECT_URIS) throw badRequest(`Invalid ${field}: at most ${MAX_REDIRECT_URIS} redirect URIs`);
  uris.forEach((u, i) => validateRedirectUri(u, `${field}[${i}]`));
  if (new Set(uris).size !== uris.length) throw badRequest(`Invalid ${field}: duplicate redirect URI`);
  return uris;
}

export interface CreateAppInput {
  name: string;
  redirectUris: string[];
  description?: string;
  image?: string;
  grantTypes?: GrantType[];
  createdBy?: string | null;
}

export async function createDeveloperApp(
  db: DB,
  input: CreateAppInput,
  now: number,
): Promise<{ app: DeveloperApp; clientSecret: string }> {
  validateAppName(input.name);
  validateRedirectUris(input.redirectUris);
  const grantTypes = input.grantTypes ?? [...GRANT_TYPES];
  if (grantTypes.length === 0 || grantTypes.some((g) => !GRANT_TYPES.includes(g))) {
    throw badRequest(`Invalid grantTypes: each must be one of ${GRANT_TYPES.join(', ')}`);
  }
  const clientSecret = randomHex(32);
  const row: SigninAppTable = {
    client_id: randomHex(32),
    client_secret_hash: sha256Hex(clientSecret),
    name: input.name,
    description: input.description ?? '',
    image: input.image ?? '',
    redirect_uris: JSON.stringify(input.redirectUris),
    grant_types: JSON.stringify([...new Set(grantTypes)]),
    created_by: input.createdBy ?? null,
    created_at: now,
    updated_at: now,
  };
  await db.insertInto('signin_apps').values(row).execute();
  return { app: toApp(row), clientSecret };
}

export async function findAppRow(db: DB, clientId: string): Promise<SigninAppTable | undefined> {
  return db.selectFrom('signin_apps').selectAll().where('client_id', '=', clientId).executeTakeFirst();
}

/**
 * The token endpoint authenticates a client on every request; its row is kept for CLIENT_CACHE_MS.
 * Changes made in this process (update, rotation, delete) drop the entry at once; other processes
 * sharing the database see them within that bound. Unknown clients are never cached.
 */
export const CLIENT_CACHE_MS = 1000;
/** An entry of AppContext.signinAppCache. */
export interface CachedApp {
  row: SigninAppTable;
  at: number;
}

export async function findAppRowCached(
  ctx: Pick<AppContext, 'db' | 'dialect' | 'signinAppCache'>,
  clientId: string,
): Promise<SigninAppTable | undefined> {
  const cache = ctx.signinAppCache;
  const now = performance.now();
  const hit = cache.get(clientId);
  if (hit && now - hit.at <= CLIENT_CACHE_MS) return hit.row;
  const row = (await ctx.db.executeQuery<SigninAppTable>(FIND_APP(ctx.dialect, [clientId]))).rows[0];
  if (row) {
    if (cache.size > 10_000) cache.clear();
    cache.set(clientId, { row, at: now });
  } else cache.delete(clientId);
  return row;
}

// A cached row serves many requests: its JSON lists are parsed once per row, not per request.
const parsedLists = new WeakMap<SigninAppTable, { grantTypes: readonly string[]; redirectUris: readonly string[] }>();

/** The client's allowed grant types and registered redirect URIs (parsed once per row object). */
export function clientLists(row: SigninAppTable): { grantTypes: readonly string[]; redirectUris: readonly string[] } {
  let lists = parsedLists.get(row);
  if (!lists)
    parsedLists.set(
      row,
      (lists = { grantTypes: parseList(row.grant_types), redirectUris: parseList(row.redirect_uris) }),
    );
  return lists;
}

export async function getDeveloperApp(db: DB, clientId: string): Promise<DeveloperApp | null> {
  const row = await findAppRow(db, clientId);
  return row ? toApp(row) : null;
}

/** Whether the secret is the client's (compared as SHA-256 hashes, in constant time). */
export function secretMatches(row: SigninAppTable, clientSecret: string): boolean {
  return safeEqual(sha256Hex(clientSecret), row.client_secret_hash);
}

/** Who acts on an app: its owner's platformAddress, or the operator (the CLI), who may act on any app. */
export const OPERATOR = Symbol('operator');
export type AppActor = string | typeof OPERATOR;

async function ownedRow(db: DB, clientId: string, actor: AppActor): Promise<SigninAppTable> {
  const row = await findAppRow(db, clientId);
  if (!row) throw notFound(`No developer app with clientId ${clientId}`);
  if (actor !== OPERATOR && row.created_by !== actor) throw forbidden('You must be the owner of the developer app.');
  return row;
}

export interface UpdateAppInput {
  name?: string;
  description?: string;
  image?: string;
  redirectUris?: string[];
  rotateClientSecret?: boolean;
  /** Operator only: hand the app to a wallet (platformAddress), or back to the operator (null). */
  createdBy?: string | null;
}

export async function updateDeveloperApp(
  ctx: Pick<AppContext, 'db' | 'signinAppCache'>,
  clientId: string,
  actor: AppActor,
  patch: UpdateAppInput,
  now: number,
): Promise<{ app: DeveloperApp; clientSecret?: string }> {
  const { db } = ctx;
  const row = await ownedRow(db, clientId, actor);
  const set: Partial<SigninAppTable> = { updated_at: now };
  if (patch.createdBy !== undefined) {
    if (actor !== OPERATOR) throw forbidden('Only the operator can change the owner of a developer app.');
    set.created_by = patch.createdBy;
  }
  if (patch.name !== undefined) set.name = validateAppName(patch.name);
  if (patch.description !== undefined) set.description = patch.description;
  if (patch.image !== undefined) set.image = patch.image;
  if (patch.redirectUris !== undefined) set.redirect_uris = JSON.stringify(validateRedirectUris(patch.redirectUris));
  let clientSecret: string | undefined;
  if (patch.rotateClientSecret) {
    clientSecret = randomHex(32);
    set.client_secret_hash = sha256Hex(clientSecret);
  }
  await db.updateTable('signin_apps').set(set).where('client_id', '=', clientId).execute();
  ctx.signinAppCache.delete(clientId);
  return { app: toApp({ ...row, ...set }), ...(clientSecret ? { clientSecret } : {}) };
}

/** Deletes the app and revokes every authorization issued to it. */
export async function deleteDeveloperApp(
  ctx: Pick<AppContext, 'db' | 'signinAppCache'>,
  clientId: string,
  actor: AppActor,
  now: number,
): Promise<void> {
  const { db } = ctx;
  await ownedRow(db, clientId, actor);
  await db.transaction().execute(async (tx) => {
    await tx
      .updateTable('signin_authorizations')
      .set({ revoked_at: now })
      .where('client_id', '=', clientId)
      .where('revoked_at', 'is', null)
      .execute();
    await tx.deleteFrom('signin_apps').where('client_id', '=', clientId).execute();
  });
  ctx.signinAppCache.delete(clientId);
}

export async function listDeveloperApps(db: DB, keyring: Keyring, owner: string, bookmark: string | undefined) {
  const page = await paginate({
    query: db.selectFrom('signin_apps').selectAll().where('created_by', '=', owner),
    keys: newestFirst('client_id'),
    bookmark,
    keyring,
    scope: `developerApps|${owner}`,
  });
  return mapPage(page, toApp);
}

/** Every app, oldest first (the operator's view; `owner` narrows it to one wallet's apps). */
export async function listAllDeveloperApps(db: DB, owner?: string): Promise<DeveloperApp[]> {
  let query = db.selectFrom('signin_apps').selectAll();
  if (owner !== undefined) query = query.where('created_by', '=', owner);
  return (await query.orderBy('created_at').orderBy('client_id').execute()).map(toApp);
}
