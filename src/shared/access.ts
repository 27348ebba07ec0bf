// Who may call what: ONE table, one entry per route (METHOD and Fastify path). The app reads it
// when each route is registered (src/api-keys/gate.ts): a route without an entry fails the start,
// the API-key gate, the console-cookie rules, the session and the scopes are enforced from it
// before any handler runs, and each route's OpenAPI `security` is derived from it. docs/security.md
// renders it ("Who may call what", kept true by test/security/access-doc.test.ts) and
// test/security/access.test.ts walks every entry with every kind of credential.
//
// What the table does NOT enforce, because it needs data: the `owner` rule (creator or manager of
// the plugin, claim, store, app, ...), which the handler checks. The entry names it, so the docs
// and the tests know it.
//
// Adding a route: one entry below. Changing who may call a route: its entry, nothing else.

export interface AccessRule {
  /**
   * What opens the route at all:
   * - `apiKey`: `x-api-key`, or the web console's cookie in its place (same-origin, CSRF-checked);
   * - `public`: nothing (pages and calls a user's browser makes, probes); still limited per IP;
   * - `metricsToken`: `Authorization: Bearer <METRICS_TOKEN>` (checked by the route itself).
   */
  key: 'apiKey' | 'public' | 'metricsToken';
  /** The user's session (`Authorization: Bearer`, or the console cookie's): not read, optional, or required. */
  session: 'none' | 'optional' | 'required';
  /** Scopes the session must hold (with `session: 'required'`). */
  scopes?: readonly string[];
  /**
   * The console cookie, for `apiKey` routes (public routes do not read it):
   * - `session` (the default): a signed-in console cookie stands in for the API key;
   * - `visitor`: a visitor cookie too (a read of the public claim page, before its user signs in);
   * - `only`: only a signed-in console session; API keys and bearer tokens are refused.
   */
  console?: 'session' | 'visitor' | 'only';
  /**
   * The route reads the `Authorization: Bearer` access token itself and needs it to hold these
   * scopes, answering OAuth's own errors (RFC 6750: `WWW-Authenticate`, `invalid_token`,
   * `insufficient_scope`) rather than this service's: OpenID Connect's userinfo. Console cookies
   * are no bearer token there.
   */
  bearerScopes?: readonly string[];
  /** A signed-in console session passes without `scopes` (the user acts in the service's own console). */
  consoleAnyScope?: boolean;
  /** The request must come from the portal's own pages (Origin or Sec-Fetch-Site, and the right one). */
  sameOrigin?: boolean;
  /** A request field that raises the requirement: when it holds `equals`, a session (holding `scopes`) is required. */
  when?: { in: 'body' | 'query'; field: string; equals: unknown; scopes?: readonly string[] };
  /** A rule on data that the handler enforces, refusing everyone else (403 or 401). */
  owner?: string;
  /** Scopes the `owner` rule needs beyond `scopes` (the handler checks them with the data). */
  ownerScopes?: readonly string[];
  /** What a session changes in the answer, without refusing anyone. */
  note?: string;
}

const apiKey = (rule: Omit<AccessRule, 'key' | 'session'> & { session?: AccessRule['session'] } = {}): AccessRule => ({
  key: 'apiKey',
  session: 'none',
  ...rule,
});
const withSession = (
  scopes: readonly string[] = [],
  rule: Omit<AccessRule, 'key' | 'session' | 'scopes'> = {},
): AccessRule => ({ key: 'apiKey', session: 'required', ...(scopes.length ? { scopes } : {}), ...rule });
const optionalSession = (rule: Omit<AccessRule, 'key' | 'session'> = {}): AccessRule => ({
  key: 'apiKey',
  session: 'optional',
  ...rule,
});
const publicRoute = (rule: Omit<AccessRule, 'key' | 'session'> = {}): AccessRule => ({
  key: 'public',
  session: 'none',
  ...rule,
});
const consoleOnly: AccessRule = { key: 'apiKey', session: 'required', console: 'only' };

const PLUGIN_OWNER = 'creator or manager of the plugin';
const CLAIM_OWNER = 'creator or manager of the claim';
const APP_OWNER = 'creator of the developer app';
const STORE_READ =
  "the store's creator or manager (a session holding manageDynamicStores), anyone presenting the store's dataSecret, or anyone for a publicUseInClaims store";
