// Walks EVERY route of the access table (src/shared/access.ts) with every kind of credential and
// checks that each is refused (401/403) or let through (any other status) as its entry says:
// nothing; an API key alone; another user's session; the owner's session without the route's
// scopes; a third-party app's token of the owner holding another scope; the owner's console cookie
// without its CSRF token; the owner's console cookie sent with a foreign Origin; a visitor cookie.
// The requests name the owner's own plugin, claim, store, app and delivery, so that an entry's
// owner rule (checked by the handler) is reached too.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { createTestClient, signIn, testClient, type SignedIn, type TestClient } from '../helpers/signin.ts';
import { createPlugin } from '../helpers/plugins.ts';
import { consoleSignIn, originOf, type ConsoleSignIn } from '../portal/helpers.ts';
import { enqueue, newDelivery } from '../webhooks/helpers.ts';
import { SCOPE_IDS } from '../../src/signin/scopes.ts';
import { ACCESS, namedScopes, openApiSecurity, type AccessRule } from '../../src/shared/access.ts';
import { registerAccessTable } from '../../src/api-keys/gate.ts';

type Kind =
  | 'none'
  | 'apiKey'
  | 'otherUser'
  | 'ownerWithoutScope'
  | 'thirdPartyApp'
  | 'consoleNoCsrf'
  | 'consoleForeignOrigin'
  | 'visitor';
const KINDS: Kind[] = [
  'none',
  'apiKey',
  'otherUser',
  'ownerWithoutScope',
  'thirdPartyApp',
  'consoleNoCsrf',
  'consoleForeignOrigin',
  'visitor',
];

/** What the entry lets through for a kind of credential (the test's own reading of the table's rules). */
function allowed(rule: AccessRule, method: string, kind: Kind): boolean {
  const safe = method === 'GET';
  if (rule.key === 'metricsToken') return false; // none of the kinds carries METRICS_TOKEN
  if (rule.key === 'public') return !rule.sameOrigin || kind === 'consoleNoCsrf' || kind === 'visitor'; // those two come from the portal's origin
  if (kind === 'none' || kind === 'consoleForeignOrigin') return false;
  if (kind === 'visitor') return safe && rule.console === 'visitor';
  // the route reads the bearer token itself: only a token holding its scopes passes (the other
  // user's session holds every scope; a console cookie is no bearer token)
  if (rule.bearerScopes) return kind === 'otherUser';
  // the owner's console session holds every scope: only its missing CSRF token can stop it
  if (kind === 'consoleNoCsrf') return safe;
  if (rule.console === 'only') return false;
  const named = namedScopes(rule);
  switch (kind) {
    case 'apiKey':
      return rule.session !== 'required' && !rule.owner;
    case 'otherUser':
      return !rule.owner;
    case 'ownerWithoutScope':
    case 'thirdPartyApp':
      return (rule.session !== 'required' || !rule.scopes?.length) && !(rule.owner && named.length);
  }
}

