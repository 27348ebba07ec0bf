// Builds the HTTP application: one Fastify instance, one error model, one validator setup,
// the OpenAPI document, the API-key gate, then each capability's routes.
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ErrorObject } from 'ajv';
import { registerAccessTable, registerApiKeyGate } from './api-keys/gate.ts';
import { registerMetrics } from './ops/metrics.ts';
import { capabilities, loadLoops } from './capabilities.ts';
import type { AppContext } from './context.ts';
import { ApiError, type ErrorBody } from './shared/errors.ts';
import { clientRequestId, installInputRules, routerErrorHandler, validationMessage } from './shared/http-input.ts';
import { MAX_PATH_PARAM_LENGTH } from './shared/schemas.ts';
import { startLoops } from './worker/runtime.ts';
import { isDatabaseUnavailable } from './db/index.ts';
import { ErrorResponse } from './shared/schemas.ts';
import {
  buildSerializer,
  buildSerializerAtStart,
  buildValidator,
  buildValidatorAtStart,
} from './shared/schema-compilers.ts';

export type App = FastifyInstance;

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
  }
}

function describe(e: ErrorObject, part: string): string {
  const where = `${part}${e.instancePath.replace(/\//g, '.')}`;
  if (e.keyword === 'additionalProperties')
    return `${where} has unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`;
  if (e.keyword === 'required')
    return `${where} is missing required field "${(e.params as { missingProperty: string }).missingProperty}"`;
  return `${where} ${e.message ?? 'is invalid'}`;
}

export interface BuildOptions extends Pick<FastifyServerOptions, 'forceCloseConnections'> {
  /** Extra routes registered after the capabilities (tests probe the shared machinery with these). */
  extend?: (app: App) => unknown;
  /**
   * When route validators and serializers compile: on a route's first use (the default, in
   * production too: a process pays only for the routes it serves), or all at start, so that a
   * schema that cannot compile fails the start (a test builds the app so; docs/design.md).
   */
  compileSchemas?: 'onFirstUse' | 'atStart';
}