const STORE_EDIT =
  "the store's creator or manager (a session holding manageDynamicStores), or anyone presenting the store's dataSecret";
const PRIVATE_CLAIM_DATA =
  'private params, private state and seeds only for the creator or manager holding readPrivateClaimData';

/** Every route of the service. Keys: `METHOD path` with Fastify's `:param` syntax; HEAD follows GET. */
export const ACCESS = {
  // ---- operations and documents -------------------------------------------------------------
  'GET /healthz': publicRoute(),
  'GET /readyz': publicRoute(),
  'GET /metrics': { key: 'metricsToken', session: 'none' },
  'GET /openapi.json': publicRoute(),
  'GET /docs': publicRoute(),
  'GET /docs/': publicRoute(),
  'GET /docs/static/index.html': publicRoute(),
  'GET /docs/static/swagger-initializer.js': publicRoute(),
  'GET /docs/static/*': publicRoute(),
  'GET /docs/json': publicRoute(),
  'GET /docs/yaml': publicRoute(),

  // ---- sign-in --------------------------------------------------------------------------------
  'GET /.well-known/oauth-authorization-server': publicRoute(),
  'GET /.well-known/openid-configuration': publicRoute(),
  'GET /.well-known/jwks.json': publicRoute(),
  'GET /api/v0/signin/userinfo': apiKey({ bearerScopes: ['openid'], note: "the access token's own identity claims" }),
  'POST /api/v0/signin/userinfo': apiKey({ bearerScopes: ['openid'], note: "the access token's own identity claims" }),
  'GET /signin/authorize': publicRoute(),
  'POST /api/v0/signin/challenge': publicRoute({ note: 'limited per IP and per app' }),
  'POST /api/v0/signin/approve': publicRoute(),
  'POST /api/v0/signin/token': apiKey({
    note: 'the developer app authenticates with its client secret (body or HTTP Basic)',
  }),
  'POST /api/v0/signin/token/revoke': apiKey({ note: 'client credentials optional' }),
  'POST /api/v0/auth/status': optionalSession({ note: 'answers signedIn: false without a live session' }),
  'POST /api/v0/developerApps': withSession(['manageDeveloperApps']),
  'PUT /api/v0/developerApps': withSession(['manageDeveloperApps'], { owner: APP_OWNER }),
  'DELETE /api/v0/developerApps': withSession(['manageDeveloperApps'], { owner: APP_OWNER }),
  'POST /api/v0/developerApps/fetch': optionalSession({
    note: 'without clientId (your own apps): a session holding manageDeveloperApps',
  }),
  'GET /api/v0/developerApp/:clientId': apiKey(),
  'GET /api/v0/developerApps/:clientId/signins': withSession(['manageDeveloperApps'], { owner: APP_OWNER }),

  // ---- dynamic stores -------------------------------------------------------------------------
  'POST /api/v0/dynamicStores': withSession(['manageDynamicStores']),
  'PUT /api/v0/dynamicStores': withSession(['manageDynamicStores'], { owner: 'creator or manager of the store' }),
  'DELETE /api/v0/dynamicStores': withSession(['manageDynamicStores'], { owner: 'creator or manager of the store' }),
  'POST /api/v0/dynamicStores/fetch': optionalSession({ note: `a document only for ${STORE_READ} (null otherwise)` }),
  'GET /api/v0/dynamicStores/search': withSession(['manageDynamicStores'], { note: 'your own stores' }),
  'GET /api/v0/dynamicStores/activity': optionalSession({ owner: STORE_READ, ownerScopes: ['manageDynamicStores'] }),
  'GET /api/v0/dynamicStore/:id': optionalSession({ owner: STORE_READ, ownerScopes: ['manageDynamicStores'] }),
  'GET /api/v0/dynamicStore/:id/value': optionalSession({ owner: STORE_READ, ownerScopes: ['manageDynamicStores'] }),
  'GET /api/v0/dynamicStore/:id/values': optionalSession({ owner: STORE_READ, ownerScopes: ['manageDynamicStores'] }),
  'GET /api/v0/dynamicStore/:id/:key': optionalSession({ owner: STORE_READ, ownerScopes: ['manageDynamicStores'] }),
  'POST /api/v0/storeActions/single': optionalSession({ owner: STORE_EDIT, ownerScopes: ['manageDynamicStores'] }),
  'POST /api/v0/storeActions/batch': optionalSession({ owner: STORE_EDIT, ownerScopes: ['manageDynamicStores'] }),

  // ---- claims ---------------------------------------------------------------------------------
  'POST /api/v0/claims/complete/:claimId/:address': optionalSession({
    note: 'a claim with an initiatedBy plugin needs a session of the claiming address holding completeClaims',
  }),
  'POST /api/v0/claims/simulate/:claimId/:address': optionalSession({
    note: 'a claim with an initiatedBy plugin needs a session of the claiming address holding completeClaims',
  }),
  'POST /api/v0/eligibility': optionalSession({
    note: "private lists and private store membership are answered only to a session of the address or of the claim's creator or manager; others see `unknown` (checked at claim time)",
  }),
  'GET /api/v0/claims/status/:claimAttemptId': optionalSession({
    console: 'visitor',
    note: '`code` only for the claiming address holding completeClaims, or the creator or manager holding readPrivateClaimData',
  }),
  'POST /api/v0/claims/status/:claimAttemptId': optionalSession({
    note: '`code` only for the claiming address holding completeClaims, or the creator or manager holding readPrivateClaimData',
  }),
  'GET /api/v0/claims/success/:claimId/:address': apiKey({ console: 'visitor' }),
  'GET /api/v0/claims/:claimId/attempts': apiKey(),
  'GET /api/v0/claims/:claimId/refusals': withSession(['readPrivateClaimData'], { owner: CLAIM_OWNER }),
  'GET /api/v0/claim/:claimId': optionalSession({
    console: 'visitor',
    note: `${PRIVATE_CLAIM_DATA}; failed-guess counts for the creator or manager`,
  }),
  'POST /api/v1/claims/fetch': optionalSession({ note: PRIVATE_CLAIM_DATA }),
  'GET /api/v0/claims/search': optionalSession(),
  'POST /api/v0/claims': withSession(['manageClaims']),
  'PUT /api/v0/claims': withSession(['manageClaims'], { owner: CLAIM_OWNER }),
  'DELETE /api/v0/claims': withSession(['manageClaims'], { owner: CLAIM_OWNER }),
  'GET /api/v0/claims/mine': withSession([], { note: 'the claims the session user created' }),

  // ---- merkle codes ---------------------------------------------------------------------------
  'GET /api/v0/merkle/leafSigner': apiKey(),
  'GET /api/v0/merkle/challenge/:claimId': apiKey(),
  'POST /api/v0/claims/reserved/:claimId/:address': withSession(['completeClaims'], {
    owner: 'the session of that address',
  }),
  'POST /api/v0/merkleProofInfo': apiKey(),

  // ---- swap -----------------------------------------------------------------------------------
  'POST /api/v0/swap/estimate': apiKey(),
  'POST /api/v0/swaps/estimate': apiKey(),

  // ---- connections ----------------------------------------------------------------------------
  'POST /api/v0/connections/:provider/start': withSession(['manageConnections'], {
    consoleAnyScope: true,
    note: 'links the session wallet',
  }),
  'GET /connections/:provider/link': publicRoute({
    note: "the link page; a console cookie of the request's own wallet is the wallet's proof, otherwise the wallet signs",
  }),
  'POST /api/v0/connections/:provider/link': publicRoute({
    note: "the wallet's signature is the credential; only from the link page (same origin); sets the binding cookie",
  }),
  'GET /api/v0/connections/:provider/callback': publicRoute({
    note: "the provider's redirect; links only in the browser holding the binding cookie of a proven request",
  }),
  'GET /api/v0/connections': withSession([], { note: "the session wallet's links" }),
  'DELETE /api/v0/connections/:provider': withSession(['manageConnections'], {
    consoleAnyScope: true,
    note: "the session wallet's link",
  }),

  // ---- linked wallets -------------------------------------------------------------------------
  'POST /api/v0/linkedWallets/challenge': withSession(['manageLinkedWallets'], {
    consoleAnyScope: true,
    note: 'for the session account; the message names the wallet to link',
  }),
  'POST /api/v0/linkedWallets': withSession(['manageLinkedWallets'], {
    consoleAnyScope: true,
    note: "the wallet's signature of a link request the session account made",
  }),
  'GET /api/v0/linkedWallets': withSession([], { note: "the session account's links" }),
  'DELETE /api/v0/linkedWallets/:address': withSession(['manageLinkedWallets'], {
    consoleAnyScope: true,
    note: "a wallet linked to the session account, or the session's own address leaving its account",
  }),

  // ---- plugin documents and their webhooks ----------------------------------------------------
  'POST /api/v0/plugins': withSession(['managePlugins']),
  'PUT /api/v0/plugins': withSession(['managePlugins'], {
    owner: `${PLUGIN_OWNER} (only the creator changes managedBy)`,
  }),
  'DELETE /api/v0/plugins': withSession(['managePlugins'], { owner: PLUGIN_OWNER }),
  'GET /api/v0/plugin/:pluginId': optionalSession({
    console: 'visitor',
    note: `approvedUsers only for the ${PLUGIN_OWNER}`,
  }),
  'GET /api/v0/plugins/:pluginId': optionalSession({
    console: 'visitor',
    note: `approvedUsers only for the ${PLUGIN_OWNER}`,
  }),
  'POST /api/v0/plugins/fetch': optionalSession({
    when: { in: 'body', field: 'returnSensitiveData', equals: true, scopes: ['managePlugins'] },
    note: 'pluginSecret only in the documents whose creator or manager is the session user',
  }),
  'GET /api/v0/plugins/search': optionalSession({
    when: { in: 'query', field: 'pluginsForSignedInUser', equals: true },
  }),
  'GET /api/v0/plugins/errors': withSession(['managePlugins'], { owner: PLUGIN_OWNER }),
  'GET /api/v0/plugins/deliveries': withSession(['managePlugins'], { owner: PLUGIN_OWNER }),
  'POST /api/v0/plugins/deliveries/redeliver': withSession(['managePlugins'], {
    owner: `${PLUGIN_OWNER} the delivery belongs to`,
  }),
  'GET /api/v0/plugins/core': apiKey({ console: 'visitor' }),
  'POST /api/v0/integrations/query/:pluginId': apiKey(),

  // ---- accounts and chain data ----------------------------------------------------------------
  'POST /api/v0/user/updateAccount': withSession(['manageAccount'], { note: "the session user's own account" }),
  'GET /api/v0/user': apiKey(),
  'POST /api/v0/users': optionalSession({
    note: 'private views only for the account itself, with a session holding manageAccount',
  }),
  'POST /api/v0/collections': apiKey(),
  'GET /api/v0/collection/:collectionId': apiKey(),
  'GET /api/v0/collection/:collectionId/owners': apiKey(),
  'GET /api/v0/collection/:collectionId/activity': apiKey(),
  'GET /api/v0/collection/:collectionId/amountTrackers': apiKey(),
  'GET /api/v0/collection/:collectionId/challengeTrackers': apiKey(),
  'GET /api/v0/collection/:collectionId/balance/:address': apiKey(),
  'GET /api/v0/collection/:collectionId/listings': apiKey({ note: 'always an empty page: no marketplace data here' }),
  'GET /api/v0/collection/:collectionId/:tokenId/balance/:address': apiKey(),
  'GET /api/v0/collection/:collectionId/:tokenId/owners': apiKey(),
  'GET /api/v0/collection/:collectionId/:tokenId/activity': apiKey(),
  'POST /api/v0/verifyOwnershipRequirements': apiKey(),
  'GET /api/v0/account/:address/activity/claims': optionalSession({
    note: 'viewType=all only for the account itself, with a session holding manageAccount',
  }),
  'GET /api/v0/account/:address/activity/badges': apiKey(),
  'GET /api/v0/account/:address/badges': apiKey(),
  'GET /api/v0/account/:address/activity/points': apiKey(),
  'GET /api/v0/account/:address/requests/signin': optionalSession({
    owner: 'the account itself',
    ownerScopes: ['manageAccount'],
  }),

  // ---- the web console ------------------------------------------------------------------------
  'GET /': publicRoute({ note: 'the console page; sets a visitor cookie' }),
  'GET /claim/:claimId': publicRoute({ note: 'the claim page; sets a visitor cookie' }),
  'GET /assets/:file': publicRoute(),
  'POST /api/v0/console/session': publicRoute({ sameOrigin: true, note: 'a wallet proof made for the console' }),
  'POST /api/v0/console/link': publicRoute({
    sameOrigin: true,
    note: 'a one-time sign-in link from the operator (platform console-link)',
  }),
  'GET /api/v0/console/session': apiKey({ console: 'visitor', note: 'signedIn: false without a console session' }),
  'DELETE /api/v0/console/session': consoleOnly,
  'GET /api/v0/apiKeys': consoleOnly,
  'POST /api/v0/apiKeys': consoleOnly,
  'DELETE /api/v0/apiKeys': consoleOnly,
  'GET /api/v0/account/authorizations': consoleOnly,
  'DELETE /api/v0/account/authorizations': consoleOnly,
} satisfies Record<string, AccessRule>;

