// Dynamic store routes, on the reference SDK's paths and bodies. Thin: parse, call the domain
// function, shape the answer. Every route also needs the API key (the gate).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import type { Routes } from '../shared/capability.ts';
import { errorResponses } from '../shared/schemas.ts';
import { getSession, requireSession, type Session } from '../shared/session.ts';
import {
  applyActions,
  createStore,
  deleteStore,
  fetchStores,
  getStore,
  listActivity,
  listMembers,
  lookupMember,
  normalizeActions,
  searchStores,
  STORE_SCOPE,
  updateStore,
  type Caller,
  type StoreAction,
  type StoreDoc,
} from './domain.ts';
import {
  ActivityDocSchema,
  ActivityQuery,
  BatchActionBody,
  CreateBody,
  DeleteBody,
  FetchBody,
  IdParams,
  KeyParams,
  LookupValue,
  Pagination,
  SearchQuery,
  SecretQuery,
  SingleActionBody,
  StoreDocSchema,
  UpdateBody,
  ValueQuery,
  ValuesQuery,
} from './schemas.ts';

const tags = ['dynamic stores'];
const DocResponse = Type.Object({ doc: StoreDocSchema });
const Empty = Type.Object({}, { additionalProperties: false });

/** The store an action names, with its secret and simulation flag (both action bodies). */
interface ActionTarget {
  dynamicDataId: string;
  dataSecret?: string;
  _isSimulation?: boolean;
}

async function caller(request: FastifyRequest, dataSecret: string | undefined): Promise<Caller> {
  return { session: await getSession(request), ...(dataSecret !== undefined ? { dataSecret } : {}) };
}

