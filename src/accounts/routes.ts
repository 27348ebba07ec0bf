// Account routes: set your username; read accounts with their views. Every route needs the API
// key (the gate). updateAccount needs a session holding manageAccount; reads need no session,
// except for the owner-only views (signinRequests, allClaimActivity).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Capability } from '../capabilities.ts';
import { badRequest } from '../shared/errors.ts';
import { errorResponses } from '../shared/schemas.ts';
import { getSession, requireSession } from '../shared/session.ts';
import { ACCOUNT_SCOPE, fetchAccounts, updateUsername } from './accounts.ts';
import { AccountQuery, AccountResponse, AccountsResponse, EmptyResponse, UpdateAccountBody, UsersBody } from './schemas.ts';

const tags = ['accounts'];
const optionalSession: Array<Record<string, string[]>> = [{ apiKey: [] }, { apiKey: [], bearer: [] }];

export const accounts: Capability = {
  name: 'accounts',
  register(fastify, ctx) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.post(
      '/api/v0/user/updateAccount',
      {
        schema: {
          tags,
          summary: `Set or clear (username: '') the signed-in user's username (session with ${ACCOUNT_SCOPE})`,
          security: [{ apiKey: [], bearer: [] }],
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
        if ((address === undefined) === (username === undefined)) throw badRequest('querystring must give exactly one of address or username');
        const [account] = await fetchAccounts(ctx, null, [address !== undefined ? { address } : { username }], () => 'querystring');
        return { account };
      },
    );

    app.post(
      '/api/v0/users',
      {
        schema: {
          tags,
          summary: 'Accounts with pages of their views, in the order asked',
          description: 'signinRequests and allClaimActivity are visible only to the account itself: 401 without a session, 403 for another user or a session without manageAccount. pointsActivity is always an empty page (no points ledger here).',
          security: optionalSession,
          body: UsersBody,
          response: { 200: AccountsResponse, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => ({ accounts: await fetchAccounts(ctx, await getSession(request), request.body.accountsToFetch) }),
    );
  },
};