export async function buildApp(
  ctx: AppContext,
  { extend, compileSchemas = 'onFirstUse', ...opts }: BuildOptions = {},
): Promise<App> {
  // Request ids: a random per-process prefix and a counter, unique across processes and cheaper
  // than a UUID per request. With logging off Fastify gets no logger at all, so it creates no
  // per-request child logger (measured: ~8 µs of a ~35 µs request); ctx.log still exists.
  const idPrefix = randomBytes(6).toString('base64url');
  let idCounter = 0;
  let apiKeyGate: ReturnType<typeof registerApiKeyGate> | undefined;
  const { requestTimeoutMs } = ctx.config;
  const app = Fastify({
    ...(ctx.config.logLevel === 'silent' ? {} : { loggerInstance: ctx.log }),
    bodyLimit: ctx.config.bodyLimit,
    // a client's x-request-id is kept only when short and safe to log (http-input.ts)
    genReqId: (req) => clientRequestId(req.headers['x-request-id']) ?? `${idPrefix}-${(++idCounter).toString(36)}`,
    // A request (headers and body) must arrive within REQUEST_TIMEOUT_MS, its headers within 10 s:
    // slow senders cannot hold sockets open. Node checks these every second (default: 30 s).
    requestTimeout: requestTimeoutMs,
    // behind a reverse proxy, the client IP of the per-IP limits comes from X-Forwarded-For
    trustProxy: ctx.config.trustProxy,
    http: {
      headersTimeout: Math.min(requestTimeoutMs, 10_000),
      connectionsCheckingInterval: Math.min(requestTimeoutMs, 1000),
    },
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    frameworkErrors: routerErrorHandler(() => apiKeyGate),
    // Our compilers, compiled on a route's first use, once per process (shared/schema-compilers.ts).
    // In the factory, not only app.setValidatorCompiler: a plugin context that adds schemas (the
    // console's) otherwise rebuilt Fastify's default Ajv, which dropped unknown body fields.
    schemaController: {
      compilersFactory:
        compileSchemas === 'atStart'
          ? { buildValidator: buildValidatorAtStart, buildSerializer: buildSerializerAtStart }
          : { buildValidator, buildSerializer },
    },
    // while draining, requests on connections still open get our 503 (below), not Fastify's shape
    return503OnClosing: false,
    // each capability's routes are a plugin (below) that may prepare its services first (the
    // id_token key, the swap pools); on a loaded machine that outlasted avvio's 10 s default, which
    // nothing imposed before the routes were plugins: a start waits for them as it always did
    pluginTimeout: 0,
    ...opts,
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  app.decorate('ctx', ctx);
  // before any route: every route must be in the access table (src/shared/access.ts), or the start fails
  const accessTable = registerAccessTable(app);
  // first, so that every route registered below gets its metrics hook (ops/metrics.ts; off unless configured)
  const timeOutsideRoutes = await registerMetrics(app, ctx);

  app.setSchemaErrorFormatter((errors, dataVar) => {
    const err = new Error(errors.map((e) => describe(e as ErrorObject, dataVar)).join('; ')) as FastifyError;
    err.statusCode = 400;
    return err;
  });

  // Echo the request id (generated, or the caller's x-request-id) so logs and clients correlate.
  // Once close() has begun (SIGTERM), a request arriving on a connection still open (one busy with
  // an in-flight request) is refused with Retry-After, so a load balancer sends it elsewhere.
  let draining = false;
  app.addHook('preClose', (done) => {
    draining = true;
    done();
  });
  // Unknown paths under /api/ pass the API-key gate before anything else, as every known /api/
  // route does: a caller without a key learns nothing about routes; with metrics on, their requests
  // are timed as `unmatched`. One app-wide onRequest hook does all of it (each hook costs every request a step of Fastify's hook runner).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // known routes start their metrics timing in hooks of their own, which run after this one (ops/metrics.ts)
    if (timeOutsideRoutes !== undefined && (request.is404 || draining)) timeOutsideRoutes(request, reply);
    if (draining) {
      reply
        .code(503)
        .headers({ 'retry-after': '1', connection: 'close' })
        .send({ errorMessage: 'The service is shutting down; retry shortly' });
      return;
    }
    if (request.is404 && apiKeyGate !== undefined && request.url.startsWith('/api/'))
      return apiKeyGate(request, reply, done);
    done();
  });

  app.setErrorHandler((err: FastifyError | ApiError, request, reply) => {
    const answer = (status: number, body: ErrorBody, headers: Record<string, string> = {}) => {
      // RFC 6749 §5.2: the OAuth endpoints (the routes taking form bodies) answer every client
      // error with `error`, also when the body never reached them (malformed, wrong content type)
      const oauth = status < 500 && body.error === undefined && request.routeOptions.config?.formBody;
      return reply
        .code(status)
        .headers(headers)
        .send(oauth ? { error: 'invalid_request', error_description: body.errorMessage, ...body } : body);
    };
    if (err instanceof ApiError) return answer(err.statusCode, err.body, err.headers);
    const status = err.statusCode ?? 500;
    if (err.validation) return answer(400, { errorMessage: validationMessage(request, err) });
    if (status >= 400 && status < 500) {
      // Fastify's own client errors: malformed JSON, wrong content type, oversized body, ...
      const messages: Record<string, string> = {
        FST_ERR_CTP_INVALID_JSON_BODY: 'Malformed JSON in request body',
        FST_ERR_CTP_BODY_TOO_LARGE: `Request body is larger than the limit of ${ctx.config.bodyLimit} bytes`,
        FST_ERR_CTP_INVALID_MEDIA_TYPE:
          'Unsupported content type: send the body as JSON with content-type: application/json',
      };
      const message =
        messages[err.code] ?? (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? 'Malformed JSON' : err.message);
      return answer(status, { errorMessage: message });
    }
    // PostgreSQL refuses U+0000 in text (22021) and in jsonb (22P05) where SQLite stores it: that
    // is the caller's input, not a fault.
    const pgCode = (err as { code?: unknown }).code;
    if (pgCode === '22021' || pgCode === '22P05')
      return answer(400, { errorMessage: 'Text must not contain the NUL character (U+0000)' });
    if (isDatabaseUnavailable(err)) {
      request.log.warn({ err: err.message }, 'database unavailable');
      return answer(
        503,
        { errorMessage: 'The database is unavailable right now; retry shortly' },
        { 'retry-after': '1' },
      );
    }
    request.log.error({ err }, 'unhandled error');
    return answer(500, { errorMessage: 'Internal server error' });
  });

  // JSON everywhere; form bodies only on routes with config.formBody (the OAuth token endpoints).
  // Anything else is a 415 (http-input.ts).
  await app.register(formbody);
  app.addSchema(ErrorResponse);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'platform',
        version: '0.1.0',
        description: 'Wallet sign-in, claims, dynamic stores, merkle codes and swap estimation.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          bearer: { type: 'http', scheme: 'bearer' },
          consoleSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'platform_console',
            description:
              'The web console session (same-origin browser calls; non-GET calls also send x-csrf-token). See docs/portal.md.',
          },
        },
      },
      security: [{ apiKey: [] }],
    },
    // a route that names no answer description gets the meaning of its status code, not "Default Response"
    transformObject: (document) =>
      'openapiObject' in document ? describeStatuses(document.openapiObject) : document.swaggerObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  apiKeyGate = registerApiKeyGate(app, ctx);
  installInputRules(app);
  app.decorateRequest('sessionPromise', undefined);
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send({ errorMessage: `Route not found: ${request.method} ${request.url.split('?')[0].slice(0, 200)}` });
  });
  for (const capability of capabilities) await capability.init?.(ctx);
  // each capability's routes in their own encapsulated plugin: a hook or decoration one adds stays
  // inside it, while the server's own above (gate, error handler, access table) reach every route
  for (const capability of capabilities) {
    const routes = await capability.routes?.();
    if (routes) await app.register(async (scope) => routes.register(scope, ctx));
  }
  // the probes that tests add are no routes of the service: they need no entry
  accessTable.allowUndeclared();
  await extend?.(app);
  await app.ready();
  releaseOnFailedListen(app, ctx);
  // serve runs the background loops in-process unless RUN_WORKER=false (then `platform worker` runs them)
  if (ctx.config.runWorker) await startLoops(ctx, await loadLoops());
  return app;
}

