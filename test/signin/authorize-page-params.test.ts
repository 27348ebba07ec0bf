// GET /signin/authorize, the edges: the exact params JSON the page script reads (each optional
// field only when given; `<`, U+2028, U+2029 escaped), the exact deny URL, the page's texts and
// titles, the error page (no script), the response headers, the querystring limits (the page or an
// error redirect), display-only parameters, a repeated parameter, the exact error redirects, the
// route's OpenAPI entry, and that an unexpected failure stays a 500 rather than the error page.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { createTestClient, type TestClient } from '../helpers/signin.ts';

const CALLBACK = 'https://shop.example/cb?x=1';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const TAIL = ' Signing costs nothing and sends no transaction.</p>';

const paramsText = (html: string) => /<script type="application\/json" id="params">(.*?)<\/script>/s.exec(html)![1];
const paramsOf = (html: string) => JSON.parse(paramsText(html)) as Record<string, unknown>;
const nonceOf = (csp: unknown) => /script-src 'nonce-([^']+)'/.exec(String(csp))![1];
const csp = (nonce: string) =>
  `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

describe('authorize page edges', () => {
  let client: TestClient;
  const t = useApp();
  before(async () => {
    client = await createTestClient(t, { name: 'Shop', redirectUris: [CALLBACK] });
  });

  const get = (qs: string) => t.request('GET', `/signin/authorize?${qs}`, { apiKey: null });
  const page = (q: Record<string, string>) => get(String(new URLSearchParams(q)));
  const base = () => ({ response_type: 'code', client_id: client.clientId, redirect_uri: CALLBACK });

  test('every optional parameter given: the params JSON carries each, the method as S256, and the deny URL with the state', async () => {
    const res = await page({
      ...base(),
      scope: 'completeClaims',
      state: 's1',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(paramsOf(res.body), {
      client_id: client.clientId,
      redirect_uri: CALLBACK,
      scope: 'completeClaims',
      state: 's1',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
      appName: 'Shop',
      nativeChainId: 'platform-1',
      denyUrl: 'https://shop.example/cb?x=1&error=access_denied&state=s1',
    });
  });

  test('only client_id given: no optional field at all, and no deny URL', async () => {
    const res = await page({ response_type: 'code', client_id: client.clientId });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(paramsOf(res.body), {
      client_id: client.clientId,
      appName: 'Shop',
      nativeChainId: 'platform-1',
      denyUrl: null,
    });
  });

  test('a redirect URI without a state: the deny URL has no state', async () => {
    const res = await page(base());
    assert.equal(res.statusCode, 200);
    assert.deepEqual(paramsOf(res.body), {
      client_id: client.clientId,
      redirect_uri: CALLBACK,
      appName: 'Shop',
      nativeChainId: 'platform-1',
      denyUrl: 'https://shop.example/cb?x=1&error=access_denied',
    });
  });

  test('<, U+2028 and U+2029 are escaped in the params JSON and come back intact', async () => {
    const state = 'a\u2028b\u2029c</script><!--d';
    const res = await page({ ...base(), state });
    assert.equal(res.statusCode, 200);
    const raw = paramsText(res.body);
    assert.ok(!raw.includes('<') && !raw.includes('\u2028') && !raw.includes('\u2029'), raw);
    assert.ok(raw.includes('"state":"a\\u2028b\\u2029c\\u003c/script>\\u003c!--d"'), raw);
    const params = paramsOf(res.body);
    assert.equal(params.state, state);
    const deny = new URL(String(params.denyUrl));
    assert.equal(deny.origin + deny.pathname, 'https://shop.example/cb');
    assert.deepEqual(
      [...deny.searchParams],
      [
        ['x', '1'],
        ['error', 'access_denied'],
        ['state', state],
      ],
    );
  });

  test('the page headers, title, style and texts with a redirect URI and scopes', async () => {
    const res = await page({ ...base(), scope: 'manageClaims completeClaims' });
    assert.equal(res.statusCode, 200);
    const nonce = nonceOf(res.headers['content-security-policy']);
    assert.equal(res.headers['content-security-policy'], csp(nonce));
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    const html = res.body;
    assert.ok(html.includes('<meta name="referrer" content="no-referrer"><title>Sign in to Shop</title>'), 'the title');
    // `code{display:block}` would otherwise show the hidden code element: the rule matters
    assert.ok(html.includes(`<style nonce="${nonce}">\n[hidden]{display:none!important}\n`), 'the [hidden] rule');
    assert.ok(html.includes('<h1>Sign in to Shop</h1>'));
    assert.ok(html.includes('<p>Shop asks you to prove that you own your wallet address and to allow:</p>'));
    assert.ok(
      html.includes(
        '<ul id="scopes">' +
          '<li><b>Complete Claims</b> <span class="muted">(completeClaims)</span><br><span class="muted">Complete claims on your behalf (claims with an initiatedBy plugin; reserved codes).</span></li>' +
          '<li><b>Manage Claims</b> <span class="muted">(manageClaims)</span><br><span class="muted">Create, update and delete claims.</span></li>' +
          '</ul>\n',
      ),
      'the scope list, in the order of the scope table',
    );
    assert.ok(html.includes(`<p class="muted">You will be returned to <b>https://shop.example</b>.${TAIL}`));
    assert.ok(!html.includes('code to copy'));
    assert.ok(html.includes(`<script nonce="${nonce}">`));
  });

  test('the texts without a redirect URI or scopes', async () => {
    const res = await page({ response_type: 'code', client_id: client.clientId });
    assert.equal(res.statusCode, 200);
    const html = res.body;
    assert.ok(html.includes('<p>Shop asks you to prove that you own your wallet address.</p>'));
    assert.ok(html.includes('<p class="muted" id="scopes">No API scopes requested.</p>'));
    assert.ok(!html.includes('<ul'));
    assert.ok(html.includes(`<p class="muted">You will get a code to copy into the app.${TAIL}`));
    assert.ok(!html.includes('returned to'));
  });

  test('the error page: its title, its message, and no script', async () => {
    const res = await page({ response_type: 'code', client_id: 'nope' });
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers.location, undefined);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    const nonce = nonceOf(res.headers['content-security-policy']);
    assert.equal(res.headers['content-security-policy'], csp(nonce));
    assert.ok(
      res.body.includes(`<title>Sign-in error</title><style nonce="${nonce}">\n[hidden]{display:none!important}\n`),
    );
    assert.ok(
      res.body.endsWith(
        '</style></head>\n<body><main><h1>This sign-in link is not valid</h1><p class="error" id="error">Invalid client_id: no developer app has this client ID.</p>' +
          '<p class="muted">Go back to the app and try again.</p></main></body></html>',
      ),
      res.body.slice(-300),
    );
    assert.ok(!res.body.includes('<script'));
  });

  type Response = Awaited<ReturnType<typeof get>>;
  /** An error redirect to the redirect URI: its own query, then exactly `expected` (error, description, state). */
  const assertRedirected = (res: Response, expected: [string, string][], label?: string) => {
    assert.equal(res.statusCode, 302, label);
    assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8', label);
    assert.equal(res.headers['referrer-policy'], 'no-referrer', label);
    assert.equal(res.body, '', label);
    const loc = new URL(String(res.headers.location));
    assert.equal(loc.origin + loc.pathname, 'https://shop.example/cb', label);
    assert.deepEqual([...loc.searchParams], [['x', '1'], ...expected], label);
  };
  /** The error page, never a redirect: its message. */
  const assertShown = (res: Response, message: string, label?: string) => {
    assert.equal(res.statusCode, 400, label);
    assert.equal(res.headers.location, undefined, label);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8', label);
    assert.match(String(res.headers['content-security-policy']), /default-src 'none'/, label);
    assert.ok(res.body.includes(`<p class="error" id="error">${message}</p>`), label);
  };
  const invalid = (description: string): [string, string][] => [
    ['error', 'invalid_request'],
    ['error_description', description],
  ];

  test('an over-long client_id or redirect_uri is shown on the page; any other goes back as invalid_request', async () => {
    const limits: [string, number][] = [
      ['response_type', 64],
      ['client_id', 128],
      ['redirect_uri', 2048],
      ['scope', 1024],
      ['state', 1024],
      ['code_challenge', 128],
      ['code_challenge_method', 16],
      ['nonce', 1024],
      ['prompt', 64],
    ];
    for (const [name, max] of limits) {
      const res = await page({ ...base(), state: 's1', [name]: 'a'.repeat(max + 1) });
      const message = `Parameter ${name} must be at most ${max} characters.`;
      if (name === 'client_id' || name === 'redirect_uri') assertShown(res, message, name);
      // an over-long state is not echoed back; a valid one is
      else
        assertRedirected(
          res,
          [...invalid(message), ...(name === 'state' ? [] : [['state', 's1'] as [string, string]])],
          name,
        );
    }
    // at the limit it is let through
    const state = 'a'.repeat(1024);
    const res = await page({ ...base(), state });
    assert.equal(res.statusCode, 200);
    assert.equal(paramsOf(res.body).state, state);
  });

  test('display-only parameters are allowed and ignored', async () => {
    const res = await page({ ...base(), claimId: '42', utm_source: 'mail' });
    assert.equal(res.statusCode, 200);
    // the params JSON is exactly that of the request without them
    assert.deepEqual(paramsOf(res.body), paramsOf((await page(base())).body));
  });

  // A repeated parameter goes back to the redirect URI as invalid_request (the first one repeated
  // named, the state only when it was given once), except a repeated client_id or redirect_uri, or
  // one without a redirect URI: those are shown on the page.
  const q = (extra: Record<string, string> = {}) => String(new URLSearchParams({ ...base(), ...extra }));
  const evil = 'https%3A%2F%2Fevil.example%2Fcb';
  const repeated: { when: string; qs: () => string; redirected?: [string, string][]; shown?: string }[] = [
    {
      when: 'a display-only parameter: redirected with the state',
      qs: () => `${q({ state: 's1' })}&claimId=1&claimId=2`,
      redirected: [...invalid('Parameter claimId must not be repeated.'), ['state', 's1']],
    },
    {
      when: 'a display-only parameter without a redirect URI: shown on the page',
      qs: () => `response_type=code&client_id=${client.clientId}&claimId=1&claimId=2`,
      shown: 'Parameter claimId must not be repeated.',
    },
    {
      when: 'two parameters: the first is named, and a repeated state is not echoed back joined',
      qs: () => `${q()}&claimId=1&claimId=2&state=a&state=b`,
      redirected: invalid('Parameter claimId must not be repeated.'),
    },
    {
      when: 'an empty-named parameter: redirected (only client_id and redirect_uri are held on the page)',
      qs: () => `${q()}&=1&=2`,
      redirected: invalid('Parameter  must not be repeated.'),
    },
    {
      when: 'client_id: shown on the page, never redirected',
      qs: () => `${q()}&client_id=${evil}&client_id=x`,
      shown: 'Parameter client_id must not be repeated.',
    },
    {
      when: 'redirect_uri: shown on the page, never redirected',
      qs: () => `${q()}&redirect_uri=${evil}&redirect_uri=x`,
      shown: 'Parameter redirect_uri must not be repeated.',
    },
    {
      when: 'state: redirected without it',
      qs: () => `${q()}&state=a&state=b`,
      redirected: invalid('Parameter state must not be repeated.'),
    },
  ];
  for (const c of repeated) {
    test(`a repeated ${c.when}`, async () => {
      const res = await get(c.qs());
      if (c.shown) assertShown(res, c.shown);
      else assertRedirected(res, c.redirected!);
    });
  }

  test('other errors redirect with exactly error, error_description, and the state only when given', async () => {
    const cases: [Record<string, string>, [string, string][]][] = [
      [
        { response_type: 'token' },
        [
          ['error', 'unsupported_response_type'],
          ['error_description', 'response_type must be code.'],
        ],
      ],
      // RFC 6749 §4.1.2.1: a missing parameter is invalid_request, an unknown value unsupported_response_type
      [{ response_type: '' }, invalid('response_type is required (it must be code).')],
      [{ code_challenge_method: 'S256' }, invalid('code_challenge_method was given without code_challenge.')],
    ];
    for (const [extra, expected] of cases) {
      for (const state of [undefined, 'st']) {
        const res = await page({ ...base(), ...extra, ...(state !== undefined ? { state } : {}) });
        assertRedirected(
          res,
          [...expected, ...(state !== undefined ? [['state', state] as [string, string]] : [])],
          JSON.stringify({ extra, state }),
        );
      }
    }
  });

  test('the OpenAPI entry: tag sign-in, its summary, no API key, the querystring limits', async () => {
    const res = await t.request('GET', '/openapi.json');
    assert.equal(res.statusCode, 200);
    const str = (name: string, maxLength: number) => ({
      schema: { type: 'string', maxLength },
      in: 'query',
      name,
      required: false,
    });
    assert.deepEqual((res.json() as { paths: Record<string, unknown> }).paths['/signin/authorize'], {
      get: {
        summary: 'The authorization page (HTML) an app sends its users to',
        tags: ['sign-in'],
        parameters: [
          str('response_type', 64),
          str('client_id', 128),
          str('redirect_uri', 2048),
          str('scope', 1024),
          str('state', 1024),
          str('code_challenge', 128),
          str('code_challenge_method', 16),
          str('nonce', 1024),
          str('prompt', 64),
        ],
        security: [],
        responses: { 200: { description: 'Success' } },
      },
    });
  });
});

describe('authorize page: an unexpected failure', () => {
  const t = useApp();

  test('is a 500, not the "link is not valid" page', async () => {
    const client = await createTestClient(t, { name: 'Shop', redirectUris: [CALLBACK] });
    // the app lookup fails: only an AuthorizeError may become the error page or a redirect
    await t.ctx.db.schema.alterTable('signin_apps').renameTo('signin_apps_gone').execute();
    const res = await t.request(
      'GET',
      `/signin/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.clientId, redirect_uri: CALLBACK })}`,
      { apiKey: null },
    );
    assert.equal(res.statusCode, 500);
    assert.equal(res.headers.location, undefined);
    assert.deepEqual(res.json(), { errorMessage: 'Internal server error' });
    // back, so that closing the app finds its tables as they were
    await t.ctx.db.schema.alterTable('signin_apps_gone').renameTo('signin_apps').execute();
  });
});
