// Route validators and response serializers. Each is compiled on its route's first use, not when
// the route is registered: a process pays only for the routes it serves (a test file uses a few of
// ~200; compiling them all was most of an app build), and a production server's first request on a
// route pays that route's compile (a few milliseconds, once; docs/operations.md). Once compiled, a
// function is found again by its schema object, or else by the schema's JSON (routes build some
// schemas inline, such as their error responses' `$ref`s): what compiles is only what JSON can say.
// The test suite builds hundreds of apps, each process compiles each schema once.
import { SerializerSelector, type SerializerFactory, type Serializer } from '@fastify/fast-json-stringify-compiler';
import { Ajv } from 'ajv';
import type { FastifyServerOptions } from 'fastify';
import addFormats from 'ajv-formats';

function makeAjv(coerce: boolean, checkSchemas: boolean): Ajv {
  // Unknown fields are refused, not silently dropped; body types are never coerced
  // ("1" is not a number), while path and query strings are (they are always strings).
  const ajv = new Ajv({
    allErrors: false,
    removeAdditional: false,
    useDefaults: true,
    coerceTypes: coerce ? 'array' : false,
    strict: false,
    // Checking each schema against the JSON Schema meta-schema first compiles the meta-schema
    // (~50 ms per Ajv). Route schemas are code: compiled at start (compileSchemas: 'atStart', as a
    // test does for every route) they are checked; compiled on first use they are not.
    validateSchema: checkSchemas,
  });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

/** Compiled functions by schema object, then by the schema's JSON. */
class Compiled<F> {
  private readonly byObject = new WeakMap<object, F>();
  private readonly byJson = new Map<string, F>();
  get(schema: object, compile: () => F): F {
    let fn = this.byObject.get(schema);
    if (fn) return fn;
    const json = JSON.stringify(schema);
    fn = this.byJson.get(json);
    if (!fn) this.byJson.set(json, (fn = compile()));
    this.byObject.set(schema, fn);
    return fn;
  }
}

type Validate = ReturnType<Ajv['compile']>;
type Compilers = { ajv: Ajv; compiled: Compiled<Validate> };
/** The Ajv instances and their compiled functions, made on first need: [checked][body]. */
const compilers: (Compilers | undefined)[][] = [[], []];

type ValidatorRoute = { schema: object; httpPart?: string };

function compileNow({ schema, httpPart }: ValidatorRoute, checkSchemas = true): Validate {
  const body = httpPart === 'body';
  const c = (compilers[+checkSchemas][+body] ??= { ajv: makeAjv(!body, checkSchemas), compiled: new Compiled() });
  return c.compiled.get(schema, () => {
    const validate = c.ajv.compile(schema);
    // Ajv's own cache would hold every inline schema object for ever; ours keeps one per JSON
    c.ajv.removeSchema(schema);
    return validate;
  });
}

/** Fastify's validator compiler: bodies strictly typed, path and query strings coerced. Compiles on first use. */
function compileValidator(route: ValidatorRoute): Validate {
  return lazyValidator(() => compileNow(route, false));
}

/** The same, compiled (and checked against the meta-schema) when the route is registered: a schema that cannot compile fails the start. */
const compileValidatorAtStart = (route: ValidatorRoute): Validate => compileNow(route, true);

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type ValidatorFactory = NonNullable<CompilersFactory['buildValidator']>;
// Fastify's validator factories (every context gets our compiler, whatever schemas it adds: ours
// ignore the shared ones, which only responses `$ref`); its type is Ajv-pool shaped, hence the cast.
export const buildValidator = (() => compileValidator) as unknown as ValidatorFactory;
export const buildValidatorAtStart = (() => compileValidatorAtStart) as unknown as ValidatorFactory;

/**
 * A validator that compiles on its first call and then hands every call to the compiled function.
 * Fastify reads a validator's `schemaEnv` before calling it (to pass Ajv the request as the value's
 * parent, so defaults and coercions land) and its `errors` after a failure: both are the compiled
 * function's, so requests are validated, coerced and refused exactly as by the compiled function.
 */
function lazyValidator(compile: () => Validate): Validate {
  let compiled: Validate | undefined;
  const real = () => (compiled ??= compile());
  const validate = function (this: unknown, ...args: Parameters<Validate>) {
    return real().apply(this, args);
  } as Validate;
  Object.defineProperties(validate, {
    schemaEnv: { get: () => real().schemaEnv },
    schema: { get: () => real().schema },
    errors: {
      get: () => compiled?.errors,
      set: (errors: Validate['errors']) => {
        real().errors = errors;
      },
    },
  });
  return validate;
}

const serializers = new Map<string, Compiled<Serializer>>();
const defaultSerializers = SerializerSelector();

/**
 * Fastify's serializer factory, with fast-json-stringify's compiled functions kept per set of
 * shared schemas (by their ids: the app adds the same ones every time) and per route schema.
 */
export const buildSerializer: SerializerFactory = (externalSchemas, options) =>
  serializerFactory(externalSchemas, options, true);

/** The same, compiled when the route is registered (a schema that cannot compile fails the start). */
export const buildSerializerAtStart: SerializerFactory = (externalSchemas, options) =>
  serializerFactory(externalSchemas, options, false);

function serializerFactory(
  externalSchemas: Parameters<SerializerFactory>[0],
  options: Parameters<SerializerFactory>[1],
  lazy: boolean,
): ReturnType<SerializerFactory> {
  const compile = defaultSerializers(externalSchemas, options);
  const key = Object.keys((externalSchemas as Record<string, unknown> | undefined) ?? {})
    .sort()
    .join('\n');
  let byRoute = serializers.get(key);
  if (!byRoute) serializers.set(key, (byRoute = new Compiled()));
  const cache = byRoute;
  return (route) => {
    const schema = route.schema;
    if (schema === null || typeof schema !== 'object') return compile(route);
    if (!lazy) return cache.get(schema, () => compile(route));
    // compiled on the first reply that uses it
    let serialize: Serializer | undefined;
    return (data) => (serialize ??= cache.get(schema, () => compile(route)))(data);
  };
}
