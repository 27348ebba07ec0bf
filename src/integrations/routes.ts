// POST /api/v0/integrations/query/{pluginId}: a hosted plugin answered directly, with the same flat
// body a custom plugin's endpoint receives (docs/plugins-platform.md): the params' keys plus `platformAddress` /
// `ethAddress` and the context fields. It answers like such an endpoint: 200 `{}` to pass, a non-200
// with `{ message }` to fail, so a creator can try a configuration before putting it in a claim.
// Inside claims the service never calls this route: hosted plugins run in-process.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Routes } from '../shared/capability.ts';
import { pluginEnv } from '../claims/plugin-env.ts';
import { REQUEST_KEYS } from '../plugin-documents/validation.ts';
import { DISPLAY_ONLY_PLUGIN_IDS } from '../plugins/displayOnly.ts';
import { HOSTED_PLUGIN_IDS, hostedBaseId } from '../plugins/hosted.ts';
import { findPlugin } from '../plugins/registry.ts';
import { evaluateStandalone } from '../plugins/standalone.ts';
import { tryParseAddress } from '../shared/addresses.ts';
import { ApiError, badRequest, notFound } from '../shared/errors.ts';
import type { JsonObject } from '../shared/json.ts';
import { errorResponses } from '../shared/schemas.ts';

/** Body keys that are context, not params: the request's own fields (docs/plugins-platform.md's reserved keys). */
const CONTEXT_KEYS = new Set(REQUEST_KEYS);

export const integrations: Routes = {
  register(fastify, ctx) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/api/v0/integrations/query/:pluginId',
      {
        schema: {
          tags: ['plugins'],
          summary: "Run a hosted plugin's check directly (the custom-plugin call's flat body); 200 passes",
          params: Type.Object({ pluginId: Type.String({ maxLength: 64 }) }),
          body: Type.Object({}, { additionalProperties: true }),
          response: { 200: Type.Object({}), ...errorResponses(400, 404) },
        },
      },
      async (request) => {
        const base = hostedBaseId(request.params.pluginId);
        const plugin = base ? findPlugin(base) : undefined;
        if (!plugin)
          throw notFound(
            `No hosted plugin "${request.params.pluginId}" (hosted plugins: ${HOSTED_PLUGIN_IDS.join(', ')})`,
          );
        const body = request.body as JsonObject;
        const params: JsonObject = {};
        for (const [k, v] of Object.entries(body)) if (!CONTEXT_KEYS.has(k)) params[k] = v;
        const claimId = typeof body.claimId === 'string' ? body.claimId : '';
        const addressField =
          body.platformAddress !== undefined && body.platformAddress !== null ? 'platformAddress' : 'ethAddress';
        const rawAddress = body[addressField];
        const parsed = rawAddress === undefined || rawAddress === null ? null : tryParseAddress(rawAddress);
        if (rawAddress !== undefined && rawAddress !== null && !parsed)
          throw badRequest(`body.${addressField} is not a valid address: ${JSON.stringify(rawAddress)}`);
        // without one the check would run for '' (and must-own-badges of nothing would pass)
        if (!parsed && !DISPLAY_ONLY_PLUGIN_IDS.has(base!)) {
          throw badRequest(
            `body.platformAddress is required: ${request.params.pluginId} checks an address (give it in either form; ethAddress is also accepted)`,
          );
        }
        // plugins name fields as `<path>.publicParams.x`; here the params are the body itself
        const env = pluginEnv(ctx, ctx.clock.now());
        const validated = await (async () =>
          plugin.validate(
            params,
            {},
            { path: 'body', claimId, creator: parsed?.platformAddress ?? '', ...env },
          ))().catch((err: unknown) => {
          if (err instanceof ApiError)
            throw new ApiError(err.statusCode, err.message.replaceAll('body.publicParams', 'body'));
          throw err;
        });
        const result = await evaluateStandalone(env, plugin, {
          publicParams: validated.publicParams,
          privateParams: validated.privateParams,
          platformAddress: parsed?.platformAddress ?? '',
          claimId,
          instanceId: typeof body.instanceId === 'string' ? body.instanceId : base!,
          locale: typeof body.locale === 'string' ? body.locale : 'en',
        });
        if (!result.success)
          throw badRequest(result.error ?? 'Plugin failed', { message: result.error ?? 'Plugin failed' });
        return {};
      },
    );
  },
};
