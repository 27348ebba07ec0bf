// Route validators and response serializers, compiled once per process. The route schemas are
// module-level TypeBox objects, the same objects in every app a process builds, so a compiled
// function is found again by its schema object. A production process builds one app and gains
// nothing; the test suite builds hundreds, and compiling (Ajv, fast-json-stringify) was ~600 ms
// of every app build.
import { SerializerSelector, type SerializerFactory, type Serializer } from '@fastify/fast-json-stringify-compiler';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

function makeAjv(coerce: boolean): Ajv {
  // Unknown fields are refused, not silently dropped; body types are never coerced
  // ("1" is not a number), while path and query strings are (they are always strings).
  const ajv = new Ajv({ allErrors: false, removeAdditional: false, useDefaults: true, coerceTypes: coerce ? 'array' : false, strict: false });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

type Validate = ReturnType<Ajv['compile']>;
interface Compiler {
  ajv: Ajv;
  compiled: WeakMap<object, Validate>;
}
let compilers: { body: Compiler; strings: Compiler } | undefined;

/** Fastify's validator compiler: bodies strictly typed, path and query strings coerced. */
export function compileValidator({ schema, httpPart }: { schema: object; httpPart?: string }): Validate {
  compilers ??= {
    body: { ajv: makeAjv(false), compiled: new WeakMap() },
    strings: { ajv: makeAjv(true), compiled: new WeakMap() },
  };
  const c = httpPart === 'body' ? compilers.body : compilers.strings;
  let validate = c.compiled.get(schema);
  if (!validate) {
    validate = c.ajv.compile(schema);
    // Ajv's own cache holds schemas for ever; ours lets the inline schema of a closed app go
    c.ajv.removeSchema(schema);
    c.compiled.set(schema, validate);
  }
  return validate;
}

const serializers = new Map<string, WeakMap<object, Serializer>>();
const defaultSerializers = SerializerSelector();

/**
 * Fastify's serializer factory, with fast-json-stringify's compiled functions kept per set of
 * shared schemas (by their ids: the app adds the same ones every time) and per route schema object.
 */
export const buildSerializer: SerializerFactory = (externalSchemas, options) => {
  const compile = defaultSerializers(externalSchemas, options);
  const key = Object.keys((externalSchemas as Record<string, unknown> | undefined) ?? {}).sort().join('\n');
  let byRoute = serializers.get(key);
  if (!byRoute) serializers.set(key, (byRoute = new WeakMap()));
  const cache = byRoute;
  return (route) => {
    const schema = route.schema;
    if (schema === null || typeof schema !== 'object') return compile(route);
    let fn = cache.get(schema);
    if (!fn) cache.set(schema, (fn = compile(route)));
    return fn;
  };
};
