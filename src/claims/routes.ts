// Claim routes (docs/claims.md). Thin: parse, call the domain function, shape the answer.
// Every route needs the API key (the gate). Sessions (Authorization: Bearer):
//   complete / simulate   a session for the claiming address with completeClaims, only when the
//                         claim has an initiatedBy plugin;
//   create                manageClaims;
//   update / delete       manageClaims, and the caller must be the creator or manager;
//   reads                 none; private params / private state / seed only for the creator or
//                         manager with readPrivateClaimData; status `code` for the claiming
//                         address with completeClaims or the creator / manager with
//                         readPrivateClaimData.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Routes } from '../shared/capability.ts';
import { endUserIp } from '../api-keys/end-user-ip.ts';
import { notFound } from '../shared/errors.ts';
import { errorResponses } from '../shared/schemas.ts';
import { localeFromAcceptLanguage } from '../shared/locale.ts';
import { getSession, requireSession } from '../shared/session.ts';
import {
  attemptClaim,
  attemptStatus,
  listAttempts,
  successOf,
  type AttemptBody as AttemptBodyType,
} from './attempts.ts';
import { createClaims, deleteClaims, updateClaims, type ClaimInput } from './documents.ts';
import { forReads } from '../db/replicas.ts';
import { getClaimDocument, searchClaims } from './read.ts';
import { listRefusals, REFUSALS_PER_CLAIM } from './refusals.ts';
import {
  AttemptBody,
  AttemptIdParams,
  AttemptIdResponse,
  AttemptsQuery,
  AttemptsResponse,
  ClaimAddressParams,
  ClaimParams,
  ClaimQuery,
  ClaimResponse,
  ClaimsResponse,
  CreateBody,
  DeleteBody,
  EmptyResponse,
  FetchBody,
  RefusalsResponse,
  SearchQuery,
  SearchResponse,
  StatusResponse,
  SuccessResponse,
  UpdateBody,
} from './schemas.ts';

const tags = ['claims'];

function instanceList(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
}

