// What the service accepts on the wire before any route runs: which bodies (JSON everywhere, form
// bodies only where a route opts in, none on GET), how deep JSON may nest, which client request ids
// are kept, and how router-level failures (bad percent-encoding, overlong path parameters) answer.
// Every refusal here happens before the body is read and after the API-key gate, so a caller
// without a key cannot tell routes apart by these answers (docs/security.md).
import type { FastifyInstance, FastifyRequest, FastifyReply, FastifyError } from 'fastify';
import { ApiError } from './errors.ts';
import { MAX_PATH_PARAM_LENGTH } from './schemas.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Also accepts application/x-www-form-urlencoded bodies (the OAuth token endpoints). */
    formBody?: boolean;
  }
}

/** Deepest nesting of arrays and objects a JSON body may have. */
export const MAX_JSON_DEPTH = 64;

/** Client request ids kept as given: short and safe to log; anything else gets a generated id. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export function clientRequestId(header: string | string[] | undefined): string | null {
  return typeof header === 'string' && SAFE_REQUEST_ID.test(header) ? header : null;
}

/** Whether `s[i]` (a quote) is escaped: preceded by an odd number of backslashes. */
function escaped(s: string, i: number): boolean {
  let n = 0;
  while (s.charCodeAt(--i) === 92 /* \ */) n++;
  return (n & 1) === 1;
}

/** Whether `s` holds more than `max` opening brackets (native indexOf scans; stops early). */
function moreOpeningsThan(s: string, max: number): boolean {
  let n = 0;
  for (const bracket of ['{', '[']) {
    for (let i = s.indexOf(bracket); i !== -1; i = s.indexOf(bracket, i + 1)) if (++n > max) return true;
  }
  return false;
}

/**
 * Whether `json` nests arrays/objects deeper than `max`. Runs before JSON.parse so that no later
 * recursive walk (validation, JSON.stringify) can overflow the stack. Most bodies are settled by
 * their length or their bracket count; the rest get one pass over the structure, skipping string
 * contents with indexOf (bench/hardening.ts). Malformed input is left to JSON.parse.
 */
export function jsonDepthExceeds(json: string, max: number): boolean {
  // an object or array needs two characters per level, and one opening bracket
  if (json.length <= 2 * max || !moreOpeningsThan(json, max)) return false;
  let depth = 0;
  const n = json.length;
  for (let i = 0; i < n; i++) {
    const c = json.charCodeAt(i);
    if (c === 34 /* " */) {
      let end = i;
      do end = json.indexOf('"', end + 1);
      while (end !== -1 && escaped(json, end));
      if (end === -1) return false;
      i = end;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) return true;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
    }
  }
  return false;
}

const isJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

const NUL = '\u0000';
const nulMessage = (where: string) => `${where} must not contain the NUL character (U+0000)`;

/**
 * Where a parsed value holds U+0000, in a string or a key (`body.a.1.b`, as validation errors
 * name it), or null. PostgreSQL refuses the character in text where SQLite stores it, so it is
 * refused up front on both.
 */
