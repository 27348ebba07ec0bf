// Route validators and response serializers, compiled once per process. A compiled function is
// found again by its schema object, or else by the schema's JSON (routes build some schemas
// inline, such as their error responses' `$ref`s): what compiles is only what JSON can say. A
// production process builds one app and gains nothing; the test suite builds hundreds, and
// compiling (Ajv, fast-json-stringify) was ~600 ms of every app build.
import { SerializerSelector, type SerializerFactory, type Serializer } from '@fastify/fast-json-stringify-compiler';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

function makeAjv(coerce: boolean): Ajv {
  // Unknown fields are refused, not silently dropped; body types are never coerced
  // ("1" is not a number), while path and query strings are (they are always strings).
  const ajv = new Ajv({
    allErrors: false,
    removeAdditional: false,
    useDefaults: true,
    coerceTypes: coerce ? 'array' : false,
    strict: false,
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
const bodies = { ajv: makeAjv(false), compiled: new Compiled<Validate>() };
const strings = { ajv: makeAjv(true), compiled: new Compiled<Validate>() };

/** Fastify's validator compiler: bodies strictly typed, path and query strings coerced. */
export function compileValidator({ schema, httpPart }: { schema: object; httpPart?: string }): Validate {
  const c = httpPart === 'body' ? bodies : strings;
  return c.compiled.get(schema, () => {
    const validate = c.ajv.compile(schema);
    // Ajv's own cache would hold every inline schema object for ever; ours keeps one per JSON
    c.ajv.removeSchema(schema);
    return validate;
  });
}

const serializers = new Map<string, Compiled<Serializer>>();
const defaultSerializers = SerializerSelector();

/**
 * Fastify's serializer factory, with fast-json-stringify's compiled functions kept per set of
 * shared schemas (by their ids: the app adds the same ones every time) and per route schema.
 */
export const buildSerializer: SerializerFactory = (externalSchemas, options) => {
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
    return cache.get(schema, () => compile(route));
  };
};
