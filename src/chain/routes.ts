// Collection routes over the chain read model: the batch `POST /api/v0/collections` (docs/chain-data.md)
// and the SDK-style reads of one collection, each a thin view of the same model. All need the
// API key (the gate). Documents are the chain's JSON: amounts and ranges stay decimal strings.
// Every route here only reads: each reads from a read replica when one is configured (`forReads`).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type TSchema, Type } from 'typebox';
import type { Page } from '../shared/pagination.ts';
import type { Routes } from '../shared/capability.ts';
import type { AppContext } from '../context.ts';
import { forReads } from '../db/replicas.ts';
import { notFound } from '../shared/errors.ts';
import { toCanonical } from '../shared/addresses.ts';
import { verifyOwnershipRequirements } from '../plugins/mustOwnBadges.ts';
import { AddressString, Bookmark, errorResponses } from '../shared/schemas.ts';
import { COLLECTION_VIEWS, fetchCollections, MAX_COLLECTIONS_PER_REQUEST, withViewArrays } from './collections.ts';
import {
  amountTrackersView,
  balancesOfToken,
  challengeTrackersView,
  checkCollectionId,
  checkTokenId,
  collectionActivityView,
  type Doc,
  getBalance,
  getCollection,
  ownersView,
  tokenActivityView,
  tokenOwnersView,
} from './views.ts';

const tags = ['collections'];
const AnyDoc = Type.Object({}, { additionalProperties: true });
const Pagination = Type.Object({ bookmark: Type.String(), hasMore: Type.Boolean() });

const ViewToFetch = Type.Object(
  {
    viewType: Type.String({
      maxLength: 64,
      description:
        'owners, transferActivity, amountTrackers, challengeTrackers, or listings / tokenFloorPrices (always empty pages: no marketplace data here)',
    }),
    viewId: Type.String({ minLength: 1, maxLength: 128, description: 'Client-chosen key of this view in `views`' }),
    bookmark: Bookmark,
    oldestFirst: Type.Optional(Type.Boolean()),
    address: Type.Optional(AddressString),
  },
  { additionalProperties: false },
);

