// Linking a further wallet to an account. The account (a signed-in session) asks for a challenge
// naming the wallet; the wallet signs it (EIP-4361 text: EIP-191 for an 0x address, ADR-36 for a
// native one, checked by the sign-in capability's verifyWalletSignature); the account posts the
// signature and the link is made in one transaction that uses the request's nonce up. Each
// address keeps its own identity (platformAddress): a link only lets plugin instances that ask for
// it (`combineLinkedWallets`) count holdings together.
import type { AppContext } from '../context.ts';
import { isUniqueViolation, type DB, type Tx } from '../db/index.ts';
import { parseAddress } from '../shared/addresses.ts';
import { randomHex } from '../shared/crypto.ts';
import { ApiError, badRequest, conflict, forbidden, notFound, tooManyRequests } from '../shared/errors.ts';
import type { Session } from '../shared/session.ts';
import { requestMessage } from '../signin/message.ts';
import { verifyWalletSignature } from '../signin/flow.ts';
import { liveLinkOf, liveLinksOf, type LinkedWalletRequestTable, type LinkedWalletTable } from './storage.ts';

/** How long the wallet has to sign a link message. */
export const LINK_REQUEST_TTL_MS = 10 * 60_000;
/** Live links an account may hold. */
export const MAX_LINKED_WALLETS = 10;
/** Unexpired link requests an account may hold at once. */
export const MAX_PENDING_REQUESTS = 20;

const REQUEST_ID = /^[0-9a-f]{32}$/;
export const LINK_PATH = '/api/v0/linkedWallets';

type Ctx = Pick<AppContext, 'db' | 'clock' | 'config'>;
type Who = Pick<Session, 'platformAddress' | 'address'>;

export interface LinkedWallet {
  address: string;
  platformAddress: string;
  chain: string;
  linkedAt: string;
}

export const linkedWalletView = (r: LinkedWalletTable): LinkedWallet => ({
  address: r.address,
  platformAddress: r.platform_address,
  chain: r.chain,
  linkedAt: String(r.linked_at),
});

export const linkStatement = (accountAddress: string, domain: string) =>
  `Link this wallet to the account ${accountAddress} on ${domain}. Each address keeps its own identity; claims that combine linked wallets may count their holdings together. Sign only if you asked for this link yourself.`;

/** The EIP-4361 text the wallet signs: this service, the wallet, the account, the nonce and the expiry. */
export function linkMessage(ctx: Pick<AppContext, 'config'>, row: LinkedWalletRequestTable): string {
  return requestMessage(ctx.config.publicUrl, LINK_PATH, (domain) => linkStatement(row.account_address, domain), row);
}

/** Why `platformAddress` cannot be linked to `who`'s account now (a 400 or 409), or nothing. */
async function assertLinkable(db: DB | Tx, who: Who, platformAddress: string, shown: string): Promise<void> {
  if (platformAddress === who.platformAddress) throw badRequest(`${shown} is the address of this account itself.`);
  const own = await liveLinkOf(db, who.platformAddress);
  if (own)
    throw conflict(
      `This address is itself linked to the account ${own.account}: link further wallets from that account.`,
    );
  const existing = await liveLinkOf(db, platformAddress);
  if (existing?.account === who.platformAddress) throw conflict(`${shown} is already linked to this account.`);
  if (existing) throw conflict(`${shown} is already linked to another account: it must be unlinked there first.`);
  const held = await db
    .selectFrom('linked_wallets')
    .select('link_id')
    .where('account', '=', platformAddress)
    .where('unlinked_at', 'is', null)
    .executeTakeFirst();
  if (held) throw conflict(`${shown} has wallets linked to it: links are one level deep, so unlink those first.`);
  const count = (await liveLinksOf(db, who.platformAddress)).length;
  if (count >= MAX_LINKED_WALLETS)
    throw conflict(`This account already has ${MAX_LINKED_WALLETS} linked wallets, the most it may hold.`);
}