export type RouteKey = keyof typeof ACCESS;

/** The table's key of a route: HEAD routes follow their GET. */
export const routeKey = (method: string, url: string): string => `${method === 'HEAD' ? 'GET' : method} ${url}`;

/** The entry of a route, or undefined when the table does not declare it. */
export function accessOf(method: string, url: string): AccessRule | undefined {
  return (ACCESS as Record<string, AccessRule>)[routeKey(method, url)];
}

/** Scopes named by an entry: its own, its `when`'s and its owner rule's. */
export const namedScopes = (rule: AccessRule): string[] => [
  ...new Set([
    ...(rule.scopes ?? []),
    ...(rule.when?.scopes ?? []),
    ...(rule.ownerScopes ?? []),
    ...(rule.bearerScopes ?? []),
  ]),
];

type Security = Array<Record<string, string[]>>;

/** The OpenAPI `security` of a route, derived from its entry (bearer roles name the scopes). */
export function openApiSecurity(rule: AccessRule): Security {
  if (rule.key === 'public') return [];
  if (rule.key === 'metricsToken') return [{ bearer: [] }];
  if (rule.console === 'only') return [{ consoleSession: [] }];
  if (rule.bearerScopes) return [{ apiKey: [], bearer: [...rule.bearerScopes] }];
  const bearer = { apiKey: [], bearer: [...(rule.scopes ?? [])] };
  const options: Security =
    rule.session === 'required' ? [bearer] : rule.session === 'optional' ? [{ apiKey: [] }, bearer] : [{ apiKey: [] }];
  return [...options, { consoleSession: [] }];
}

