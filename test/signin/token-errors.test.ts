// The token endpoint's refusals, each pinned to its exact status, whole JSON body and headers
// (npm run mutate -- src/signin/tokens.ts left these alive): client authentication in the body and
// over HTTP Basic (header forms, form-urlencoding, an empty secret), grant_type, the code exchange
// (unknown, revoked, redirect_uri, options.issuedAtTimeWindowMs), the refresh grant (unknown selector,
// revoked family, scope lists, a token without a refresh hash), the session maximum age
// (SIGNIN_SESSION_MAX_AGE_DAYS), revocation of unknown tokens, and, on PostgreSQL, the loser of a
// refresh race.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { TEST_DB, type TestApp } from '../helpers/app.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import {
  authorizeCode,
  basicAuth,
  codeExchangeBody,
  createTestClient,
  isSignedIn,
  signIn,
  testAccount,
  testClient,
  type TestClient,
} from '../helpers/signin.ts';
import type { ManualClock } from '../../src/shared/clock.ts';

const DAY = 86_400_000;
const TOKEN = '/api/v0/signin/token';
const REVOKE = '/api/v0/signin/token/revoke';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
/** A token of the right shape whose selector names no authorization. */
const UNKNOWN_TOKEN = `${'0'.repeat(32)}.${'0'.repeat(64)}`;
const BAD_HEADER = 'Invalid Authorization header: expected Basic base64(client_id:client_secret).';
const REVOKED_REFRESH = 'The authorization of this refresh token has been revoked.';

/** The whole RFC 6749 §5.2 answer: status, body, no-store, and the Basic challenge exactly when expected. */
function assertOAuthError(
  res: LightMyRequestResponse,
  status: number,
  error: string,
  description: string,
  opts: { challenge?: boolean } = {},
): void {
  assert.equal(res.statusCode, status, res.body);
  assert.deepEqual(res.json(), { errorMessage: description, error, error_description: description });
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(
    res.headers['www-authenticate'],
    opts.challenge ? `Basic realm="platform", error="${error}"` : undefined,
  );
}

/** `Basic base64(credentials)` without the form-urlencoding of basicAuth(). */
const rawBasic = (credentials: string) => 'Basic ' + Buffer.from(credentials).toString('base64');
const creds = (client: TestClient) => ({ client_id: client.clientId, client_secret: client.clientSecret });
const refreshBody = (client: TestClient, refresh_token: string, extra: Record<string, unknown> = {}) => ({
  grant_type: 'refresh_token',
  refresh_token,
  ...creds(client),
  ...extra,
});

async function grant(
  t: TestApp,
  opts: { scopes?: string[] } = {},
): Promise<{ client: TestClient; tokens: { access_token: string; refresh_token: string } }> {
  const { code, client } = await authorizeCode(t, opts);
  const res = await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) });
  assert.equal(res.statusCode, 200, res.body);
  return { client, tokens: res.json() };
}