/** Records a link request for `address` and answers the message its wallet must sign. */
export async function createLinkChallenge(
  ctx: Ctx,
  who: Who,
  addressInput: string,
): Promise<{ requestId: string; message: string; expiresAt: string }> {
  const parsed = parseAddress(addressInput, 'address');
  const address = parsed.chain === 'ETH' ? parsed.evmAddress : parsed.platformAddress;
  await assertLinkable(ctx.db, who, parsed.platformAddress, address);
  const now = ctx.clock.now();
  // expired requests of this account go; unexpired ones are bounded
  await ctx.db
    .deleteFrom('linked_wallet_requests')
    .where('account', '=', who.platformAddress)
    .where('expires_at', '<=', now)
    .execute();
  const pending = await ctx.db
    .selectFrom('linked_wallet_requests')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account', '=', who.platformAddress)
    .where('consumed_at', 'is', null)
    .executeTakeFirstOrThrow();
  if (Number(pending.n) >= MAX_PENDING_REQUESTS)
    throw tooManyRequests(
      `This account has ${MAX_PENDING_REQUESTS} unused link requests; use them or wait until they expire (10 minutes).`,
      Math.ceil(LINK_REQUEST_TTL_MS / 1000),
    );
  const row: LinkedWalletRequestTable = {
    request_id: randomHex(16),
    account: who.platformAddress,
    account_address: who.address,
    address,
    platform_address: parsed.platformAddress,
    chain: parsed.chain,
    nonce: randomHex(16),
    issued_at: now,
    expires_at: now + LINK_REQUEST_TTL_MS,
    consumed_at: null,
  };
  await ctx.db.insertInto('linked_wallet_requests').values(row).execute();
  return { requestId: row.request_id, message: linkMessage(ctx, row), expiresAt: String(row.expires_at) };
}

/**
 * Checks the wallet's signature of a link request made by `who`, then, in one transaction, uses the
 * request's nonce up and records the link. Answers the new link.
 */
export async function completeLink(
  ctx: AppContext,
  who: Who,
  input: { requestId: string; signature: string; publicKey?: string },
): Promise<LinkedWallet> {
  const row = REQUEST_ID.test(input.requestId)
    ? await ctx.db
        .selectFrom('linked_wallet_requests')
        .selectAll()
        .where('request_id', '=', input.requestId)
        .executeTakeFirst()
    : undefined;
  if (!row) throw notFound('Unknown link request. Ask for a new link challenge.');
  if (row.account !== who.platformAddress) throw forbidden('This link request was made by another account.');
  if (row.consumed_at !== null)
    throw badRequest('This link request was already used: each link message is accepted once. Ask for a new one.');
  const now = ctx.clock.now();
  if (now >= row.expires_at)
    throw badRequest(
      'This link request has expired (a link message must be signed within 10 minutes). Ask for a new one.',
    );
  await verifyWalletSignature(
    ctx,
    { address: row.address, chain: row.chain, message: linkMessage(ctx, row), validUntil: row.expires_at },
    input,
    'link',
  );
  try {
    return await ctx.db.transaction().execute(async (tx) => {
      const used = await tx
        .updateTable('linked_wallet_requests')
        .set({ consumed_at: now })
        .where('request_id', '=', row.request_id)
        .where('consumed_at', 'is', null)
        .executeTakeFirst();
      if (Number(used.numUpdatedRows) !== 1)
        throw badRequest('This link request was already used: each link message is accepted once. Ask for a new one.');
      await assertLinkable(tx, who, row.platform_address, row.address);
      const link: LinkedWalletTable = {
        link_id: randomHex(16),
        account: who.platformAddress,
        platform_address: row.platform_address,
        address: row.address,
        chain: row.chain,
        linked_at: now,
        unlinked_at: null,
      };
      await tx.insertInto('linked_wallets').values(link).execute();
      return linkedWalletView(link);
    });
  } catch (err) {
    if (!(err instanceof ApiError) && isUniqueViolation(err))
      throw conflict(`${row.address} was linked to an account at the same moment: it must be unlinked there first.`);
    throw err;
  }
}

/**
 * Removes the live link of `addressInput`: one linked to `who`'s account, or `who`'s own address
 * linked to another account (a wallet may leave the account it was linked to).
 */
export async function unlink(ctx: Ctx, who: Who, addressInput: string): Promise<void> {
  const platformAddress = parseAddress(addressInput, 'address').platformAddress;
  const now = ctx.clock.now();
  let q = ctx.db
    .updateTable('linked_wallets')
    .set({ unlinked_at: now })
    .where('platform_address', '=', platformAddress)
    .where('unlinked_at', 'is', null);
  if (platformAddress !== who.platformAddress) q = q.where('account', '=', who.platformAddress);
  const r = await q.executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1)
    throw notFound(
      platformAddress === who.platformAddress
        ? 'This address is not linked to any account.'
        : `No wallet ${addressInput} is linked to this account.`,
    );
}

/** The session's account: its live links, and the account its own address is linked to (or null). */
export async function listLinks(
  ctx: Pick<AppContext, 'db'>,
  who: Who,
): Promise<{ account: string; linkedTo: string | null; linkedWallets: LinkedWallet[] }> {
  const [links, own] = await Promise.all([
    liveLinksOf(ctx.db, who.platformAddress),
    liveLinkOf(ctx.db, who.platformAddress),
  ]);
  return { account: who.platformAddress, linkedTo: own?.account ?? null, linkedWallets: links.map(linkedWalletView) };
}
