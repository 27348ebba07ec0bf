// POST /api/v0/eligibility: what one address can claim now, and why not, over many claims.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Routes } from '../shared/capability.ts';
import { ClaimId } from '../claims/schemas.ts';
import { startChangeReader } from './loops.ts';
import { forConsistentReads } from '../db/replicas.ts';
import { getSession } from '../shared/session.ts';
import { AddressString, Bookmark, errorResponses } from '../shared/schemas.ts';
import { MAX_CLAIM_IDS, MAX_PAGE_SIZE, answerEligibility, STATES, type EligibilityQuery } from './answer.ts';

const State = Type.Union([
  Type.Literal('eligible'),
  Type.Literal('afterInput'),
  Type.Literal('notEligible'),
  Type.Literal('claimed'),
  Type.Literal('unknown'),
]);

const Body = Type.Object(
  {
    address: AddressString,
    claimIds: Type.Optional(
      Type.Array(ClaimId, { maxItems: MAX_CLAIM_IDS, description: 'Only these claims (searchable or not)' }),
    ),
    collectionId: Type.Optional(Type.String({ maxLength: 128, description: 'Only claims linked to this collection' })),
    category: Type.Optional(Type.String({ maxLength: 256, description: 'Only claims listing this category' })),
    states: Type.Optional(
      Type.Array(State, {
        maxItems: STATES.length,
        description: 'Only answers in these states (a page may then hold fewer)',
      }),
    ),
    includeOutbound: Type.Optional(
      Type.Boolean({
        description:
          'Also evaluate claims whose check needs an outbound call or a custom plugin (at most 5 per request); otherwise they are "unknown"',
      }),
    ),
    bookmark: Type.Optional(Bookmark),
    pageSize: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, description: 'Answers per page (default 25)' }),
    ),
  },
  { additionalProperties: false },
);

const Doc = Type.Object({
  claimId: Type.String(),
  name: Type.String(),
  state: State,
  inputs: Type.Optional(
    Type.Array(
      Type.Object({
        instanceId: Type.String(),
        pluginId: Type.String(),
        kind: Type.Union([Type.Literal('password'), Type.Literal('code'), Type.Literal('custom')]),
      }),
    ),
  ),
  error: Type.Optional(Type.String()),
  successCount: Type.Optional(Type.Integer()),
  claimNumbers: Type.Optional(Type.Array(Type.Integer())),
  reason: Type.Optional(
    Type.Union([Type.Literal('customPlugin'), Type.Literal('outboundCall'), Type.Literal('privateList')]),
  ),
  message: Type.Optional(Type.String()),
});

const Response = Type.Object({ docs: Type.Array(Doc), bookmark: Type.String(), hasMore: Type.Boolean() });

export const eligibility: Routes = {
  register(fastify, ctx) {
    startChangeReader(ctx);
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/api/v0/eligibility',
      {
        schema: {
          tags: ['Claims'],
          summary: 'What an address can claim now, and why not, claim by claim (paginated)',
          description:
            "Every searchable claim (or the named ones), each in one state: eligible, afterInput (which inputs), notEligible (the first failing requirement, as simulate gives it), claimed (successCount, claimNumbers) or unknown (a custom plugin or an outbound call, decided at claim time; or a private list, revealed only to a session of the address or to the claim's creator or manager).",
          body: Body,
          response: { 200: Response, ...errorResponses(400, 401, 403) },
        },
      },
      // the index and its answers read a replica, never going back in time (docs/scale-out.md#read-replicas)
      async (request) =>
        answerEligibility(forConsistentReads(ctx), request.body as EligibilityQuery, await getSession(request)),
    );
  },
};