export const claims: Routes = {
  register(fastify, ctx) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    for (const [route, complete] of [
      ['complete', true],
      ['simulate', false],
    ] as const) {
      app.post(
        `/api/v0/claims/${route}/:claimId/:address`,
        {
          schema: {
            tags,
            summary: complete
              ? 'Complete a claim: simulate, then queue the attempt (poll the status route)'
              : 'Simulate a claim attempt (instant; writes nothing; the id is 32 zeros)',
            description:
              'Needs a session for the claiming address with completeClaims only when the claim has an initiatedBy plugin. A failing simulation answers 4xx with the plugin error text (400; 401/403 for initiatedBy; 409 for a version mismatch) and queues nothing. Wrong passwords and codes are throttled per address, IP and claim (429 with Retry-After); an API key marked as a trusted backend may name the end user IP in the x-end-user-ip header.',
            params: ClaimAddressParams,
            body: AttemptBody,
            response: { 200: AttemptIdResponse, ...errorResponses(400, 401, 403, 404, 409) },
          },
        },
        async (request) => {
          const { claimId, address } = request.params;
          return attemptClaim(
            ctx,
            claimId,
            address,
            request.body as AttemptBodyType,
            await getSession(request),
            complete,
            { ip: endUserIp(request), locale: localeFromAcceptLanguage(request.headers['accept-language']) },
          );
        },
      );
    }

    const statusSchema = {
      tags,
      summary: 'Status of a claim attempt (success absent while queued)',
      params: AttemptIdParams,
      response: { 200: StatusResponse, ...errorResponses(400, 404) },
    };
    app.get('/api/v0/claims/status/:claimAttemptId', { schema: statusSchema }, async (request) =>
      attemptStatus(ctx, request.params.claimAttemptId, await getSession(request)),
    );
    app.post('/api/v0/claims/status/:claimAttemptId', { schema: statusSchema }, async (request) =>
      attemptStatus(ctx, request.params.claimAttemptId, await getSession(request)),
    );

    app.get(
      '/api/v0/claims/success/:claimId/:address',
      {
        schema: {
          tags,
          summary: 'Successes of an address: claim numbers (indexed claims) or a live check (on-demand claims)',
          params: ClaimAddressParams,
          response: { 200: SuccessResponse, ...errorResponses(400, 404) },
        },
      },
      async (request) => successOf(ctx, request.params.claimId, request.params.address),
    );

    app.get(
      '/api/v0/claims/:claimId/attempts',
      {
        schema: {
          tags,
          summary: 'Resolved attempts of a claim, newest first (failures with includeErrors)',
          params: ClaimParams,
          querystring: AttemptsQuery,
          response: { 200: AttemptsResponse, ...errorResponses(400, 404) },
        },
      },
      async (request) => listAttempts(forReads(ctx), request.params.claimId, request.query),
    );

    app.get(
      '/api/v0/claims/:claimId/refusals',
      {
        schema: {
          tags,
          summary: `Refused tries of a claim, newest first: the last ${REFUSALS_PER_CLAIM} completes its plugins refused (session with readPrivateClaimData; creator or manager)`,
          description:
            'A refused complete queues nothing, so it never appears among the attempts. The service keeps the newest refused tries of each claim: when, who (both address forms), which plugin instance refused and its error text. Refusals by the guess throttle (429) are not logged.',
          params: ClaimParams,
          response: { 200: RefusalsResponse, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) =>
        listRefusals(ctx, request.params.claimId, await requireSession(request, 'readPrivateClaimData')),
    );

    app.get(
      '/api/v0/claim/:claimId',
      {
        schema: {
          tags,
          summary: 'One claim document',
          params: ClaimParams,
          querystring: ClaimQuery,
          response: { 200: ClaimResponse, ...errorResponses(400, 404) },
        },
      },
      async (request) => {
        const q = request.query;
        const claim = await getClaimDocument(forReads(ctx), request.params.claimId, await getSession(request), {
          fetchAllClaimedUsers: q.fetchAllClaimedUsers ?? false,
          fetchPrivateParams: q.fetchPrivateParams ?? false,
          privateStatesToFetch: instanceList(q.privateStatesToFetch),
        });
        if (!claim) throw notFound(`Claim ${request.params.claimId} not found`);
        return { claim };
      },
    );

    app.post(
      '/api/v1/claims/fetch',
      {
        schema: {
          tags,
          summary: 'Several claim documents, in the order asked',
          body: FetchBody,
          response: { 200: ClaimsResponse, ...errorResponses(400, 404) },
        },
      },
      async (request) => {
        const session = await getSession(request);
        const claims = [];
        for (const item of request.body.claimsToFetch) {
          const claim = await getClaimDocument(forReads(ctx), item.claimId, session, {
            fetchAllClaimedUsers: item.fetchAllClaimedUsers ?? false,
            fetchPrivateParams: item.fetchPrivateParams ?? false,
            privateStatesToFetch: item.privateStatesToFetch ?? [],
          });
          if (!claim) throw notFound(`Claim ${item.claimId} not found`);
          claims.push(claim);
        }
        return { claims };
      },
    );

    app.get(
      '/api/v0/claims/search',
      {
        schema: {
          tags,
          summary:
            'Claims whose name matches searchValue, a regular expression (RE2 syntax, case-insensitive, anywhere in the name; at most 256 characters); only showInSearchResults claims',
          querystring: SearchQuery,
          response: { 200: SearchResponse, ...errorResponses(400) },
        },
      },
      async (request) => {
        const page = await searchClaims(
          forReads(ctx),
          request.query.searchValue ?? '',
          request.query.bookmark,
          await getSession(request),
        );
        return { claims: page.docs, bookmark: page.bookmark, hasMore: page.hasMore };
      },
    );

    app.post(
      '/api/v0/claims',
      {
        schema: {
          tags,
          summary: 'Create claims (session with manageClaims)',
          body: CreateBody,
          response: { 200: EmptyResponse, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (request) => {
        const session = await requireSession(request, 'manageClaims');
        await createClaims(ctx, session, request.body.claims as ClaimInput[], request.body.testClaims ?? false);
        return {};
      },
    );

    app.put(
      '/api/v0/claims',
      {
        schema: {
          tags,
          summary: 'Update claims (session with manageClaims; creator or manager); bumps version',
          body: UpdateBody,
          response: { 200: EmptyResponse, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (request) => {
        const session = await requireSession(request, 'manageClaims');
        await updateClaims(ctx, session, request.body.claims as ClaimInput[]);
        return {};
      },
    );

    app.delete(
      '/api/v0/claims',
      {
        schema: {
          tags,
          summary: 'Soft-delete claims (session with manageClaims; creator or manager); attempts stay',
          body: DeleteBody,
          response: { 200: EmptyResponse, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => {
        const session = await requireSession(request, 'manageClaims');
        await deleteClaims(ctx, session, request.body.claimIds);
        return {};
      },
    );
  },
};