const code = (s: string) => `\`${s}\``;

/** The table as markdown, one row per route in the table's order (docs/security.md holds it). */
export function renderAccessTable(): string {
  const rows = Object.entries(ACCESS as Record<string, AccessRule>).map(([key, rule]) => {
    const route = code(key.replace(/:([A-Za-z]+)/g, '{$1}'));
    const credential =
      rule.key === 'apiKey'
        ? 'API key'
        : rule.key === 'metricsToken'
          ? '`METRICS_TOKEN` (bearer)'
          : rule.sameOrigin
            ? 'none (same origin only)'
            : 'none';
    const when = rule.when ? `required with ${code(`${rule.when.field}: ${JSON.stringify(rule.when.equals)}`)}` : '';
    const session = rule.bearerScopes
      ? 'required (bearer token, RFC 6750 errors)'
      : rule.session === 'optional' && when
        ? `optional; ${when}`
        : rule.session;
    const scopes = [
      ...(rule.scopes ?? []).map(code),
      ...(rule.when?.scopes ?? []).map((s) => `${code(s)} with ${code(rule.when!.field)}`),
      ...(rule.ownerScopes ?? []).map((s) => `${code(s)} for the owner`),
      ...(rule.bearerScopes ?? []).map(code),
    ].join(', ');
    const cookie =
      rule.key !== 'apiKey'
        ? '—'
        : rule.console === 'only'
          ? 'only a signed-in console session'
          : rule.console === 'visitor'
            ? 'signed-in or visitor'
            : rule.consoleAnyScope
              ? 'signed-in, without the scopes'
              : 'signed-in';
    const rule_ = [rule.owner ? `only the ${rule.owner}` : '', rule.note ?? ''].filter(Boolean).join('; ');
    return `| ${route} | ${credential} | ${session} | ${scopes || '—'} | ${cookie} | ${rule_ || '—'} |`;
  });
  return [
    '| Route | Credential | Session | Scopes | Console cookie | Owner rule (handler) / what a session changes |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

/** The markers between which docs/security.md holds the rendered table. */
export const ACCESS_TABLE_MARKERS = [
  '<!-- access-table: generated from src/shared/access.ts by `node scripts/access-table.ts`; do not edit by hand -->',
  '<!-- access-table end -->',
] as const;
