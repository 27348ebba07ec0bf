// The authorization step: an app sends the user to /signin/authorize; the page asks this module for a
// challenge (an EIP-4361 message with a fresh server nonce), the wallet signs it, and approval checks
// the signature and the stored request, consumes the nonce once and mints a one-time code.
import type { AppContext } from '../context.ts';
import { invalidAddressMessage, tryParseAddress, type Chain } from '../shared/addresses.ts';
import { randomHex, sha256Hex } from '../shared/crypto.ts';
import { ApiError, badRequest, notFound, unauthorized } from '../shared/errors.ts';
import { findAppRow } from './apps.ts';
import { CODE_TTL_MS, REQUEST_TTL_MS } from './lifetimes.ts';
import { buildSigninMessage, EVM_CHAIN_ID, parseSigninMessage } from './message.ts';
import { SCOPE_IDS, scopeName } from './scopes.ts';
import {
  parseList,
  type SigninAppTable,
  type SigninAuthorizationTable,
  type SigninRequestTable,
  UNUSED_CODE,
} from './storage.ts';
import type { Tx } from '../db/index.ts';
import { verifyEvmSignature } from './contract-wallets.ts';
import { verifyAdr36 } from './verify.ts';

/** Authorization-request errors, with the OAuth code the authorize page redirects with when it may. */
export class AuthorizeError extends ApiError {
  readonly oauthError: string;
  /** False for an unknown client or an unregistered redirect URI: shown, never redirected to. */
  readonly redirectable: boolean;
  constructor(oauthError: string, message: string, redirectable: boolean) {
    super(400, message, { error: oauthError });
    this.oauthError = oauthError;
    this.redirectable = redirectable;
  }
}

export interface AuthorizeInput {
  client_id: string;
  redirect_uri?: string;
  scope?: string;
  state?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  /** OpenID Connect: echoed in the id_token of the code exchange. */
  nonce?: string;
}

export interface AuthorizeRequest {
  app: SigninAppTable;
  redirectUri: string | null;
  scopes: string[];
  state: string | null;
  codeChallenge: string | null;
  nonce: string | null;
}

/** `scope` is a space- or comma-separated list of scope ids; unknown ids are refused. */
export function parseScopes(scope: string | undefined): string[] {
  const ids = [...new Set((scope ?? '').split(/[\s,]+/).filter(Boolean))];
  const unknown = ids.filter((id) => !SCOPE_IDS.includes(id));
  if (unknown.length)
    throw new AuthorizeError(
      'invalid_scope',
      `Unknown scope(s): ${unknown.join(', ')}. Known scopes: ${SCOPE_IDS.join(', ')}`,
      true,
    );
  return ids;
}

const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** Checks client and redirect URI first (never redirected), then the rest (redirectable). */
export async function validateAuthorizeRequest(ctx: AppContext, input: AuthorizeInput): Promise<AuthorizeRequest> {
  const app = input.client_id ? await findAppRow(ctx.db, input.client_id) : undefined;
  if (!app)
    throw new AuthorizeError('invalid_client', 'Invalid client_id: no developer app has this client ID.', false);
  const redirectUri = input.redirect_uri ?? null;
  if (redirectUri !== null && !parseList(app.redirect_uris).includes(redirectUri)) {
    throw new AuthorizeError(
      'invalid_request',
      'Invalid redirect_uri: it is not one of the redirect URIs registered for this app.',
      false,
    );
  }
  if (!parseList(app.grant_types).includes('authorization_code')) {
    throw new AuthorizeError('unauthorized_client', 'This app may not use the authorization_code grant.', true);
  }
  const scopes = parseScopes(input.scope);
  let codeChallenge: string | null = null;
  if (input.code_challenge !== undefined) {
    if (input.code_challenge_method !== 'S256') {
      throw new AuthorizeError('invalid_request', 'code_challenge_method must be S256 (plain is not supported).', true);
    }
    if (!S256_CHALLENGE.test(input.code_challenge)) {
      throw new AuthorizeError(
        'invalid_request',
        'code_challenge must be the 43-character base64url SHA-256 of the code verifier.',
        true,
      );
    }
    codeChallenge = input.code_challenge;
  } else if (input.code_challenge_method !== undefined) {
    throw new AuthorizeError('invalid_request', 'code_challenge_method was given without code_challenge.', true);
  }
  return { app, redirectUri, scopes, state: input.state ?? null, codeChallenge, nonce: input.nonce ?? null };
}