/**
 * A listen that fails (port in use, no permission) closes the app and its context (database,
 * background loops) before the error reaches the caller, so `serve` exits with the error instead
 * of living on without a listener, whoever calls listen.
 */
function releaseOnFailedListen(app: App, ctx: AppContext): void {
  const listen = app.listen.bind(app) as (opts: object) => Promise<string>;
  app.listen = (async (opts: object) => {
    try {
      return await listen(opts);
    } catch (err) {
      await app.close().catch(() => undefined);
      await ctx.close().catch(() => undefined);
      throw err;
    }
  }) as unknown as App['listen'];
}

/** What each status code means across the API, for answers whose route gives no description of its own. */
const STATUS_MEANINGS: Record<string, string> = {
  '200': 'Success',
  '302': 'A redirect (Location names where)',
  '400': 'The request is invalid: errorMessage names the field or the rule',
  '401': 'Missing, unknown or revoked credentials (API key, bearer token or console session)',
  '403': 'The credentials are valid but may not do this (scope, owner, CSRF token or origin)',
  '404': 'No such resource (or one the caller may not see)',
  '409': 'A conflict with the current state: a stale version, a taken name or id, a state that forbids it',
  '413': 'The request body is larger than BODY_LIMIT',
  '415': 'The content type is not JSON (or form data where the route takes it)',
  '424': 'A service this call depends on failed (a chain or an RPC endpoint): errorMessage names it',
  '429': 'Too many requests: retry after the Retry-After header',
  '502': 'An upstream service answered badly or not in time',
  '503': 'The database cannot be reached (or the service is shutting down): retry after Retry-After',
};

function describeStatuses<T>(openapi: T): T {
  const paths = (openapi as { paths?: Record<string, Record<string, { responses?: Record<string, any> }>> }).paths;
  for (const item of Object.values(paths ?? {}))
    for (const operation of Object.values(item))
      for (const [status, response] of Object.entries(operation?.responses ?? {}))
        if (response && response.description === 'Default Response' && STATUS_MEANINGS[status])
          response.description = STATUS_MEANINGS[status];
  return openapi;
}