describe('client authentication', () => {
  let client: TestClient;
  const t = useApp();
  before(async () => {
    client = await testClient(t);
  });
  // Authentication passed when the next check answers: the request carries no grant_type.
  const GRANT_TYPE_REQUIRED = ['invalid_request', 'grant_type is required.'] as const;
  const post = (body: Record<string, unknown>, authorization?: string) =>
    t.request('POST', TOKEN, { body, ...(authorization ? { headers: { authorization } } : {}) });

  test('in the body: a missing or empty client_id, an unknown client, a missing or wrong secret each name their reason', async () => {
    assertOAuthError(
      await post({ grant_type: 'authorization_code' }),
      400,
      'invalid_request',
      'client_id is required.',
    );
    assertOAuthError(
      await post({ grant_type: 'authorization_code', client_id: '', client_secret: client.clientSecret }),
      400,
      'invalid_request',
      'client_id is required.',
    );
    assertOAuthError(
      await post({ grant_type: 'authorization_code', client_id: 'f'.repeat(64), client_secret: client.clientSecret }),
      401,
      'invalid_client',
      'Client authentication failed: unknown client.',
    );
    assertOAuthError(
      await post({ grant_type: 'authorization_code', client_id: client.clientId }),
      401,
      'invalid_client',
      'Client authentication failed: client_secret is required.',
    );
    assertOAuthError(
      await post({ grant_type: 'authorization_code', client_id: client.clientId, client_secret: 'f'.repeat(64) }),
      401,
      'invalid_client',
      'Client authentication failed: invalid client secret.',
    );
    assertOAuthError(await post(creds(client)), 400, ...GRANT_TYPE_REQUIRED);
  });

  test('an Authorization header that is not Basic is ignored: the body authenticates', async () => {
    for (const authorization of [`Bearer ${UNKNOWN_TOKEN}`, 'Bearer basic', 'Digest basic']) {
      assertOAuthError(await post(creds(client), authorization), 400, ...GRANT_TYPE_REQUIRED);
    }
  });

  test('HTTP Basic: any case of the scheme, trailing whitespace, percent-encoding, and a body client_id that matches are accepted', async () => {
    const header = basicAuth(client.clientId, client.clientSecret);
    const encoded = rawBasic(
      `${client.clientId}:%${client.clientSecret.charCodeAt(0).toString(16)}${client.clientSecret.slice(1)}`,
    );
    for (const authorization of [
      header,
      header.replace('Basic', 'basic'),
      header.replace('Basic', 'BASIC'),
      `${header} `,
      `${header}\t`,
      encoded,
    ]) {
      assertOAuthError(await post({}, authorization), 400, ...GRANT_TYPE_REQUIRED);
    }
    assertOAuthError(await post({ client_id: client.clientId }, header), 400, ...GRANT_TYPE_REQUIRED);
  });

  test('HTTP Basic: a header that is not exactly `Basic base64(id:secret)` is invalid_request, without a challenge', async () => {
    const header = basicAuth(client.clientId, client.clientSecret);
    const b64 = header.slice('Basic '.length);
    for (const authorization of [
      'Basic',
      'Basic !!!',
      `${header} trailing`, // garbage after the credentials
      `${header}!`,
      `Basic x ${header}`, // garbage before them
      `Basic Basic ${b64}`,
      rawBasic(`${client.clientId}${client.clientSecret}`), // no colon
    ]) {
      assertOAuthError(
        await post({ grant_type: 'authorization_code' }, authorization),
        400,
        'invalid_request',
        BAD_HEADER,
      );
    }
    for (const credentials of [`%zz:${client.clientSecret}`, `${client.clientId}:%`, `${client.clientId}:%e9`]) {
      assertOAuthError(
        await post({}, rawBasic(credentials)),
        400,
        'invalid_request',
        'Invalid Authorization header: the credentials are not form-urlencoded.',
      );
    }
  });

  test('HTTP Basic: `+` is a space; an empty client_id is an unknown client; an empty secret fails with a challenge', async () => {
    // ":+" is a one-space secret (a wrong one), not an empty one
    assertOAuthError(
      await post({}, rawBasic(`${client.clientId}:+`)),
      401,
      'invalid_client',
      'Client authentication failed: invalid client secret.',
      { challenge: true },
    );
    // "a+b" is "a b", so the body's "a b" matches it (and then is no client)
    assertOAuthError(
      await post({ client_id: 'a b' }, rawBasic(`a+b:${client.clientSecret}`)),
      401,
      'invalid_client',
      'Client authentication failed: unknown client.',
      { challenge: true },
    );
    assertOAuthError(
      await post({}, rawBasic(`:${client.clientSecret}`)),
      401,
      'invalid_client',
      'Client authentication failed: unknown client.',
      { challenge: true },
    );
    assertOAuthError(
      await post({}, basicAuth(client.clientId, '')),
      401,
      'invalid_client',
      'Client authentication failed: empty client secret.',
      { challenge: true },
    );
    assertOAuthError(
      await post({}, basicAuth(client.clientId, 'f'.repeat(64))),
      401,
      'invalid_client',
      'Client authentication failed: invalid client secret.',
      { challenge: true },
    );
  });

  test('HTTP Basic with a secret or another client_id in the body is invalid_request', async () => {
    const header = basicAuth(client.clientId, client.clientSecret);
    assertOAuthError(
      await post({ client_secret: client.clientSecret }, header),
      400,
      'invalid_request',
      'Client authentication must use only one mechanism: HTTP Basic or client_secret in the body, not both.',
    );
    const other = await createTestClient(t);
    assertOAuthError(
      await post({ client_id: other.clientId }, header),
      400,
      'invalid_request',
      'client_id in the body does not match the HTTP Basic client_id.',
    );
    // an empty client_id is an omitted one (RFC 6749 §3.1): Basic alone authenticates
    assertOAuthError(await post({ client_id: '' }, header), 400, ...GRANT_TYPE_REQUIRED);
  });
});