/** Where the service is reached: the EIP-4361 domain, scheme and URI. */
export function signinOrigin(ctx: AppContext) {
  const u = new URL(ctx.config.publicUrl);
  return { scheme: u.protocol.slice(0, -1), domain: u.host, uri: `${u.origin}/signin/authorize` };
}

export function statementFor(appName: string, domain: string, scopes: string[]): string {
  const what = scopes.length ? `Scopes requested: ${scopes.map(scopeName).join(', ')}.` : 'No scopes requested.';
  return `Sign in to ${appName} with ${domain}. ${what} Sign only if you started this sign-in.`;
}

export interface Challenge {
  requestId: string;
  message: string;
  expiresAt: number;
}

/** `admit`: the per-app budget (challenge-limits.ts), spent once the request is known to be valid. */
export async function createChallenge(
  ctx: AppContext,
  input: AuthorizeInput & { address: string },
  admit?: (clientId: string) => Promise<void>,
): Promise<Challenge> {
  const req = await validateAuthorizeRequest(ctx, input);
  const parsed = tryParseAddress(input.address);
  if (!parsed) throw badRequest(invalidAddressMessage(input.address));
  await admit?.(req.app.client_id);
  const now = ctx.clock.now();
  const { scheme, domain, uri } = signinOrigin(ctx);
  const requestId = randomHex(16);
  const nonce = randomHex(16); // 128 bits, alphanumeric as EIP-4361 requires
  const address = parsed.chain === 'ETH' ? parsed.evmAddress : parsed.platformAddress;
  const expiresAt = now + REQUEST_TTL_MS;
  const message = buildSigninMessage({
    scheme,
    domain,
    address,
    chain: parsed.chain,
    statement: statementFor(req.app.name, domain, req.scopes),
    uri,
    chainId: EVM_CHAIN_ID,
    nonce,
    issuedAt: now,
    expiresAt,
    requestId,
  });
  await ctx.db
    .insertInto('signin_requests')
    .values({
      request_id: requestId,
      client_id: req.app.client_id,
      redirect_uri: req.redirectUri,
      scopes: JSON.stringify(req.scopes),
      state: req.state,
      code_challenge: req.codeChallenge,
      code_challenge_method: req.codeChallenge ? 'S256' : null,
      address,
      platform_address: parsed.platformAddress,
      chain: parsed.chain,
      nonce,
      oidc_nonce: req.nonce,
      message,
      issued_at: now,
      expires_at: expiresAt,
      consumed_at: null,
    })
    .execute();
  return { requestId, message, expiresAt };
}

export interface Approval {
  code: string;
  state?: string;
  redirectUrl?: string;
}

export interface ApproveInput {
  requestId: string;
  signature: string;
  publicKey?: string;
}

/**
 * Every check of an approval, writing nothing: the stored request (unused, unexpired), its app and
 * redirect URI, the signed text, and the signature. Returns the request for the caller to consume
 * (approval mints a code; the console opens a browser session).
 */
export async function verifyChallenge(ctx: AppContext, input: ApproveInput, now: number): Promise<SigninRequestTable> {
  const req = await ctx.db
    .selectFrom('signin_requests')
    .selectAll()
    .where('request_id', '=', input.requestId)
    .executeTakeFirst();
  if (!req) throw notFound('Unknown sign-in request. Start a new sign-in.');
  if (req.consumed_at !== null) throw badRequest('This sign-in request was already used. Start a new sign-in.');
  if (now >= req.expires_at) throw badRequest('This sign-in request has expired. Start a new sign-in.');

  // The app and its redirect URI must still be valid now, not only when the request was made.
  const app = await findAppRow(ctx.db, req.client_id);
  if (!app) throw badRequest('The app of this sign-in request no longer exists.');
  if (req.redirect_uri !== null && !parseList(app.redirect_uris).includes(req.redirect_uri)) {
    throw badRequest('The redirect URI of this sign-in request is no longer registered for the app.');
  }

  // Every field of the signed text must agree with the stored request and this service.
  const fields = parseSigninMessage(req.message);
  const origin = signinOrigin(ctx);
  const agrees =
    fields !== null &&
    fields.scheme === origin.scheme &&
    fields.domain === origin.domain &&
    fields.uri === origin.uri &&
    fields.address === req.address &&
    fields.chain === req.chain &&
    fields.chainId === EVM_CHAIN_ID &&
    fields.nonce === req.nonce &&
    fields.requestId === req.request_id &&
    fields.issuedAt === req.issued_at &&
    fields.expiresAt === req.expires_at &&
    fields.statement === statementFor(app.name, origin.domain, parseList(req.scopes));
  if (!agrees)
    throw badRequest(
      'The sign-in request no longer matches this service or app (domain, URI or app name changed). Start a new sign-in.',
    );

  await verifyWalletSignature(
    ctx,
    { address: req.address, chain: req.chain, message: req.message, validUntil: req.expires_at },
    input,
    'sign-in',
  );
  return req;
}

