// One-time console sign-in links (`platform console-link --address A`): for an operator without a
// wallet extension at hand (a headless server, a fresh machine). The link is
//   <PUBLIC_URL>/#/link/<linkId>.<secret>
// The secret travels in the URL's fragment, which browsers never send to the server, so it never
// reaches a request log, a proxy or a Referer header; the console page posts it to
// POST /api/v0/console/link from the service's own origin, which turns it into an ordinary console
// session (the same cookie as a wallet sign-in). Only SHA-256 of the secret is stored, it is compared
// in constant time, it works once (the use is written in the same transaction as the session), and
// it ends after --expires (default 10 minutes, at most 24 hours). Creating and using a link each
// write an audit line (warn level) naming the link id and the address, never the secret.
import type { AppContext } from '../context.ts';
import { parseAddress } from '../shared/addresses.ts';
import { safeEqual, sha256Hex } from '../shared/crypto.ts';
import { badRequest, unauthorized } from '../shared/errors.ts';
import { createConsoleSession } from './console-session.ts';
import { newCredential } from './storage.ts';

export const DEFAULT_CONSOLE_LINK_TTL_MS = 10 * 60 * 1000;
export const MAX_CONSOLE_LINK_TTL_MS = 24 * 60 * 60 * 1000;
/** The scopes a console session holds (what the console's wallet sign-in asks for). */
export const CONSOLE_SCOPES = [
  'completeClaims',
  'readPrivateClaimData',
  'manageClaims',
  'manageDynamicStores',
  'managePlugins',
  'manageDeveloperApps',
];
export const LINK_TOKEN_RE = /^([0-9a-f]{32})\.([0-9a-f]{64})$/;

export interface ConsoleLink {
  url: string;
  linkId: string;
  address: string;
  platformAddress: string;
  expiresAt: number;
}

/** The console page's URL carrying a link token (in the fragment). */
export const consoleLinkUrl = (publicUrl: string, token: string): string =>
  `${publicUrl.replace(/\/+$/, '')}/#/link/${token}`;

export async function createConsoleLink(
  ctx: Pick<AppContext, 'db' | 'clock' | 'log' | 'config'>,
  input: { address: string; ttlMs?: number },
): Promise<ConsoleLink> {
  const parsed = parseAddress(input.address, '--address');
  const ttl = input.ttlMs ?? DEFAULT_CONSOLE_LINK_TTL_MS;
  if (!(ttl > 0 && ttl <= MAX_CONSOLE_LINK_TTL_MS)) throw badRequest('--expires must be more than 0 and at most 24h');
  const now = ctx.clock.now();
  const address = parsed.chain === 'ETH' ? parsed.evmAddress : parsed.platformAddress;
  const expiresAt = now + ttl;
  const who = { address, platformAddress: parsed.platformAddress, chain: parsed.chain };
  const { id: linkId, secret } = await ctx.db.transaction().execute(async (tx) => {
    const link = await newCredential(tx, 'console_links', who, now, expiresAt);
    await tx
      .insertInto('console_links')
      .values({ link_id: link.id, ...link.columns, used_at: null })
      .execute();
    return link;
  });
  ctx.log.warn(
    { consoleLink: linkId, platformAddress: parsed.platformAddress, expiresAt },
    'console sign-in link created',
  );
  return {
    url: consoleLinkUrl(ctx.config.publicUrl, `${linkId}.${secret}`),
    linkId,
    address,
    platformAddress: parsed.platformAddress,
    expiresAt,
  };
}

const INVALID = 'This sign-in link is not valid. Ask the operator for a new one (platform console-link).';

/** Spends a link (once) and opens a console session for its address. */
export async function useConsoleLink(ctx: Pick<AppContext, 'db' | 'clock' | 'log'>, token: string) {
  const m = LINK_TOKEN_RE.exec(token);
  if (!m) throw badRequest('token must be the part of a console sign-in link after #/link/ (<id>.<secret>)');
  const [, linkId, secret] = m;
  const now = ctx.clock.now();
  const out = await ctx.db.transaction().execute(async (tx) => {
    const row = await tx.selectFrom('console_links').selectAll().where('link_id', '=', linkId).executeTakeFirst();
    if (!row || !safeEqual(sha256Hex(secret), row.token_hash)) throw unauthorized(INVALID);
    if (row.used_at !== null)
      throw unauthorized('This sign-in link was already used. Ask the operator for a new one (platform console-link).');
    if (now >= Number(row.expires_at))
      throw unauthorized(
        `This sign-in link expired at ${new Date(Number(row.expires_at)).toISOString()}. Ask the operator for a new one (platform console-link).`,
      );
    // the guard on used_at makes a concurrent second use update nothing
    const spent = await tx
      .updateTable('console_links')
      .set({ used_at: now })
      .where('link_id', '=', linkId)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    if (Number(spent.numUpdatedRows) !== 1)
      throw unauthorized('This sign-in link was already used. Ask the operator for a new one (platform console-link).');
    const who = {
      address: row.address,
      platformAddress: row.platform_address,
      chain: row.chain,
      scopes: CONSOLE_SCOPES,
    };
    return { who, created: await createConsoleSession(ctx as AppContext, tx, who, now) };
  });
  ctx.log.warn({ consoleLink: linkId, platformAddress: out.who.platformAddress }, 'console sign-in link used');
  return out;
}
