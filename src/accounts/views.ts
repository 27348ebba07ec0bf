// Account views (docs/chain-data.md): each view type pages one list of documents about one account and
// says where those documents land in the account (`signinRequests`, `claimActivity`, ...). Views
// held by this service's own tables are read here; the chain-backed ones read the indexer's read
// model (src/chain/account-views.ts) through ./chain-views.ts.
import type { AppContext } from '../context.ts';
import { badRequest } from '../shared/errors.ts';
import { emptyPage, mapPage, type Page } from '../shared/pagination.ts';
import { resolvedAttemptsOf } from '../claims/read.ts';
import { authorizationsOf } from '../signin/authorizations.ts';
import { parseList } from '../signin/storage.ts';
import { scopeName } from '../signin/scopes.ts';
import { chainViews, type ChainViewType } from './chain-views.ts';

/** A document of a view: every one carries its `_docId`, which `views[viewId].ids` lists. */
export type ViewDoc = { _docId: string } & Record<string, unknown>;

export interface ViewRequest {
  bookmark: string;
  oldestFirst: boolean;
}

export interface AccountView {
  /** The account field the documents land in. */
  field: string;
  /** Visible only to the account itself (a session of that address holding `manageAccount`). */
  ownerOnly: boolean;
  load(ctx: AppContext, platformAddress: string, req: ViewRequest): Promise<Page<ViewDoc>>;
}

/** Bookmarks are bound to the view type, the account and the direction. */
const scopeOf = (viewType: string, address: string, req: ViewRequest) =>
  `accounts/${viewType}:${address}:${req.oldestFirst ? 'asc' : 'desc'}`;

/** This user's sign-ins to apps: one document per authorization the user approved (code, then tokens). */
const signinRequests: AccountView = {
  field: 'signinRequests',
  ownerOnly: true,
  async load(ctx, address, req) {
    const page = await authorizationsOf(ctx, address, { ...req, scope: scopeOf('signinRequests', address, req) });
    return mapPage(page, (r) => ({
      _docId: r.authorization_id,
      clientId: r.client_id,
      appName: r.name ?? '',
      appImage: r.image ?? '',
      redirectUri: r.redirect_uri ?? '',
      scopes: parseList(r.scopes).map((scopeId) => ({ scopeName: scopeName(scopeId), scopeId })),
      address: r.address,
      chain: r.chain,
      platformAddress: r.platform_address,
      createdAt: String(r.created_at),
      codeExchanged: r.code_consumed_at !== null,
      // an unexchanged code ends at its expiry; an exchanged one when its token family does
      // an exchanged sign-in lives as long as its refresh token, within the optional absolute end
      expiresAt: String(
        r.code_consumed_at === null
          ? r.code_expires_at
          : Math.min(r.refresh_expires_at ?? r.code_expires_at, r.expires_at ?? Number.MAX_SAFE_INTEGER),
      ),
      ...(r.revoked_at !== null ? { revokedAt: String(r.revoked_at) } : {}),
    }));
  },
};

/**
 * Claim activity: resolved attempts of this address. Public: successes on claims listed in search
 * (not deleted, not test claims), so the view never reveals an unlisted claim's id. All: every
 * resolved attempt on any claim, failures with their error, only to the user themself.
 */
function claimActivity(viewType: 'publicClaimActivity' | 'allClaimActivity'): AccountView {
  const all = viewType === 'allClaimActivity';
  return {
    field: 'claimActivity',
    ownerOnly: all,
    async load(ctx, address, req) {
      const page = await resolvedAttemptsOf(ctx, address, !all, { ...req, scope: scopeOf(viewType, address, req) });
      return mapPage(page, (r) => ({
        _docId: r.claim_attempt_id,
        claimAttemptId: r.claim_attempt_id,
        claimId: r.claim_id,
        platformAddress: r.platform_address,
        success: r.status === 'success',
        claimNumber: r.status === 'success' ? r.claim_number : -1,
        attemptedAt: String(r.attempted_at),
        updatedAt: String(r.resolved_at ?? r.attempted_at),
        ...(r.status === 'failure' ? { error: r.error } : {}),
      }));
    },
  };
}

/** Points: this service keeps no points ledger, so the view is always one empty page. */
const pointsActivity: AccountView = {
  field: 'pointsActivity',
  ownerOnly: false,
  load: async (ctx, address, req) =>
    emptyPage<ViewDoc>(ctx.keyring, scopeOf('pointsActivity', address, req), req.bookmark),
};

const views: Record<string, AccountView> = {
  signinRequests,
  publicClaimActivity: claimActivity('publicClaimActivity'),
  allClaimActivity: claimActivity('allClaimActivity'),
  ...chainViews,
  pointsActivity,
  // The reference client's name for signinRequests (its brand word, in a body value the client
  // checks before sending): the same view, documents and bookmarks.
  siwbbRequests: signinRequests,
};

export const ACCOUNT_VIEW_TYPES = Object.keys(views) as Array<
  'signinRequests' | 'publicClaimActivity' | 'allClaimActivity' | 'pointsActivity' | 'siwbbRequests' | ChainViewType
>;

/** The view of `viewType`, or a 400 naming it unknown with the known list. */
export function accountView(viewType: string, path: string): AccountView {
  const view = Object.hasOwn(views, viewType) ? views[viewType] : undefined;
  if (view) return view;
  throw badRequest(
    `${path}.viewType must be one of ${ACCOUNT_VIEW_TYPES.join(', ')} (got ${JSON.stringify(viewType)})`,
  );
}
