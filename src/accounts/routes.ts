// Account routes: set your username; read accounts with their views. Every route needs the API
// key (the gate). updateAccount needs a session holding manageAccount; reads need no session,
// except for the owner-only views (signinRequests, allClaimActivity). Views read from a read
// replica when one is configured (`forReads`); sessions and usernames are read on the primary.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Routes } from '../shared/capability.ts';
import { badRequest } from '../shared/errors.ts';
import { AddressString, Bookmark, errorResponses } from '../shared/schemas.ts';
import { getSession, requireSession } from '../shared/session.ts';
import { parseAddress } from '../shared/addresses.ts';
import { ACCOUNT_SCOPE, assertOwner, fetchAccounts, updateUsername } from './accounts.ts';
import { accountView, type ViewDoc } from './views.ts';
import { ownerDocsOfPage } from './chain-views.ts';
import { forReads } from '../db/replicas.ts';
import {
  AccountQuery,
  AccountResponse,
  AccountsResponse,
  EmptyResponse,
  UpdateAccountBody,
  UsersBody,
} from './schemas.ts';

const tags = ['accounts'];

export const accounts: Routes = {
  register(fastify, ctx) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.post(
      '/api/v0/user/updateAccount',
      {
        schema: {
          tags,
          summary: `Set or clear (username: '') the signed-in user's username (session with ${ACCOUNT_SCOPE})`,
          body: UpdateAccountBody,
          response: { 200: EmptyResponse, ...errorResponses(400, 401, 403, 409) },
        },
      },
      async (request) => {
        const session = await requireSession(request, ACCOUNT_SCOPE);
        await updateUsername(ctx, session, request.body.username);
        return {};
      },
    );

    app.get(
      '/api/v0/user',
      {
        schema: {
          tags,
          summary: 'One account by address (either form) or username (any letter case)',
          querystring: AccountQuery,
          response: { 200: AccountResponse, ...errorResponses(400, 404) },
        },
      },
      async (request) => {
        const { address, username } = request.query;
        if ((address === undefined) === (username === undefined))
          throw badRequest('querystring must give exactly one of address or username');
        const [account] = await fetchAccounts(
          ctx,
          null,
          [address !== undefined ? { address } : { username }],
          () => 'querystring',
        );
        return { account };
      },
    );

    // ---- one view of one account, on the reference client's per-account paths. Each reads the
    // account view of the same name (same documents, order and bookmarks) and answers one page.
    const AddressParams = Type.Object({ address: AddressString });
    const pageQuery = { bookmark: Type.Optional(Bookmark), oldestFirst: Type.Optional(Type.Boolean()) };
    const Pagination = Type.Object({ bookmark: Type.String(), hasMore: Type.Boolean() });
    const Doc = Type.Object({ _docId: Type.String() }, { additionalProperties: true });
    const perAccount = <Q extends Record<string, any>>(opts: {
      path: string;
      key: string;
      summary: string;
      query: Record<string, any>;
      viewTypeOf: (q: Q) => string;
      /** Reshapes a page's documents for this route (same documents, order and bookmarks). */
      docsOf?: (reads: typeof ctx, q: Q, address: string, docs: ViewDoc[]) => Promise<ViewDoc[]>;
    }) =>
      app.get(
        `/api/v0/account/:address/${opts.path}`,
        {
          schema: {
            tags,
            summary: opts.summary,
            params: AddressParams,
            querystring: Type.Object({ ...pageQuery, ...opts.query }, { additionalProperties: false }),
            response: {
              200: Type.Object({ [opts.key]: Type.Array(Doc), pagination: Pagination }),
              ...errorResponses(400, 401, 403),
            },
          },
        },
        async (request) => {
          const address = parseAddress(request.params.address, 'address').platformAddress;
          const query = request.query as Q & { bookmark?: string; oldestFirst?: boolean };
          const viewType = opts.viewTypeOf(query);
          const view = accountView(viewType, 'querystring');
          if (view.ownerOnly) assertOwner(await getSession(request), address, viewType, 'querystring');
          const reads = forReads(ctx);
          const page = await view.load(reads, address, {
            bookmark: query.bookmark ?? '',
            oldestFirst: query.oldestFirst ?? false,
          });
          const docs = opts.docsOf ? await opts.docsOf(reads, query, address, page.docs) : page.docs;
          return { [opts.key]: docs, pagination: { bookmark: page.bookmark, hasMore: page.hasMore } };
        },
      );
    perAccount<{ viewType?: 'public' | 'all' }>({
      path: 'activity/claims',
      key: 'activity',
      summary:
        'Claim activity of an account (publicClaimActivity; viewType=all: allClaimActivity, the account itself only)',
      query: { viewType: Type.Optional(Type.Union([Type.Literal('public'), Type.Literal('all')])) },
      viewTypeOf: (q) => (q.viewType === 'all' ? 'allClaimActivity' : 'publicClaimActivity'),
    });
    perAccount({
      path: 'activity/badges',
      key: 'activity',
      summary: 'Transfer activity of an account (the transferActivity view)',
      query: {},
      viewTypeOf: () => 'transferActivity',
    });
    perAccount<{ viewType?: 'collected' | 'created' | 'managing' }>({
      path: 'badges',
      key: 'tokens',
      summary:
        "Tokens of an account as owner documents: collected (the default; the tokensCollected view), created or managing (the account's owner document in each collection of the createdTokens / managingTokens view, in its order)",
      query: {
        viewType: Type.Optional(
          Type.Union([Type.Literal('collected'), Type.Literal('created'), Type.Literal('managing')]),
        ),
      },
      viewTypeOf: (q) =>
        q.viewType === 'created' ? 'createdTokens' : q.viewType === 'managing' ? 'managingTokens' : 'tokensCollected',
      docsOf: async (reads, q, address, docs) =>
        q.viewType === 'created' || q.viewType === 'managing' ? ownerDocsOfPage(reads, address, docs) : docs,
    });
    perAccount({
      path: 'activity/points',
      key: 'activity',
      summary: 'Points activity of an account (the pointsActivity view): always one empty page, no points ledger here',
      query: {},
      viewTypeOf: () => 'pointsActivity',
    });
    perAccount({
      path: 'requests/signin',
      key: 'requests',
      summary: 'Sign-ins of an account to apps (the signinRequests view; the account itself only)',
      query: {},
      viewTypeOf: () => 'signinRequests',
    });

    app.post(
      '/api/v0/users',
      {
        schema: {
          tags,
          summary: 'Accounts with pages of their views, in the order asked',
          description:
            'signinRequests and allClaimActivity are visible only to the account itself: 401 without a session, 403 for another user or a session without manageAccount. pointsActivity is always an empty page (no points ledger here).',
          body: UsersBody,
          response: { 200: AccountsResponse, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => ({
        accounts: await fetchAccounts(ctx, await getSession(request), request.body.accountsToFetch),
      }),
    );
  },
};
