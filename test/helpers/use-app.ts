// One line per test file (or per describe) instead of a before/after pair: starts the real app on the
// run's database before the first test, signs a wallet in if asked, and closes it all after the last.
//
//   const t = useApp({ clock: NOW, signedIn: ['manageClaims'] });
//   test('…', async () => {
//     const res = await t.get(`/api/v0/claim/${id}`, { token: t.session.accessToken });
//     assert.equal(res.statusCode, 200, res.body); // narrows res: json() is the 200 body of that route
//     assert.equal(res.json().claim.claimId, id); // typed from clients/typescript/schema.d.ts
//   });
//
// The handle is a TestApp (pass it to any helper that takes one); its fields exist once the
// before() hook has run, that is inside tests and later hooks.
import { after, before } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { paths } from '../../clients/typescript/schema.d.ts';
import type { BuildOptions } from '../../src/server.ts';
import { ManualClock, type Clock } from '../../src/shared/clock.ts';
import { startApp, type TestApp } from './app.ts';
import { loopbackEgressEnv } from './plugins.ts';
import { signIn, type SignedIn } from './signin.ts';

export interface UseAppOptions {
  /** A ManualClock: `true` starts it at the real time, a number at that time (ms); or the test's own clock. */
  clock?: true | number | Clock;
  /** A wallet signed in through the real flow (`t.session`): `true` with every scope, or these scopes. */
  signedIn?: true | readonly string[];
  /** Env overrides; a function is read in before(), after the file's earlier hooks (a fake chain's URL). */
  env?: Record<string, string> | (() => Record<string, string>);
  /** The plugin tests' app: trusts the test CA and may call loopback (`loopbackEgressEnv()`). */
  plugins?: boolean;
  /** Listen on a free port (`t.url`). */
  listen?: boolean;
  extend?: BuildOptions['extend'];
}

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type RequestOptions = NonNullable<Parameters<TestApp['request']>[2]>;

// ---- a request path (a literal or a template string, with or without a query) → its OpenAPI route

type Segments<S extends string> = S extends `${infer H}/${infer T}` ? [H, ...Segments<T>] : [S];
type IsParam<P> = P extends `{${string}}` ? true : false;
type SegmentsMatch<A extends unknown[], P extends unknown[]> = A extends [infer a, ...infer ar]
  ? P extends [infer p, ...infer pr]
    ? IsParam<p> extends true
      ? a extends ''
        ? false
        : SegmentsMatch<ar, pr>
      : [a] extends [p]
        ? SegmentsMatch<ar, pr>
        : false
    : false
  : P extends []
    ? true
    : false;
type Literals<P extends unknown[]> = P extends [infer p, ...infer pr]
  ? IsParam<p> extends true
    ? Literals<pr>
    : [p, ...Literals<pr>]
  : [];
type Longer<A extends unknown[], B extends unknown[]> = A extends [...B, unknown, ...unknown[]] ? true : false;
type WithoutQuery<S extends string> = S extends `${infer P}?${string}` ? P : S;
type Candidates<S extends string, M extends Method> = {
  [K in keyof paths & string]: paths[K] extends Record<M, unknown>
    ? SegmentsMatch<Segments<WithoutQuery<S>>, Segments<K>> extends true
      ? K
      : never
    : never;
}[keyof paths & string];
/** Of the routes a path matches, the one with the most literal segments (`/plugins/search` over `/plugins/{pluginId}`). */
type Best<C extends string> = {
  [K in C]: true extends { [J in C]: Longer<Literals<Segments<J>>, Literals<Segments<K>>> }[C] ? never : K;
}[C];
export type RouteOf<S extends string, M extends Method> = Best<Candidates<S, M>>;

type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Responses<K extends keyof paths, M extends Method> =
  paths[K] extends Record<M, { responses: infer R }> ? R : never;
/**
 * One member per status the route documents, its json() typed by that status's schema: check the
 * status first (`assert.equal(res.statusCode, 200)` narrows), then read the body. A status the route
 * does not document narrows to never: use `request()` for those.
 */
export type TypedResponse<R> = {
  [C in keyof R]: Omit<LightMyRequestResponse, 'json' | 'statusCode'> & { statusCode: C; json(): JsonOf<R[C]> };
}[keyof R];
/** A path of the OpenAPI document for this method; anything else does not compile (use `request()`). */
type KnownPath<S extends string, M extends Method> = [RouteOf<S, M>] extends [never] ? never : S;
type TypedCall<M extends Method> = <const S extends string>(
  path: S & KnownPath<S, M>,
  opts?: RequestOptions,
) => Promise<TypedResponse<Responses<RouteOf<S, M>, M>>>;

/** A TestApp with the typed `get`/`post`/`put`/`patch`/`delete` (what a helper function takes). */
export type TypedApp = TestApp & { [M in Method]: TypedCall<M> };

export type AppFixture<O extends UseAppOptions> = TypedApp &
  (O['clock'] extends true | number
    ? { clock: ManualClock }
    : O['clock'] extends Clock
      ? { clock: O['clock'] }
      : unknown) &
  (O['signedIn'] extends true | readonly string[] ? { session: SignedIn } : unknown);

export function useApp<const O extends UseAppOptions = Record<never, never>>(
  options: O & UseAppOptions = {} as O,
): AppFixture<O> {
  let started: TestApp | undefined;
  let session: SignedIn | undefined;
  before(async () => {
    const { clock, signedIn, plugins, listen, extend } = options;
    const env = {
      ...(plugins ? loopbackEgressEnv() : {}),
      ...(typeof options.env === 'function' ? options.env() : options.env),
    };
    started = await startApp({
      env,
      ...(listen ? { listen } : {}),
      ...(extend ? { extend } : {}),
      ...(clock === undefined
        ? {}
        : { clock: typeof clock === 'object' ? clock : new ManualClock(clock === true ? undefined : clock) }),
    });
    if (signedIn) session = await signIn(started, signedIn === true ? {} : { scopes: [...signedIn] });
  });
  after(() => started?.close());
  const live = (): TestApp => {
    if (!started) throw new Error('useApp: the app starts in before(); read its fields inside a test or a later hook');
    return started;
  };
  const call =
    (method: Method) =>
    (path: string, opts?: RequestOptions): Promise<LightMyRequestResponse> =>
      live().request(method.toUpperCase(), path, opts);
  const handle = {
    get app() {
      return live().app;
    },
    get ctx() {
      return live().ctx;
    },
    get config() {
      return live().config;
    },
    get clock() {
      return live().clock;
    },
    get apiKey() {
      return live().apiKey;
    },
    get url() {
      return live().url;
    },
    get database() {
      return live().database;
    },
    get session() {
      if (!session) throw new Error('useApp: no session without the signedIn option');
      return session;
    },
    request: (...args: Parameters<TestApp['request']>) => live().request(...args),
    close: () => live().close(),
    get: call('get'),
    post: call('post'),
    put: call('put'),
    patch: call('patch'),
    delete: call('delete'),
  };
  return handle as unknown as AppFixture<O>;
}
