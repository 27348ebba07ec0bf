// Plugin document routes (docs/plugins-platform.md) on the reference client's paths and bodies. Thin:
// parse, call the domain function, shape the answer. Who may call each route is declared in
// src/shared/access.ts and checked before the handler: create, update, delete and the error log
// need a session holding managePlugins, and so does fetch with returnSensitiveData; the handlers
// check the owner (creator or manager).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Routes } from '../shared/capability.ts';
import { errorResponses } from '../shared/schemas.ts';
import { getSession, requireSession } from '../shared/session.ts';
import {
  createPlugin,
  deletePlugin,
  fetchPlugins,
  getPlugin,
  listPluginErrors,
  PLUGIN_SCOPE,
  renderPlugin,
  searchPlugins,
  updatePlugin,
} from './documents.ts';
import {
  CreateBody,
  DeleteBody,
  ErrorsQuery,
  ErrorsResponse,
  FetchBody,
  IdParams,
  PluginResponse,
  PluginsResponse,
  SearchQuery,
  SearchResponse,
  UpdateBody,
} from './schemas.ts';

const tags = ['plugins'];

export const pluginDocuments: Routes = {
  register(fastify, ctx) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.post(
      '/api/v0/plugins',
      {
        schema: {
          tags,
          summary: 'Create a plugin document with its first version',
          body: CreateBody,
          response: { 200: PluginResponse, ...errorResponses(400, 401, 403, 409) },
        },
      },
      async (request) => {
        const session = await requireSession(request, PLUGIN_SCOPE);
        const plugin = await createPlugin(ctx, session, request.body);
        return { plugin: await renderPlugin(ctx, plugin, session.platformAddress) };
      },
    );

    app.put(
      '/api/v0/plugins',
      {
        schema: {
          tags,
          summary:
            'Update a plugin document: metadata, publishing, approved users, secret rotation, new and edited versions',
          description:
            'Creator or manager only. A finalized version is immutable: a versionUpdates entry for it is a 400.',
          body: UpdateBody,
          response: { 200: PluginResponse, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => {
        const session = await requireSession(request, PLUGIN_SCOPE);
        const plugin = await updatePlugin(ctx, session, request.body);
        return {
          plugin: await renderPlugin(ctx, plugin, session.platformAddress, request.body.rotatePluginSecret === true),
        };
      },
    );

    app.delete(
      '/api/v0/plugins',
      {
        schema: {
          tags,
          summary: 'Soft-delete a plugin document',
          body: DeleteBody,
          response: { 200: Type.Object({}, { additionalProperties: false }), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => {
        const session = await requireSession(request, PLUGIN_SCOPE);
        await deletePlugin(ctx, session, request.body.pluginId);
        return {};
      },
    );

    for (const path of ['/api/v0/plugin/:pluginId', '/api/v0/plugins/:pluginId']) {
      app.get(
        path,
        {
          schema: {
            tags,
            summary: 'Read one plugin document (core plugin ids are not documents)',
            params: IdParams,
            response: { 200: PluginResponse, ...errorResponses(400, 404) },
          },
        },
        async (request) => ({ plugin: await getPlugin(ctx, request.params.pluginId, await getSession(request)) }),
      );
    }

    app.post(
      '/api/v0/plugins/fetch',
      {
        schema: {
          tags,
          summary: 'Fetch plugin documents by id (unknown ids are left out)',
          description:
            'returnSensitiveData: true needs a session holding managePlugins (401 without a session, 403 without the scope) and adds pluginSecret to the documents the session user creates or manages.',
          body: FetchBody,
          response: { 200: PluginsResponse, ...errorResponses(400, 401, 403) },
        },
      },
      async (request) => ({
        plugins: await fetchPlugins(
          ctx,
          request.body.pluginIds,
          request.body.returnSensitiveData === true,
          await getSession(request),
        ),
      }),
    );

    app.get(
      '/api/v0/plugins/search',
      {
        schema: {
          tags,
          summary: 'Search published plugins by name (or list your own with pluginsForSignedInUser)',
          querystring: SearchQuery,
          response: { 200: SearchResponse, ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const { pluginsForSignedInUser, ...q } = request.query;
        let mine: string | undefined;
        // with pluginsForSignedInUser, the access table has required a session
        if (pluginsForSignedInUser) mine = (await requireSession(request)).platformAddress;
        return searchPlugins(ctx, { ...q, ...(mine ? { mine } : {}) });
      },
    );

    app.get(
      '/api/v0/plugins/errors',
      {
        schema: {
          tags,
          summary:
            "Plugin error records, newest first: one plugin's (creator or manager; session holding managePlugins), or without pluginId those of every plugin the caller creates or manages",
          querystring: ErrorsQuery,
          response: { 200: ErrorsResponse, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) =>
        listPluginErrors(
          ctx,
          await requireSession(request, PLUGIN_SCOPE),
          request.query.pluginId,
          request.query.bookmark,
        ),
    );
  },
};