/**
 * Whether `address` signed `message`: EIP-191 personal_sign for an 0x address (or, with EVM_RPC_URL,
 * a smart-contract account's ERC-1271 / ERC-6492 signature), ADR-36 for a native one (with its
 * public key). Throws the refusal; `kind` names the text in it ("sign-in", "link"). The sign-in
 * approval and the connections flow's wallet proof both check signatures here. `validUntil` bounds
 * how long a contract account's accepted proof is remembered.
 */
export async function verifyWalletSignature(
  ctx: AppContext,
  signed: { address: string; chain: Chain; message: string; validUntil: number },
  input: { signature: string; publicKey?: string },
  kind: string,
): Promise<void> {
  const signer = tryParseAddress(signed.address);
  if (!signer) throw badRequest(`The ${kind} request holds an invalid address.`);
  if (signed.chain === 'ETH') {
    await verifyEvmSignature(
      ctx,
      { address: signed.address, message: signed.message, signature: input.signature, validUntil: signed.validUntil },
      kind,
    );
  } else {
    if (!input.publicKey)
      throw badRequest('publicKey is required for a native address: ADR-36 signatures carry no recovery id.');
    const result = verifyAdr36({
      signer: signed.address,
      data: signed.message,
      publicKey: input.publicKey,
      signature: input.signature,
    });
    if (!result.ok) throw unauthorized(`Signature does not verify for ${signed.address}: ${result.reason}.`);
  }
}

/** Marks the request used; false when another approval consumed it first (each nonce is used once). */
export async function consumeRequest(tx: Tx, requestId: string, now: number): Promise<boolean> {
  const r = await tx
    .updateTable('signin_requests')
    .set({ consumed_at: now })
    .where('request_id', '=', requestId)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function approveChallenge(ctx: AppContext, input: ApproveInput): Promise<Approval> {
  const now = ctx.clock.now();
  const req = await verifyChallenge(ctx, input, now);
  // All checks passed: consume the nonce exactly once, then mint the code, in one transaction.
  const code = randomHex(32);
  const consumed = await ctx.db.transaction().execute(async (tx) => {
    if (!(await consumeRequest(tx, req.request_id, now))) return false;
    const row: SigninAuthorizationTable = {
      authorization_id: randomHex(16),
      code_hash: sha256Hex(code),
      client_id: req.client_id,
      redirect_uri: req.redirect_uri,
      scopes: req.scopes,
      code_challenge: req.code_challenge,
      address: req.address,
      platform_address: req.platform_address,
      chain: req.chain,
      message: req.message,
      created_at: now,
      code_expires_at: now + CODE_TTL_MS,
      ...UNUSED_CODE,
      oidc_nonce: req.oidc_nonce,
    };
    await tx.insertInto('signin_authorizations').values(row).execute();
    return true;
  });
  if (!consumed) throw badRequest('This sign-in request was already used. Start a new sign-in.');

  const out: Approval = { code };
  if (req.state !== null) out.state = req.state;
  if (req.redirect_uri !== null)
    out.redirectUrl = redirectWith(req.redirect_uri, { code, ...(req.state !== null ? { state: req.state } : {}) });
  return out;
}

/** Adds query parameters to a registered redirect URI, keeping its own query. */
export function redirectWith(redirectUri: string, params: Record<string, string>): string {
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.toString();
}