describe('grant_type', () => {
  const t = useApp();

  test('missing or empty is invalid_request; unknown is unsupported_grant_type naming it; a grant the client lacks is unauthorized_client', async () => {
    const client = await testClient(t);
    assertOAuthError(
      await t.request('POST', TOKEN, { body: creds(client) }),
      400,
      'invalid_request',
      'grant_type is required.',
    );
    assertOAuthError(
      await t.request('POST', TOKEN, { body: { ...creds(client), grant_type: '' } }),
      400,
      'invalid_request',
      'grant_type is required.',
    );
    assertOAuthError(
      await t.request('POST', TOKEN, { body: { ...creds(client), grant_type: 'password' } }),
      400,
      'unsupported_grant_type',
      'Unsupported grant_type "password": use authorization_code or refresh_token.',
    );
    const codeOnly = await createTestClient(t, { grantTypes: ['authorization_code'] });
    assertOAuthError(
      await t.request('POST', TOKEN, { body: refreshBody(codeOnly, UNKNOWN_TOKEN) }),
      400,
      'unauthorized_client',
      'This client is not allowed to use the refresh_token grant.',
    );
    const refreshOnly = await createTestClient(t, { grantTypes: ['refresh_token'] });
    assertOAuthError(
      await t.request('POST', TOKEN, { body: codeExchangeBody(refreshOnly, 'ab'.repeat(32)) }),
      400,
      'unauthorized_client',
      'This client is not allowed to use the authorization_code grant.',
    );
  });
});