// generous limits for a loaded machine: ~800 requests and a dozen sign-ins (about 25 s on two shared cores)
describe('who may call what: every route × every credential', () => {
  let owner: SignedIn;
  let other: SignedIn;
  let ownerConsole: ConsoleSignIn;
  let visitorCookie: string;
  let client: TestClient;
  const ownerWithout = new Map<string, Promise<SignedIn>>();
  const thirdParty = new Map<string, SignedIn>();
  const ids: Record<string, string> = {};

  const t = useApp({ plugins: true, env: { METRICS_TOKEN: 'metrics-token-of-the-test' } });
  before(async () => {
    owner = await signIn(t);
    other = await signIn(t);
    ownerConsole = await consoleSignIn(t, { privateKey: owner.privateKey });
    const page = await t.request('GET', '/claim/anything', { apiKey: null });
    visitorCookie = String(page.headers['set-cookie']).split(';')[0];
    client = await testClient(t);
    const app = await createTestClient(t, { name: 'Third Party' });
    // one token per scope from a third-party app; the owner's own sessions without each route's scopes
    await Promise.all(
      SCOPE_IDS.map(async (scope) =>
        thirdParty.set(scope, await signIn(t, { privateKey: owner.privateKey, scopes: [scope], client: app })),
      ),
    );

    ids.pluginId = await createPlugin(t, owner.accessToken, 'https://127.0.0.1:9/hook');
    ids.claimId = `access-${Date.now().toString(36)}`;
    const claim = await t.request('POST', '/api/v0/claims', {
      token: owner.accessToken,
      body: { claims: [claimBody()] },
    });
    assert.equal(claim.statusCode, 200, claim.body);
    const store = await t.request('POST', '/api/v0/dynamicStores', {
      token: owner.accessToken,
      body: { handlerId: 'addresses', label: 'access' },
    });
    assert.equal(store.statusCode, 200, store.body);
    ids.id = store.json().doc.dynamicDataId;
    const devApp = await t.request('POST', '/api/v0/developerApps', {
      token: owner.accessToken,
      body: { name: 'Owned app', redirectUris: ['https://owned.example/cb'] },
    });
    assert.equal(devApp.statusCode, 200, devApp.body);
    ids.clientId = devApp.json().clientId;
    await enqueue(t, [newDelivery(ids.pluginId, 'https://127.0.0.1:9/hook')]);
    ids.deliveryId = (
      await t.ctx.db
        .selectFrom('webhook_deliveries')
        .select('delivery_id')
        .where('plugin_id', '=', ids.pluginId)
        .executeTakeFirstOrThrow()
    ).delivery_id;
  });

  const claimBody = () => ({
    claimId: ids.claimId,
    plugins: [{ pluginId: 'numUses', instanceId: 'numUses', publicParams: { maxUses: 10 }, privateParams: {} }],
    metadata: { name: 'Access walk' },
  });

  /** The owner's session holding every scope but `scopes`. */
  function withoutScopes(scopes: string[]): Promise<SignedIn> {
    const key = scopes.join(' ');
    let s = ownerWithout.get(key);
    if (!s) {
      s = signIn(t, { privateKey: owner.privateKey, scopes: SCOPE_IDS.filter((x) => !scopes.includes(x)) });
      ownerWithout.set(key, s);
    }
    return s;
  }

  /** A request for the route that names the owner's resources (path, query, body). */
  function sample(method: string, path: string): { url: string; body?: unknown } {
    const params: Record<string, string> = {
      claimId: ids.claimId,
      address: owner.platformAddress,
      pluginId: ids.pluginId,
      id: ids.id,
      key: owner.platformAddress,
      clientId: ids.clientId,
      provider: 'github',
      claimAttemptId: '0'.repeat(32),
      collectionId: '1',
      file: 'missing.js',
      '*': 'missing',
    };
    let url = path.replace(/:([A-Za-z]+)|\*/g, (m, name: string | undefined) => params[name ?? '*'] ?? m);
    const key = `${method} ${path}`;
    const query: Record<string, string> = {
      'GET /api/v0/plugins/errors': `pluginId=${ids.pluginId}`,
      'GET /api/v0/plugins/deliveries': `pluginId=${ids.pluginId}`,
      'GET /api/v0/dynamicStores/activity': `dynamicDataId=${ids.id}`,
      'GET /api/v0/dynamicStore/:id/value': `key=${owner.platformAddress}`,
      'GET /api/v0/user': `address=${owner.platformAddress}`,
    };
    if (query[key]) url += `?${query[key]}`;
    const bodies: Record<string, unknown> = {
      'POST /api/v0/signin/token': {
        grant_type: 'authorization_code',
        code: 'no-such-code',
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uri: client.redirectUri,
      },
      // one app by id (without clientId, the caller's own apps: a session holding manageDeveloperApps, checked by the handler)
      'POST /api/v0/developerApps/fetch': { clientId: ids.clientId },
      'PUT /api/v0/developerApps': { clientId: ids.clientId, name: 'Renamed' },
      'DELETE /api/v0/developerApps': { clientId: ids.clientId },
      'PUT /api/v0/dynamicStores': { dynamicDataId: ids.id, label: 'renamed' },
      'DELETE /api/v0/dynamicStores': { dynamicDataId: ids.id },
      'POST /api/v0/storeActions/single': {
        dynamicDataId: ids.id,
        actionName: 'add',
        payload: { address: other.platformAddress },
      },
      'POST /api/v0/storeActions/batch': {
        dynamicDataId: ids.id,
        actions: [{ actionName: 'add', payload: { address: other.platformAddress } }],
      },
      'PUT /api/v0/claims': { claims: [claimBody()] },
      'DELETE /api/v0/claims': { claimIds: [ids.claimId] },
      'POST /api/v0/claims/reserved/:claimId/:address': { _expectedVersion: -1 },
      'PUT /api/v0/plugins': { pluginId: ids.pluginId, toPublish: false },
      'DELETE /api/v0/plugins': { pluginId: ids.pluginId },
      'POST /api/v0/plugins/deliveries/redeliver': { deliveryId: ids.deliveryId },
      'POST /api/v0/plugins/fetch': { pluginIds: [ids.pluginId] },
    };
    return method === 'GET' ? { url } : { url, body: bodies[key] ?? {} };
  }

  async function call(kind: Kind, rule: AccessRule, method: string, path: string) {
    const { url, body } = sample(method, path);
    const send = (o: { apiKey?: string | null; token?: string; headers?: Record<string, string> }) =>
      t.request(method, url, {
        ...(body !== undefined ? { body } : {}),
        apiKey: o.apiKey === undefined ? null : o.apiKey,
        ...(o.token ? { token: o.token } : {}),
        ...(o.headers ? { headers: o.headers } : {}),
      });
    const named = namedScopes(rule);
    switch (kind) {
      case 'none':
        return send({});
      case 'apiKey':
        return send({ apiKey: t.apiKey });
      case 'otherUser':
        return send({ apiKey: t.apiKey, token: other.accessToken });
      case 'ownerWithoutScope':
        return send({ apiKey: t.apiKey, token: (await withoutScopes(named)).accessToken });
      case 'thirdPartyApp': {
        const another = SCOPE_IDS.find((s) => !named.includes(s))!;
        return send({ apiKey: t.apiKey, token: thirdParty.get(another)!.accessToken });
      }
      case 'consoleNoCsrf':
        return send({ headers: { cookie: ownerConsole.cookie, origin: originOf(t), 'sec-fetch-site': 'same-origin' } });
      case 'consoleForeignOrigin':
        return send({
          headers: {
            cookie: ownerConsole.cookie,
            origin: 'https://evil.example',
            'x-csrf-token': ownerConsole.csrfToken,
          },
        });
      case 'visitor':
        return send({ headers: { cookie: visitorCookie, origin: originOf(t), 'sec-fetch-site': 'same-origin' } });
    }
  }

  test('each route answers each kind of credential as its entry says', async () => {
    const wrong: string[] = [];
    let refusals = 0;
    let passes = 0;
    // routes that change or delete the owner's resources run last, so earlier calls still find them
    const keys = Object.keys(ACCESS).sort((a, b) => Number(a.startsWith('DELETE')) - Number(b.startsWith('DELETE')));
    for (const key of keys) {
      const rule = (ACCESS as Record<string, AccessRule>)[key]!;
      const [method, path] = key.split(' ') as [string, string];
      // the kinds of one route at once: the only ones that may change anything are let through on
      // routes without an owner rule, which touch no resource of the others
      const answers = await Promise.all(KINDS.map((kind) => call(kind, rule, method, path)));
      KINDS.forEach((kind, i) => {
        const res = answers[i]!;
        const refused = res.statusCode === 401 || res.statusCode === 403;
        const expected = allowed(rule, method, kind);
        if (refused) refusals++;
        else passes++;
        if (refused === expected || res.statusCode >= 500)
          wrong.push(
            `${key} × ${kind}: ${expected ? 'expected through' : 'expected 401/403'}, got ${res.statusCode} ${res.body.slice(0, 200)}`,
          );
      });
    }
    assert.deepEqual(wrong, []);
    // both outcomes are exercised widely (a walk that refused or passed everything proves little)
    assert.ok(refusals > 300 && passes > 200, `refused ${refusals}, let through ${passes}`);
  });

  test('every entry is a route of the service, and every route has an entry (HEAD follows GET)', () => {
    for (const key of Object.keys(ACCESS)) {
      const [method, url] = key.split(' ') as [string, string];
      assert.ok(
        t.app.hasRoute({ method: method as 'GET', url }),
        `${key} is in the table but no such route is registered`,
      );
    }
  });

  test('a route missing from the table stops the start', async () => {
    const app = Fastify();
    registerAccessTable(app);
    assert.throws(() => app.get('/api/v0/undeclared', async () => ({})), {
      message:
        'Route GET /api/v0/undeclared is not in the access table: declare who may call it in src/shared/access.ts',
    });
    app.get('/api/v0/plugins/errors', async () => ({}));
    await app.close();
  });

  test("each operation's OpenAPI security is its entry's", async () => {
    const spec = (await t.request('GET', '/openapi.json', { apiKey: null })).json() as {
      paths: Record<string, Record<string, { security?: unknown }>>;
    };
    let n = 0;
    for (const [key, rule] of Object.entries(ACCESS as Record<string, AccessRule>)) {
      const [method, path] = key.split(' ') as [string, string];
      const op = spec.paths[path.replace(/:([A-Za-z]+)/g, '{$1}')]?.[method.toLowerCase()];
      if (!op) continue; // hidden routes (pages, assets, the docs UI)
      assert.deepEqual(op.security, openApiSecurity(rule), key);
      n++;
    }
    assert.ok(n >= 80, `${n} operations`);
    assert.deepEqual(spec.paths['/api/v0/plugins/errors']!.get!.security, [
      { apiKey: [], bearer: ['managePlugins'] },
      { consoleSession: [] },
    ]);
  });
});