const CollectionsBody = Type.Object(
  {
    collectionsToFetch: Type.Array(
      Type.Object(
        {
          collectionId: Type.String({ maxLength: 20 }),
          viewsToFetch: Type.Optional(Type.Array(ViewToFetch, { maxItems: 25 })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_COLLECTIONS_PER_REQUEST },
    ),
  },
  { additionalProperties: false },
);

const IdParams = Type.Object({ collectionId: Type.String({ maxLength: 20 }) });
const ListQuery = Type.Object(
  {
    bookmark: Type.Optional(Bookmark),
    oldestFirst: Type.Optional(Type.Boolean()),
    address: Type.Optional(AddressString),
  },
  { additionalProperties: false },
);

/** A paged view's route schema: the documents under `key`, then the pagination. */
const listSchema = <P extends TSchema>(summary: string, params: P, key: string) => ({
  tags,
  summary,
  params,
  querystring: ListQuery,
  response: {
    200: Type.Object({ [key]: Type.Array(AnyDoc), pagination: Pagination }),
    ...errorResponses(400, 404),
  },
});
const listAnswer = (key: string, page: Page<Doc>) => ({
  [key]: page.docs,
  pagination: { bookmark: page.bookmark, hasMore: page.hasMore },
});

async function existing(ctx: AppContext, collectionId: string) {
  checkCollectionId(collectionId);
  const doc = await getCollection(ctx, collectionId);
  if (!doc) throw notFound(`Collection ${collectionId} not found (not on chain, or not indexed yet)`);
  return doc;
}

export const collections: Routes = {
  register(fastify, primary) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    // the read model, on a replica within the staleness bound (docs/scale-out.md#read-replicas)
    const ctx = forReads(primary);

    app.post(
      '/api/v0/collections',
      {
        schema: {
          tags,
          summary: 'Fetch collections with pages of their views',
          body: CollectionsBody,
          response: {
            200: Type.Object({ collections: Type.Array(Type.Union([AnyDoc, Type.Null()])) }),
            ...errorResponses(400),
          },
        },
      },
      async (request) => ({ collections: await fetchCollections(ctx, request.body.collectionsToFetch) }),
    );

    app.get(
      '/api/v0/collection/:collectionId',
      {
        schema: {
          tags,
          summary: 'One collection document, with the empty view arrays the reference client maps',
          description: 'metadata is {}: this service does not fetch off-chain metadata (read collectionMetadata.uri).',
          params: IdParams,
          response: { 200: Type.Object({ collection: AnyDoc, metadata: AnyDoc }), ...errorResponses(400, 404) },
        },
      },
      async (request) => ({
        collection: withViewArrays(await existing(ctx, request.params.collectionId)),
        metadata: {},
      }),
    );

    const list = (path: string, key: string, summary: string, view: typeof ownersView) =>
      app.get(
        `/api/v0/collection/:collectionId/${path}`,
        { schema: listSchema(summary, IdParams, key) },
        async (request) => {
          const { collectionId } = request.params;
          await existing(ctx, collectionId);
          const page = await view(ctx, collectionId, request.query);
          return listAnswer(key, page);
        },
      );
    list('owners', 'owners', 'Owners of a collection (owner documents), paged', ownersView);
    list('activity', 'activity', 'Transfer activity of a collection, paged', collectionActivityView);
    list('amountTrackers', 'amountTrackers', 'Approval amount trackers of a collection, paged', amountTrackersView);
    list(
      'challengeTrackers',
      'challengeTrackers',
      'Challenge trackers (used merkle leaves) of a collection, paged',
      challengeTrackersView,
    );
    list(
      'listings',
      'listings',
      'Marketplace listings of a collection: always an empty page (this service holds no marketplace data)',
      COLLECTION_VIEWS.listings.run,
    );

    // ---- one token of a collection: the owners and activity views narrowed to it, and a balance
    const TokenParams = Type.Object({
      collectionId: Type.String({ maxLength: 20 }),
      tokenId: Type.String({ maxLength: 20 }),
    });
    const tokenList = (path: string, key: string, summary: string, view: typeof tokenOwnersView) =>
      app.get(
        `/api/v0/collection/:collectionId/:tokenId/${path}`,
        { schema: listSchema(summary, TokenParams, key) },
        async (request) => {
          const { collectionId } = request.params;
          const tokenId = checkTokenId(request.params.tokenId);
          await existing(ctx, collectionId);
          const page = await view(ctx, collectionId, tokenId, request.query);
          return listAnswer(key, page);
        },
      );
    tokenList(
      'owners',
      'owners',
      'Owners holding some amount of one token (owner documents), paged in the owners view order',
      tokenOwnersView,
    );
    tokenList(
      'activity',
      'activity',
      'Transfer activity that moved one token, paged in the activity view order',
      tokenActivityView,
    );

    app.get(
      '/api/v0/collection/:collectionId/:tokenId/balance/:address',
      {
        schema: {
          tags,
          summary: "An address's balance document in a collection, its balances narrowed to one token",
          params: Type.Object({
            collectionId: Type.String({ maxLength: 20 }),
            tokenId: Type.String({ maxLength: 20 }),
            address: AddressString,
          }),
          response: { 200: AnyDoc, ...errorResponses(400, 404) },
        },
      },
      async (request) => {
        const tokenId = checkTokenId(request.params.tokenId);
        await existing(ctx, request.params.collectionId);
        const balance = await getBalance(ctx, request.params.collectionId, request.params.address);
        if (!balance) throw notFound(`Collection ${request.params.collectionId} not found`);
        return { ...balance, balances: balancesOfToken(balance.balances, tokenId) };
      },
    );

    app.post(
      '/api/v0/verifyOwnershipRequirements',
      {
        schema: {
          tags,
          summary:
            'Whether an address meets ownership requirements: the must-own-badges evaluation, with each top-level group',
          description:
            'Answers 200 either way: success false carries errorMessage (the first failing reason) and groups says which groups pass and why.',
          body: Type.Object(
            {
              address: AddressString,
              assetOwnershipRequirements: Type.Object(
                {},
                {
                  additionalProperties: true,
                  description: 'As must-own-badges ownershipRequirements: $and / $or groups of assets',
                },
              ),
            },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({
              success: Type.Boolean(),
              errorMessage: Type.Optional(Type.String()),
              groups: Type.Array(
                Type.Object({ group: Type.String(), success: Type.Boolean(), error: Type.Optional(Type.String()) }),
              ),
            }),
            ...errorResponses(400),
          },
        },
      },
      async (request) =>
        verifyOwnershipRequirements(
          ctx,
          toCanonical(request.body.address, 'body.address'),
          request.body.assetOwnershipRequirements,
          'body.assetOwnershipRequirements',
        ),
    );

    app.get(
      '/api/v0/collection/:collectionId/balance/:address',
      {
        schema: {
          tags,
          summary: "An address's balance store in a collection (the collection's defaults when never touched)",
          params: Type.Object({ collectionId: Type.String({ maxLength: 20 }), address: AddressString }),
          response: { 200: AnyDoc, ...errorResponses(400, 404) },
        },
      },
      async (request) => {
        await existing(ctx, request.params.collectionId);
        const balance = await getBalance(ctx, request.params.collectionId, request.params.address);
        if (!balance) throw notFound(`Collection ${request.params.collectionId} not found`);
        // the document itself: the reference client reads the answer as the balance document
        return balance;
      },
    );
  },
};