describe('authorization_code refusals', () => {
  const t = useApp();
  const exchange = (client: TestClient, code: string, extra: Record<string, unknown> = {}) =>
    t.request('POST', TOKEN, { body: codeExchangeBody(client, code, extra) });

  test('an unknown code is "Invalid authorization code."', async () => {
    const client = await testClient(t);
    for (const code of ['ab'.repeat(32), 'not hex'])
      assertOAuthError(await exchange(client, code), 400, 'invalid_grant', 'Invalid authorization code.');
  });

  test('a code whose authorization was revoked says so (not "already used")', async () => {
    const { code, client } = await authorizeCode(t);
    const first = await exchange(client, code);
    assert.equal(first.statusCode, 200, first.body);
    const revoked = await t.request('POST', REVOKE, { body: { token: first.json().access_token } });
    assert.equal(revoked.statusCode, 200, revoked.body);
    assertOAuthError(
      await exchange(client, code),
      400,
      'invalid_grant',
      'The authorization of this code has been revoked.',
    );
  });

  test('a redirect_uri for a code issued without one is refused, and does not burn it', async () => {
    const { code, client } = await authorizeCode(t, { redirectUri: null });
    assertOAuthError(
      await exchange(client, code),
      400,
      'invalid_grant',
      'redirect_uri was not part of the authorization request.',
    );
    const { redirect_uri: _omit, ...body } = codeExchangeBody(client, code);
    assert.equal((await t.request('POST', TOKEN, { body })).statusCode, 200);
  });

  test('a redirect_uri removed from the app after the code was issued is refused', async () => {
    const owner = await signIn(t, { scopes: ['manageDeveloperApps'] });
    const [kept, removed] = ['https://kept.example/cb', 'https://removed.example/cb'];
    const created = await t.request('POST', '/api/v0/developerApps', {
      token: owner.accessToken,
      body: { name: 'Moving App', redirectUris: [removed, kept] },
    });
    assert.equal(created.statusCode, 200, created.body);
    const client: TestClient = { ...created.json(), redirectUri: removed };
    const { code } = await authorizeCode(t, { client });
    const { code: keptCode } = await authorizeCode(t, { client, redirectUri: kept });
    const updated = await t.request('PUT', '/api/v0/developerApps', {
      token: owner.accessToken,
      body: { clientId: client.clientId, redirectUris: [kept] },
    });
    assert.equal(updated.statusCode, 200, updated.body);
    assertOAuthError(
      await exchange(client, code),
      400,
      'invalid_grant',
      'redirect_uri is no longer registered for this client.',
    );
    assert.equal(
      (await exchange(client, keptCode, { redirect_uri: kept })).statusCode,
      200,
      'a code for a URI still registered is exchanged',
    );
  });

  test('options.issuedAtTimeWindowMs must be a safe non-negative integer (form and JSON), and a refusal does not burn the code', async () => {
    const { code, client } = await authorizeCode(t);
    const INVALID = 'options.issuedAtTimeWindowMs must be a non-negative integer.';
    const form = (options: string) =>
      t.request('POST', TOKEN, {
        headers: FORM,
        body: new URLSearchParams({
          ...(codeExchangeBody(client, code) as Record<string, string>),
          options,
        }).toString(),
      });
    assertOAuthError(await form('{"issuedAtTimeWindowMs":-1}'), 400, 'invalid_request', INVALID);
    assertOAuthError(
      await exchange(client, code, { options: { issuedAtTimeWindowMs: 2 ** 53 } }),
      400,
      'invalid_request',
      INVALID,
    );
    const ok = await form('{"issuedAtTimeWindowMs":0}');
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().token_type, 'Bearer');
  });

  test('a form-encoded options must be a JSON object holding at most an integer issuedAtTimeWindowMs', async () => {
    const { code, client } = await authorizeCode(t);
    const form = (options: string) =>
      t.request('POST', TOKEN, {
        headers: FORM,
        body: new URLSearchParams({
          ...(codeExchangeBody(client, code) as Record<string, string>),
          options,
        }).toString(),
      });
    assertOAuthError(await form('{not json'), 400, 'invalid_request', 'options must be a JSON object.');
    const SHAPE = 'options must be a JSON object with an optional integer issuedAtTimeWindowMs.';
    for (const options of [
      'null',
      '[]',
      '"x"',
      '7',
      '{"other":1}',
      '{"issuedAtTimeWindowMs":60000,"other":1}',
      '{"issuedAtTimeWindowMs":"60000"}',
      '{"issuedAtTimeWindowMs":1.5}',
    ]) {
      assertOAuthError(await form(options), 400, 'invalid_request', SHAPE);
    }
    // none of those burned the code: an empty object (no window given) exchanges it
    const ok = await form('{}');
    assert.equal(ok.statusCode, 200, ok.body);
  });
});

