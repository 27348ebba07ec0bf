// The edges of `platform app …` and `platform token …`: every usage error names its problem and
// exits 2 without touching the database, the options that apps-tokens.test.ts does not use (description,
// image, grant types, taking an app back, clearing its redirect URIs), the defaults of a token
// (30 days, no label), the duration forms, what `token list` shows, and a failure that is not the
// operator's (exit 1, not a usage error). The commands run in this process (runCliInProcess): what
// a command does is the same code; entry-points.test.ts and cli.test.ts keep the real process.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { createTestDatabase, startApp } from '../helpers/app.ts';
import { cliJson, runCliInProcess } from '../helpers/cli.ts';
import { DATABASE_INDEPENDENT } from '../helpers/once.ts';
import { signIn, testAccount } from '../helpers/signin.ts';
import { SCOPE_IDS } from '../../src/signin/scopes.ts';

const DAY_S = 86_400;

describe('platform app / token: usage errors', DATABASE_INDEPENDENT, () => {
  test('each names its problem, exits 2 and prints nothing on stdout', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['app', 'create', '--no-redirect-uri'], /app create needs --name <name>/],
      [
        ['app', 'create', '--name', 'X'],
        /app create needs --redirect-uri <uri>, or --no-redirect-uri for an app without one/,
      ],
      [['app', 'create', '--name', 'X', '--no-redirect-uri', '--bogus'], /platform app create: .*--bogus/],
      [['app', 'list', '--bogus'], /platform app list: .*--bogus/],
      [['app', 'update', 'a', '--name', 'X', '--bogus'], /platform app update: .*--bogus/],
      [['app', 'rotate-secret', 'a', '--bogus'], /platform app rotate-secret: .*--bogus/],
      [['app', 'delete', 'a', '--bogus'], /platform app delete: .*--bogus/],
      [
        ['app', 'create', '--name', 'X', '--redirect-uri', 'https://a.example/cb', '--no-redirect-uri'],
        /app create takes --redirect-uri or --no-redirect-uri, not both/,
      ],
      [
        ['app', 'create', '--name', 'X', '--no-redirect-uri', '--grant-type', 'password'],
        /--grant-type must be one of authorization_code, refresh_token/,
      ],
      [
        [
          'app',
          'create',
          '--name',
          'X',
          '--no-redirect-uri',
          '--grant-type',
          'refresh_token',
          '--grant-type',
          'implicit',
        ],
        /--grant-type must be one of/,
      ],
      [['app', 'update'], /app update needs exactly one CLIENT_ID/],
      [['app', 'update', 'a', 'b', '--name', 'X'], /app update needs exactly one CLIENT_ID/],
      [
        ['app', 'update', 'a', '--redirect-uri', 'https://a.example/cb', '--no-redirect-uri'],
        /app update takes --redirect-uri or --no-redirect-uri, not both/,
      ],
      [
        ['app', 'update', 'a', '--owner', testAccount().address, '--no-owner'],
        /app update takes --owner or --no-owner, not both/,
      ],
      [['app', 'rotate-secret'], /app rotate-secret needs exactly one CLIENT_ID/],
      [['app', 'delete', 'a', 'b'], /app delete needs exactly one CLIENT_ID/],
      [['app', 'list', 'extra'], /platform app list: .*extra/],
      [['token', 'create', '--scopes', 'manageClaims'], /token create needs --address <address>/],
      [
        ['token', 'create', '--address', testAccount().address],
        new RegExp(`token create needs --scopes \\(comma-separated: ${SCOPE_IDS.join(', ')}\\)`),
      ],
      [
        ['token', 'create', '--address', testAccount().address, '--scopes', 'manageClaims', '--bogus'],
        /platform token create: .*--bogus/,
      ],
      [['token', 'revoke', 'some-id', '--bogus'], /platform token revoke: .*--bogus/],
      [
        ['token', 'create', '--address', testAccount().address, '--scopes', 'manageClaims', '--expires', '12w'],
        /--expires must be a duration such as 90m, 12h or 30d/,
      ],
      [['token', 'revoke'], /token revoke needs exactly one token id/],
      [['token', 'revoke', 'a', 'b'], /token revoke needs exactly one token id/],
      [['token', 'list', 'extra'], /platform token list: .*extra/],
    ];
    // no database is named: a usage error is found before one would be opened
    const results = await Promise.all(
      cases.map(([args]) => runCliInProcess(args, { DATA_DIR: '/nonexistent/never-created' })),
    );
    results.forEach((r, i) => {
      assert.equal(r.code, 2, `${cases[i][0].join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, cases[i][1], cases[i][0].join(' '));
      assert.equal(r.stdout, '', cases[i][0].join(' '));
    });
  });
});

describe('platform app / token: help', DATABASE_INDEPENDENT, () => {
  test('the --help of each command names every option it takes, and its synopsis', async () => {
    const commands: Array<[string, string[]]> = [
      [
        'app create',
        [
          '--name N',
          '--redirect-uri U',
          '--no-redirect-uri',
          '--description D',
          '--grant-type G',
          '--owner ADDRESS',
          'secret printed once',
        ],
      ],
      ['app list', ['--owner ADDRESS', 'never their secrets']],
      [
        'app update',
        [
          'CLIENT_ID',
          '--name N',
          '--description D',
          '--image URL',
          '--redirect-uri U',
          '--no-redirect-uri',
          '--owner ADDRESS',
          '--no-owner',
        ],
      ],
      ['app rotate-secret', ['CLIENT_ID', 'the old one stops working']],
      ['app delete', ['CLIENT_ID', 'revoke every session']],
      [
        'token create',
        [
          'mint an access token for an address',
          'the address the session acts as',
          'granted scopes:',
          'at most 366d',
          'shown by token list',
          'printed once',
          'platform token revoke ID',
        ],
      ],
      ['token list', ['never their values']],
      ['token revoke', ['ID', 'at once']],
    ];
    const results = await Promise.all(commands.map(([name]) => runCliInProcess([...name.split(' '), '--help'])));
    results.forEach((r, i) => {
      const [name, mentions] = commands[i];
      assert.equal(r.code, 0, `${name} --help: ${r.stderr}`);
      for (const m of mentions) assert.ok(r.stdout.includes(m), `${name} --help mentions ${m}:\n${r.stdout}`);
    });
    // each option of the app commands is on a line of its own, with what it does
    const lines: Array<[number, string[]]> = [
      [
        0,
        [
          '--name N\\s+shown on the sign-in page',
          '--redirect-uri U\\s+a redirect URI',
          '--no-redirect-uri\\s+an app without one',
          '--description D\\s+shown',
          '--grant-type G\\s+authorization_code or refresh_token',
          '--owner ADDRESS\\s+hand the app to a wallet',
        ],
      ],
      [
        2,
        [
          '--name N\\s+new name',
          '--description D\\s+new description',
          '--image URL\\s+new image',
          '--redirect-uri U\\s+replace the redirect URIs',
          '--owner ADDRESS\\s+hand the app to a wallet; --no-owner',
        ],
      ],
    ];
    for (const [i, options] of lines)
      for (const option of options)
        assert.match(results[i].stdout, new RegExp(`^\\s*${option}`, 'm'), `${commands[i][0]}: ${option}`);
    // every scope a token can be given is listed, and each option is on a line of its own
    assert.ok(results[5].stdout.includes(`granted scopes: ${SCOPE_IDS.join(', ')}`), results[5].stdout);
    for (const option of ['--address A', '--scopes a,b', '--expires D', '--label L'])
      assert.match(results[5].stdout, new RegExp(`^\\s*${option}\\s`, 'm'), option);
  });
});

describe('platform app: the other options', () => {
  const t = useApp();

  test('--description and --grant-type are stored; list shows every field; update changes, clears and takes back', async () => {
    const created = cliJson(
      await runCliInProcess(
        [
          'app',
          'create',
          '--name',
          'Edge App',
          '--description',
          'for the edges',
          '--no-redirect-uri',
          '--grant-type',
          'authorization_code',
          '--grant-type',
          'authorization_code',
        ],
        t.database.env,
      ),
    );
    assert.deepEqual(
      Object.keys(created),
      ['client_id', 'client_secret', 'redirect_uris'],
      'no owner key without --owner',
    );
    const viewOf = async () =>
      (cliJson(await runCliInProcess(['app', 'list'], t.database.env)) as Array<Record<string, unknown>>).find(
        (a) => a.client_id === created.client_id,
      )!;
    const listed = await viewOf();
    assert.deepEqual(Object.keys(listed), [
      'client_id',
      'name',
      'description',
      'image',
      'redirect_uris',
      'grant_types',
      'owner',
      'created_at',
      'updated_at',
    ]);
    assert.equal(listed.name, 'Edge App');
    assert.equal(listed.description, 'for the edges');
    assert.equal(listed.image, '');
    assert.deepEqual(listed.redirect_uris, []);
    assert.deepEqual(listed.grant_types, ['authorization_code'], 'a repeated grant type is stored once');
    assert.equal(listed.owner, null);
    assert.equal(typeof listed.created_at, 'number');
    assert.equal(listed.updated_at, listed.created_at);

    // the default is both grant types
    const both = cliJson(
      await runCliInProcess(['app', 'create', '--name', 'Both Grants', '--no-redirect-uri'], t.database.env),
    );
    const bothRow = (
      cliJson(await runCliInProcess(['app', 'list'], t.database.env)) as Array<Record<string, unknown>>
    ).find((a) => a.client_id === both.client_id)!;
    assert.deepEqual(bothRow.grant_types, ['authorization_code', 'refresh_token']);

    await new Promise((r) => setTimeout(r, 5));
    const wallet = testAccount();
    const updated = cliJson(
      await runCliInProcess(
        [
          'app',
          'update',
          created.client_id,
          '--description',
          'changed',
          '--image',
          'https://img.example/a.png',
          '--redirect-uri',
          'https://e.example/cb',
          '--owner',
          wallet.address,
        ],
        t.database.env,
      ),
    );
    assert.equal(updated.name, 'Edge App', 'a field not named is kept');
    assert.equal(updated.description, 'changed');
    assert.equal(updated.image, 'https://img.example/a.png');
    assert.deepEqual(updated.redirect_uris, ['https://e.example/cb']);
    assert.equal(updated.owner, wallet.platformAddress);
    assert.ok(updated.updated_at > updated.created_at, 'updated_at moves');
    assert.deepEqual(await viewOf(), updated, 'list shows what update printed');

    const cleared = cliJson(
      await runCliInProcess(['app', 'update', created.client_id, '--no-redirect-uri', '--no-owner'], t.database.env),
    );
    assert.deepEqual(cleared.redirect_uris, []);
    assert.equal(cleared.owner, null, '--no-owner takes the app back to the operator');
    assert.equal(cleared.description, 'changed');
    assert.deepEqual((await viewOf()).owner, null);

    const none = await runCliInProcess(['app', 'update', created.client_id], t.database.env);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /app update needs at least one change/);
  });

  test("a failure that is not the operator's (a damaged app row) exits 1 as an error, not as a usage error", async () => {
    const created = cliJson(
      await runCliInProcess(['app', 'create', '--name', 'Damaged', '--no-redirect-uri'], t.database.env),
    );
    await t.ctx.db
      .updateTable('signin_apps')
      .set({ redirect_uris: 'not json' })
      .where('client_id', '=', created.client_id)
      .execute();
    try {
      const r = await runCliInProcess(['app', 'list'], t.database.env);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /^Error: .*JSON/m);
      assert.doesNotMatch(r.stderr, /--help' shows the usage/);
      assert.equal(r.stdout, '');
    } finally {
      await t.ctx.db.deleteFrom('signin_apps').where('client_id', '=', created.client_id).execute();
    }
  });

  test('a domain refusal is one line with exit 2: bad name', async () => {
    const r = await runCliInProcess(['app', 'create', '--name', ' Padded', '--no-redirect-uri'], t.database.env);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /Invalid name: 1 to 64 characters/);
    assert.equal(r.stdout, '');
    assert.doesNotMatch(r.stderr, /\n\s+at /, `no stack trace: ${r.stderr}`);
  });

  test('an unknown app is a failure, not a usage error: one line, exit 1, no usage hint', async () => {
    const unknown = 'f'.repeat(64);
    for (const [args, line] of [
      [['app', 'update', unknown, '--name', 'New'], `No developer app with clientId ${unknown}`],
      [['app', 'rotate-secret', unknown], `No developer app with clientId ${unknown}`],
      [['app', 'delete', unknown], `No developer app with client id ${unknown}`],
    ] as const) {
      const r = await runCliInProcess([...args], t.database.env);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.deepEqual(
        r.stderr.split('\n').filter((l) => l && !l.startsWith('Database: ')),
        [line],
        args.join(' '),
      );
      assert.equal(r.stdout, '');
    }
  });
});

describe('platform token: defaults, durations and the list', () => {
  const t = useApp();

  test('defaults: 30 days, no label; scopes are trimmed and deduplicated; the address keeps its 0x form', async () => {
    const who = testAccount();
    const minted = cliJson(
      await runCliInProcess(
        ['token', 'create', '--address', who.address, '--scopes', ' manageClaims , ,readPrivateClaimData,manageClaims'],
        t.database.env,
      ),
    );
    assert.deepEqual(Object.keys(minted), [
      'id',
      'access_token',
      'token_type',
      'access_token_expires_at',
      'expires_in',
      'scope',
      'address',
      'platformAddress',
      'label',
    ]);
    assert.equal(minted.expires_in, 30 * DAY_S);
    assert.equal(minted.scope, 'manageClaims readPrivateClaimData');
    assert.equal(minted.label, '');
    assert.equal(minted.address, who.address);
    assert.equal(minted.platformAddress, who.platformAddress);
    assert.equal(typeof minted.access_token_expires_at, 'string');

    const listed = (
      cliJson(await runCliInProcess(['token', 'list'], t.database.env)) as Array<Record<string, unknown>>
    ).find((x) => x.id === minted.id)!;
    assert.deepEqual(Object.keys(listed), [
      'id',
      'address',
      'platformAddress',
      'scopes',
      'label',
      'createdAt',
      'expiresAt',
      'revokedAt',
    ]);
    assert.equal(String(listed.expiresAt), minted.access_token_expires_at);
    assert.equal((listed.expiresAt as number) - (listed.createdAt as number), 30 * DAY_S * 1000);
    assert.equal(listed.label, '');
    assert.deepEqual(listed.scopes, ['manageClaims', 'readPrivateClaimData']);
    assert.equal(listed.address, who.address);

    const st = await t.request('POST', '/api/v0/auth/status', { token: minted.access_token, body: {} });
    assert.equal(st.json().signedIn, true);
    assert.deepEqual(
      st.json().scopes.map((s: { scopeId: string }) => s.scopeId),
      ['manageClaims', 'readPrivateClaimData'],
    );
  });

  test('durations: minutes, seconds and plain milliseconds; the bounds are refused with their text', async () => {
    const address = testAccount().address;
    const mint = (expires: string) =>
      runCliInProcess(
        ['token', 'create', '--address', address, '--scopes', 'manageClaims', '--expires', expires],
        t.database.env,
      );
    const [m, s, ms, msUnit, padded, max] = await Promise.all(
      ['90m', '30s', '5000', '2500ms', ' 12h ', '366d'].map(mint),
    );
    assert.equal(cliJson(m).expires_in, 90 * 60);
    assert.equal(cliJson(s).expires_in, 30);
    assert.equal(cliJson(ms).expires_in, 5, 'a plain number is milliseconds');
    assert.equal(cliJson(msUnit).expires_in, 2);
    assert.equal(cliJson(padded).expires_in, 12 * 3600, 'surrounding spaces are ignored');
    assert.equal(cliJson(max).expires_in, 366 * DAY_S, '366d is the upper bound, included');
    for (const [expires, why] of [
      ['0', /--expires must be more than 0 and at most 366d/],
      ['367d', /--expires must be more than 0 and at most 366d/],
      ['1.5h', /--expires must be a duration/],
      ['1234567890', /--expires must be a duration/],
    ] as const) {
      const r = await mint(expires);
      assert.equal(r.code, 2, `${expires}: ${r.stderr}`);
      assert.match(r.stderr, why, expires);
    }
  });

  test('scopes and labels: an empty list, a label with a quote or over 200 characters are refused', async () => {
    const address = testAccount().address;
    for (const [extra, why] of [
      [
        ['--scopes', ' , '],
        new RegExp(`--scopes needs at least one of ${SCOPE_IDS.join(', ')} \\('platform token create --help'`),
      ],
      [
        ['--scopes', 'root,manageClaims,admin'],
        new RegExp(`Unknown scope\\(s\\) root, admin: use ${SCOPE_IDS.join(', ')}`),
      ],
      [
        ['--scopes', 'manageClaims', '--label', 'say "hi"'],
        /--label must be at most 200 characters, without quotes or control characters/,
      ],
      [['--scopes', 'manageClaims', '--label', 'x'.repeat(201)], /--label must be at most 200 characters/],
      [
        ['--scopes', 'manageClaims', '--label', 'tab\there'],
        /--label must be at most 200 characters, without quotes or control characters/,
      ],
    ] as const) {
      const r = await runCliInProcess(['token', 'create', '--address', address, ...extra], t.database.env);
      assert.equal(r.code, 2, `${extra.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, why);
    }
    const long = cliJson(
      await runCliInProcess(
        ['token', 'create', '--address', address, '--scopes', 'manageClaims', '--label', 'y'.repeat(200)],
        t.database.env,
      ),
    );
    assert.equal(long.label, 'y'.repeat(200), '200 characters are allowed');
  });

  test('a native address is kept in its native form, and the session is a Cosmos one', async () => {
    const who = testAccount();
    const minted = cliJson(
      await runCliInProcess(
        ['token', 'create', '--address', who.platformAddress, '--scopes', 'manageClaims'],
        t.database.env,
      ),
    );
    assert.equal(minted.address, who.platformAddress);
    assert.equal(minted.platformAddress, who.platformAddress);
    const st = (await t.request('POST', '/api/v0/auth/status', { token: minted.access_token, body: {} })).json();
    assert.deepEqual([st.signedIn, st.address, st.chain], [true, who.platformAddress, 'Cosmos']);
    const evm = cliJson(
      await runCliInProcess(['token', 'create', '--address', who.address, '--scopes', 'manageClaims'], t.database.env),
    );
    assert.equal(
      (await t.request('POST', '/api/v0/auth/status', { token: evm.access_token, body: {} })).json().chain,
      'ETH',
    );
  });

  test('token list: oldest first, revoked tokens stay listed with their time, wallet sessions are not listed', async () => {
    const fresh = createTestDatabase();
    const app = await startApp({ database: fresh });
    try {
      const a = cliJson(
        await runCliInProcess(
          ['token', 'create', '--address', testAccount().address, '--scopes', 'manageClaims', '--label', 'first'],
          fresh.env,
        ),
      );
      await new Promise((r) => setTimeout(r, 5));
      const b = cliJson(
        await runCliInProcess(
          ['token', 'create', '--address', testAccount().address, '--scopes', 'manageClaims', '--label', 'second'],
          fresh.env,
        ),
      );
      const revoked = await runCliInProcess(['token', 'revoke', a.id], fresh.env);
      cliJson(revoked);
      assert.match(revoked.stderr, /operator token revoked/);
      const again = await runCliInProcess(['token', 'revoke', a.id], fresh.env);
      assert.equal(again.code, 1);
      assert.match(again.stderr, new RegExp(`No live operator token with id ${a.id}`));
      assert.doesNotMatch(again.stderr, /operator token revoked/, 'nothing revoked, nothing logged');
      await signIn(app); // a wallet session is an authorization too, but not an operator token
      const list = cliJson(await runCliInProcess(['token', 'list'], fresh.env)) as Array<{
        id: string;
        label: string;
        revokedAt: number | null;
        createdAt: number;
      }>;
      assert.deepEqual(
        list.map((x) => x.label),
        ['first', 'second'],
        'the two operator tokens, oldest first, and nothing else',
      );
      assert.equal(typeof list[0].revokedAt, 'number');
      assert.ok(list[0].revokedAt! >= list[0].createdAt);
      assert.equal(list[1].revokedAt, null);
      assert.equal(list[1].id, b.id);
    } finally {
      await app.close();
    }
  });
});