export const dynamicStores: Routes = {
  register(fastify, ctx) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    // Create and update: the signed-in owner's write, answered with the stored document.
    const docWrite = <B extends TSchema>(summary: string, body: B, errors: number[]) => ({
      tags,
      summary,
      body,
      response: { 200: DocResponse, ...errorResponses(...errors) },
    });
    const asOwner =
      <B>(write: (c: typeof ctx, session: Session, body: B) => Promise<StoreDoc>) =>
      async (request: FastifyRequest & { body: B }) => ({
        doc: await write(ctx, await requireSession(request, STORE_SCOPE), request.body),
      });
    app.post(
      '/api/v0/dynamicStores',
      { schema: docWrite('Create a dynamic store', CreateBody, [400, 401, 403]) },
      asOwner(createStore),
    );
    app.put(
      '/api/v0/dynamicStores',
      {
        schema: docWrite(
          'Update a dynamic store (label, publicUseInClaims, rotate the secret)',
          UpdateBody,
          [400, 401, 403, 404],
        ),
      },
      asOwner(updateStore),
    );

    app.delete(
      '/api/v0/dynamicStores',
      {
        schema: {
          tags,
          summary: 'Delete a dynamic store, its members and its history',
          body: DeleteBody,
          response: { 200: Type.Object({ message: Type.String() }), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => {
        const session = await requireSession(request, STORE_SCOPE);
        await deleteStore(ctx, session, request.body.dynamicDataId);
        return { message: `Dynamic store ${request.body.dynamicDataId} deleted` };
      },
    );

    app.post(
      '/api/v0/dynamicStores/fetch',
      {
        schema: {
          tags,
          summary: 'Fetch stores by id (null for unknown or unreadable ones)',
          body: FetchBody,
          response: {
            200: Type.Object({ docs: Type.Array(Type.Union([StoreDocSchema, Type.Null()])), pagination: Pagination }),
            ...errorResponses(400),
          },
        },
      },
      async (request) => {
        const docs = await fetchStores(
          ctx,
          request.body.dynamicDataIds,
          await caller(request, request.body.dataSecret),
        );
        return { docs, pagination: { bookmark: '', hasMore: false } };
      },
    );

    app.get(
      '/api/v0/dynamicStores/search',
      {
        schema: {
          tags,
          summary: "The signed-in user's stores (created or managed), newest first",
          querystring: SearchQuery,
          response: {
            200: Type.Object({
              docs: Type.Array(StoreDocSchema),
              bookmark: Type.String(),
              hasMore: Type.Boolean(),
              pagination: Pagination,
            }),
            ...errorResponses(400, 401, 403),
          },
        },
      },
      async (request) => {
        const session = await requireSession(request, STORE_SCOPE);
        const page = await searchStores(ctx, session, request.query);
        return { ...page, pagination: { bookmark: page.bookmark, hasMore: page.hasMore } };
      },
    );

    app.get(
      '/api/v0/dynamicStores/activity',
      {
        schema: {
          tags,
          summary: 'Applied actions of a store, newest first',
          querystring: ActivityQuery,
          response: {
            200: Type.Object({
              pending: Type.Array(Type.Object({})),
              history: Type.Object({ docs: Type.Array(ActivityDocSchema), pagination: Pagination }),
              bookmark: Type.String(),
              hasMore: Type.Boolean(),
            }),
            ...errorResponses(400, 401, 403, 404),
          },
        },
      },
      async (request) => {
        const q = request.query;
        const page = await listActivity(ctx, q.dynamicDataId, q.bookmark, await caller(request, q.dataSecret));
        // Actions apply synchronously, so nothing is ever pending.
        return {
          pending: [],
          history: { docs: page.docs, pagination: { bookmark: page.bookmark, hasMore: page.hasMore } },
          bookmark: page.bookmark,
          hasMore: page.hasMore,
        };
      },
    );

    app.get(
      '/api/v0/dynamicStore/:id',
      {
        schema: {
          tags,
          summary: 'Fetch one store',
          params: IdParams,
          querystring: SecretQuery,
          response: { 200: DocResponse, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => ({
        doc: await getStore(ctx, request.params.id, await caller(request, request.query.dataSecret)),
      }),
    );

    // GET …/value?key= and its older path form …/{key} (below) answer the same
    const ValueResponse = Type.Object({ key: Type.String(), inStore: Type.Boolean() });
    const valueSchema = <P extends TSchema, Q extends TSchema>(summary: string, params: P, querystring: Q) => ({
      tags,
      summary,
      params,
      querystring,
      response: { 200: ValueResponse, ...errorResponses(400, 401, 403, 404) },
    });
    const member = async (request: FastifyRequest, id: string, key: string, dataSecret: string | undefined) =>
      lookupMember(ctx, id, key, await caller(request, dataSecret));
    app.get(
      '/api/v0/dynamicStore/:id/value',
      { schema: valueSchema('Whether one address is in the store', IdParams, ValueQuery) },
      async (request) => member(request, request.params.id, request.query.key, request.query.dataSecret),
    );

    app.get(
      '/api/v0/dynamicStore/:id/values',
      {
        schema: {
          tags,
          summary: 'The members of a store, in address order',
          params: IdParams,
          querystring: ValuesQuery,
          response: {
            200: Type.Object({
              lookupValues: Type.Array(LookupValue),
              bookmark: Type.String(),
              hasMore: Type.Boolean(),
              pagination: Pagination,
            }),
            ...errorResponses(400, 401, 403, 404),
          },
        },
      },
      async (request) => {
        const page = await listMembers(
          ctx,
          request.params.id,
          request.query.bookmark,
          await caller(request, request.query.dataSecret),
        );
        return {
          lookupValues: page.docs,
          bookmark: page.bookmark,
          hasMore: page.hasMore,
          pagination: { bookmark: page.bookmark, hasMore: page.hasMore },
        };
      },
    );

    // The SDK's older path form: /dynamicStore/{id}/{key} (static /value and /values win).
    app.get(
      '/api/v0/dynamicStore/:id/:key',
      { schema: valueSchema('Alias of /value?key=', KeyParams, SecretQuery) },
      async (request) => member(request, request.params.id, request.params.key, request.query.dataSecret),
    );

    // Single and batch actions: the same all-or-nothing apply, from one action or a list of them.
    const actionSchema = <B extends TSchema>(summary: string, body: B) => ({
      tags,
      summary,
      body,
      response: { 200: Empty, ...errorResponses(400, 401, 403, 404) },
    });
    const apply = async (request: FastifyRequest, b: ActionTarget, actions: StoreAction[]) => {
      await applyActions(
        ctx,
        {
          dynamicDataId: b.dynamicDataId,
          ...(b.dataSecret !== undefined ? { dataSecret: b.dataSecret } : {}),
          actions,
          isSimulation: b._isSimulation === true,
        },
        await getSession(request),
      );
      return {};
    };
    app.post(
      '/api/v0/storeActions/single',
      { schema: actionSchema('Add or remove one address', SingleActionBody) },
      async (request) => {
        const b = request.body;
        return apply(
          request,
          b,
          normalizeActions([{ actionName: b.actionName, payload: b.payload }], () => 'body'),
        );
      },
    );
    app.post(
      '/api/v0/storeActions/batch',
      { schema: actionSchema('Apply add/remove actions as one all-or-nothing unit', BatchActionBody) },
      async (request) =>
        apply(
          request,
          request.body,
          normalizeActions(request.body.actions, (i) => `actions[${i}]`),
        ),
    );
  },
};