function nulPath(value: unknown, path: string): string | null {
  const stack: Array<[unknown, string]> = [[value, path]];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes(NUL)) return at;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${at}.${i}`]);
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, x] = entries[i]!;
        if (k.includes(NUL)) return `a key of ${at}`;
        stack.push([x, `${at}.${k}`]);
      }
    }
  }
  return null;
}

const hasBody = (request: FastifyRequest): boolean => {
  const h = request.headers;
  return h['transfer-encoding'] !== undefined || (h['content-length'] !== undefined && h['content-length'] !== '0');
};

/** A refusal that also closes the connection, so the server does not read the unread body. */
const refuse = (status: number, message: string) => new ApiError(status, message, {}, { connection: 'close' });

const emptyJsonBodies = new WeakSet<FastifyRequest>();

/** The text of a validation error: says the body was empty when it was (`{}` was validated). */
export function validationMessage(request: FastifyRequest, err: FastifyError): string {
  return err.validationContext === 'body' && emptyJsonBodies.has(request)
    ? `Request body is empty; ${err.message}`
    : err.message;
}

/**
 * Installs the body rules: JSON parsed with a depth cap (empty = `{}`), no text/plain, form bodies
 * only on routes with `config.formBody` (the form parser itself is registered by the caller), no
 * body at all on GET or HEAD. (The API-key gate runs first on unknown /api/ paths, as on known
 * ones: server.ts's one app-wide onRequest hook calls it.)
 */
export function installInputRules(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.length === 0) {
      // common HTTP clients send body-less POSTs with a JSON content type
      emptyJsonBodies.add(request);
      return done(null, {});
    }
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH))
      return done(new ApiError(400, `Request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`));
    parseJson(request, text, (err, parsed) => {
      // the parser refuses prototype keys with the same error as broken JSON: tell them apart
      if (err)
        return done(
          isJson(text)
            ? new ApiError(
                400,
                'Request body must not contain the key "__proto__" (or "constructor" holding "prototype")',
              )
            : err,
        );
      // JSON can only carry U+0000 escaped: bodies without the escape are not walked
      const at = text.includes('\\u0000') ? nulPath(parsed, 'body') : null;
      done(at ? new ApiError(400, nulMessage(at)) : null, parsed);
    });
  });

  // Path parameters, the query string and form bodies: small, checked on every request.
  // U+0000 reaches path parameters and the query only percent-encoded (the HTTP parser refuses a raw
  // one), so a URL without `%00` skips their walk: one indexOf per request instead of two walks.
  app.addHook('preValidation', (request, _reply, done) => {
    const inUrl = request.url.includes('%00');
    const at =
      (inUrl ? (nulPath(request.params, 'params') ?? nulPath(request.query, 'querystring')) : null) ??
      (request.body !== null && typeof request.body === 'object' && request.routeOptions.config.formBody
        ? nulPath(request.body, 'body')
        : null);
    done(at ? new ApiError(400, nulMessage(at)) : undefined);
  });

  app.addHook('preParsing', (request, _reply, payload, done) => {
    if (!hasBody(request)) return done(null, payload);
    const method = request.method;
    if (method === 'GET' || method === 'HEAD') return done(refuse(400, `A ${method} request must not have a body`));
    const header = request.headers['content-type'];
    const media = header?.split(';', 1)[0].trim().toLowerCase();
    if (media === 'application/json') return done(null, payload);
    if (media === 'application/x-www-form-urlencoded' && request.routeOptions.config.formBody)
      return done(null, payload);
    const what = media ? `Unsupported content type "${media.slice(0, 100)}"` : 'Missing content type';
    const expected = request.routeOptions.config.formBody
      ? 'application/x-www-form-urlencoded (or application/json)'
      : 'JSON with content-type: application/json';
    done(refuse(415, `${what}: send the body as ${expected}`));
  });
}

/**
 * Fastify's `frameworkErrors`: a URL the router cannot decode, or a path parameter longer than
 * the limit. Answers in the service's error shape, echoes nothing of the URL, and lets the API-key
 * gate answer first on /api/ paths.
 */
export function routerErrorHandler(
  gate: () => ((request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void) | undefined,
) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const send = (e: ApiError) => void reply.code(e.statusCode).headers(e.headers).send(e.body);
    const answer = () =>
      send(
        err.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? new ApiError(414, `A path parameter is longer than ${MAX_PATH_PARAM_LENGTH} characters`)
          : new ApiError(400, 'Malformed URL: invalid percent-encoding in the path'),
      );
    const g = gate();
    if (!g || !(request.raw.url ?? '').startsWith('/api/')) return answer();
    g(request, reply, (e) =>
      e instanceof ApiError ? send(e) : e ? send(new ApiError(500, 'Internal server error')) : answer(),
    );
  };
}