describe('refresh_token refusals', () => {
  const t = useApp();
  const refresh = (client: TestClient, token: string, extra: Record<string, unknown> = {}) =>
    t.request('POST', TOKEN, { body: refreshBody(client, token, extra) });

  test('a well-formed token whose selector names no authorization is "Invalid refresh token." (and revoking it is a no-op 200)', async () => {
    const client = await testClient(t);
    assertOAuthError(await refresh(client, UNKNOWN_TOKEN), 400, 'invalid_grant', 'Invalid refresh token.');
    const res = await t.request('POST', REVOKE, { body: { token: UNKNOWN_TOKEN } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {});
  });

  test('the current refresh token of a revoked authorization says it was revoked', async () => {
    const { client, tokens } = await grant(t);
    assert.equal((await t.request('POST', REVOKE, { body: { token: tokens.access_token } })).statusCode, 200);
    assertOAuthError(await refresh(client, tokens.refresh_token), 400, 'invalid_grant', REVOKED_REFRESH);
  });

  test('scope is split on commas and whitespace, empty items and duplicates dropped; every scope not granted is named', async () => {
    const { client, tokens } = await grant(t, { scopes: ['completeClaims', 'manageClaims'] });
    const all = await refresh(client, tokens.refresh_token, { scope: ' manageClaims,completeClaims ' });
    assert.equal(all.statusCode, 200, all.body);
    assert.equal(all.json().scope, 'manageClaims completeClaims');
    const narrowed = await refresh(client, all.json().refresh_token, { scope: ',completeClaims,,\tcompleteClaims\n' });
    assert.equal(narrowed.statusCode, 200, narrowed.body);
    assert.equal(narrowed.json().scope, 'completeClaims');
    assertOAuthError(
      await refresh(client, narrowed.json().refresh_token, {
        scope: 'manageDeveloperApps completeClaims,readPrivateClaimData',
      }),
      400,
      'invalid_scope',
      'The refresh token was not granted the scope(s): manageDeveloperApps, readPrivateClaimData.',
    );
    const again = await refresh(client, narrowed.json().refresh_token);
    assert.equal(again.statusCode, 200, 'the refused widening did not consume it');
    assert.equal(again.json().scope, 'completeClaims manageClaims');
  });

  test('an operator token (no refresh token of its own) cannot refresh, and the revoke endpoint revokes it', async () => {
    const minted = await runCliInProcess(
      ['token', 'create', '--address', testAccount().address, '--scopes', 'manageClaims', '--expires', '1d'],
      t.database.env,
    );
    assert.equal(minted.code, 0, minted.stderr);
    const token: string = JSON.parse(minted.stdout).access_token;
    const client = await testClient(t);
    assertOAuthError(await refresh(client, token), 400, 'invalid_grant', 'Invalid refresh token.');
    assert.equal(await isSignedIn(t, token), true);
    const res = await t.request('POST', REVOKE, { body: { token } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {});
    assert.equal(await isSignedIn(t, token), false);
  });
});

describe('time bounds under a controllable clock', () => {
  let clock: ManualClock;
  const t = useApp({ clock: true });
  before(async () => {
    clock = t.clock as ManualClock;
  });

  test('options.issuedAtTimeWindowMs is inclusive: exactly the window old passes, one ms more is refused with the issue time', async () => {
    const { code, client } = await authorizeCode(t);
    clock.advance(4_000);
    const ok = await t.request('POST', TOKEN, {
      body: codeExchangeBody(client, code, { options: { issuedAtTimeWindowMs: 4_000 } }),
    });
    assert.equal(ok.statusCode, 200, ok.body);

    const { code: late } = await authorizeCode(t);
    const issued = clock.now();
    clock.advance(4_001);
    assertOAuthError(
      await t.request('POST', TOKEN, {
        body: codeExchangeBody(client, late, { options: { issuedAtTimeWindowMs: 4_000 } }),
      }),
      400,
      'invalid_grant',
      `Not recent enough. The code was issued at ${new Date(issued).toISOString()}, outside options.issuedAtTimeWindowMs (4000 ms).`,
    );
  });
});

describe('session maximum age (SIGNIN_SESSION_MAX_AGE_DAYS=2)', () => {
  let clock: ManualClock;
  const t = useApp({ clock: true, env: { SIGNIN_SESSION_MAX_AGE_DAYS: '2' } });
  before(async () => {
    clock = t.clock as ManualClock;
  });

  test('no token outlives the family: refresh expiries are capped at the end, refreshes work until it, then expire', async () => {
    assert.equal(t.config.signinSessionMaxAgeMs, 2 * DAY);
    const { code, client } = await authorizeCode(t);
    const start = clock.now();
    const end = start + 2 * DAY;
    const first = await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().access_token_expires_at, String(start + DAY));
    assert.equal(first.json().refresh_token_expires_at, String(end), 'capped at the family end, not 60 days');
    assert.equal(first.json().expires_in, DAY / 1000);

    clock.set(start + DAY + DAY / 2);
    const second = await t.request('POST', TOKEN, { body: refreshBody(client, first.json().refresh_token) });
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(second.json().access_token_expires_at, String(end), 'the access token ends with the family too');
    assert.equal(second.json().refresh_token_expires_at, String(end));
    assert.equal(second.json().expires_in, DAY / 2 / 1000);

    clock.set(end - 1);
    const third = await t.request('POST', TOKEN, { body: refreshBody(client, second.json().refresh_token) });
    assert.equal(third.statusCode, 200, third.body);
    assert.equal(third.json().expires_in, 0);
    assert.equal(await isSignedIn(t, third.json().access_token), true);

    clock.set(end);
    assertOAuthError(
      await t.request('POST', TOKEN, { body: refreshBody(client, third.json().refresh_token) }),
      400,
      'invalid_grant',
      'The refresh token has expired.',
    );
    assert.equal(await isSignedIn(t, third.json().access_token), false);
  });
});

// SQLite runs the token transactions of concurrent requests one after another (group commit), so a
// rotation always finds the refresh token it read. On PostgreSQL two refreshes can both read the
// current token before either rotates: holding the row lock until both wait on it forces that race.
describe('a refresh race on PostgreSQL', {
  skip: TEST_DB !== 'postgres' && 'PostgreSQL only: SQLite serializes token transactions',
}, () => {
  const t = useApp();

  test('of two refreshes that read the same token, the loser of the rotation is reuse: it revokes the family', async () => {
    const { client, tokens } = await grant(t);
    const id = tokens.refresh_token.split('.')[0];
    const results = await t.ctx.db.transaction().execute(async (tx) => {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(tx);
      const holder = rows[0]!.pid;
      await sql`select 1 from signin_authorizations where authorization_id = ${id} for update`.execute(tx);
      const pending = [0, 1].map(() => t.request('POST', TOKEN, { body: refreshBody(client, tokens.refresh_token) }));
      // both have read the row and wait for its lock in their conditional UPDATE
      for (let waiting = 0, polls = 0; waiting < 2; polls++) {
        assert.ok(polls < 100_000, 'the two refreshes never waited on the row lock');
        // the first waits for the holder's transaction, the second for the first's tuple lock
        const blocked = await sql<{ n: number }>`
          with w as (select pid, pg_blocking_pids(pid) as b from pg_stat_activity where wait_event_type = 'Lock')
          select count(*)::int as n from w
          where ${holder}::int = any(w.b) or exists (select 1 from w as first where first.pid = any(w.b) and ${holder}::int = any(first.b))`.execute(
          t.ctx.db,
        );
        waiting = blocked.rows[0]!.n;
      }
      return pending;
    });
    const [a, b] = await Promise.all(results);
    const winner = a!.statusCode === 200 ? a! : b!;
    const loser = winner === a ? b! : a!;
    assert.equal(winner.statusCode, 200, winner.body);
    assertOAuthError(
      loser,
      400,
      'invalid_grant',
      'The refresh token has already been used; the authorization has been revoked.',
    );
    assert.equal(await isSignedIn(t, winner.json().access_token), false, 'the family is revoked');
    assertOAuthError(
      await t.request('POST', TOKEN, { body: refreshBody(client, winner.json().refresh_token) }),
      400,
      'invalid_grant',
      REVOKED_REFRESH,
    );
  });
});
