// Operator commands of sign-in: developer apps (`platform app …`), operator tokens
// (`platform token …`), one-time console sign-in links (`platform console-link`, for an operator
// without a wallet extension; see portal/console-links.ts) and the id_token signing keys
// (`platform signin rotate-keys`). Each prints
// one JSON document on stdout; secrets and tokens are shown only in the output of the command that
// creates them.
import { parseArgs } from 'node:util';
import { CommandFailure, UsageError, withContext, type Command } from '../shared/command.ts';
import type { AppContext } from '../context.ts';
import { toCanonical } from '../shared/addresses.ts';
import { ApiError } from '../shared/errors.ts';
import type { DeveloperApp, GrantType, UpdateAppInput } from './apps.ts';
import { createOperatorToken, listOperatorTokens, parseDuration, revokeOperatorToken } from './operator-tokens.ts';
import { SCOPE_IDS } from './scopes.ts';

// Loaded by the command that runs, so `--help` and the other commands load little.
const load = () => import('./apps.ts');

const print = (value: unknown) => process.stdout.write(JSON.stringify(value, null, 2) + '\n');

/** Runs `fn` on an open context; an unknown id (404) becomes a one-line failure, another 4xx of the domain a usage error. */
function withOperator<T>(fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  return withContext(async (ctx) => {
    try {
      return await fn(ctx);
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 404) throw new CommandFailure(err.message);
      if (err instanceof ApiError && err.statusCode < 500) throw new UsageError(err.message);
      throw err;
    }
  });
}

/** `--owner`: either address form, stored as the canonical platformAddress (resolved after the prefix is configured). */
const owner = (address: string) => toCanonical(address, '--owner');

const appView = (a: DeveloperApp) => ({
  client_id: a.clientId,
  name: a.name,
  description: a.description,
  image: a.image,
  redirect_uris: a.redirectUris,
  grant_types: a.grantTypes,
  owner: a.createdBy,
  created_at: a.createdAt,
  updated_at: a.updatedAt,
});

function oneClientId(positionals: string[], command: string): string {
  if (positionals.length !== 1) throw new UsageError(`${command} needs exactly one CLIENT_ID`);
  return positionals[0];
}

export const signinCommands: Command[] = [
  {
    name: 'app create',
    usage: 'app create --name N --redirect-uri U …  create a developer app (OAuth client); secret printed once',
    details: [
      '--name N              shown on the sign-in page (required)',
      '--redirect-uri U      a redirect URI (repeat for several); or',
      '--no-redirect-uri     an app without one: the code is then shown to the user instead of redirected',
      '--description D       shown on the sign-in page',
      '--grant-type G        authorization_code or refresh_token (repeat; default both)',
      '--owner ADDRESS       hand the app to a wallet (0x… or native address): it can then manage it over HTTP',
    ].join('\n'),
    async run(args) {
      const { createDeveloperApp, GRANT_TYPES } = await load();
      const { values } = parseArgs({
        args,
        options: {
          name: { type: 'string' },
          'redirect-uri': { type: 'string', multiple: true },
          'no-redirect-uri': { type: 'boolean' },
          description: { type: 'string' },
          'grant-type': { type: 'string', multiple: true },
          owner: { type: 'string' },
        },
        strict: true,
      });
      if (!values.name) throw new UsageError('app create needs --name <name>');
      const redirectUris = values['redirect-uri'] ?? [];
      if (redirectUris.length === 0 && !values['no-redirect-uri'])
        throw new UsageError('app create needs --redirect-uri <uri>, or --no-redirect-uri for an app without one');
      if (redirectUris.length > 0 && values['no-redirect-uri'])
        throw new UsageError('app create takes --redirect-uri or --no-redirect-uri, not both');
      const grantTypes = values['grant-type'];
      if (grantTypes?.some((g) => !GRANT_TYPES.includes(g as GrantType)))
        throw new UsageError(`--grant-type must be one of ${GRANT_TYPES.join(', ')}`);
      const name = values.name;
      const { app, clientSecret } = await withOperator((ctx) =>
        createDeveloperApp(
          ctx.db,
          {
            name,
            redirectUris,
            ...(values.description ? { description: values.description } : {}),
            ...(grantTypes ? { grantTypes: grantTypes as GrantType[] } : {}),
            ...(values.owner !== undefined ? { createdBy: owner(values.owner) } : {}),
          },
          ctx.clock.now(),
        ),
      );
      print({
        client_id: app.clientId,
        client_secret: clientSecret,
        redirect_uris: app.redirectUris,
        ...(app.createdBy ? { owner: app.createdBy } : {}),
      });
    },
  },

  {
    name: 'app list',
    usage: 'app list [--owner ADDRESS]    list developer apps (never their secrets)',
    async run(args) {
      const { listAllDeveloperApps } = await load();
      const { values } = parseArgs({ args, options: { owner: { type: 'string' } }, strict: true });
      print(
        (
          await withOperator(async (ctx) =>
            listAllDeveloperApps(ctx.db, values.owner === undefined ? undefined : owner(values.owner)),
          )
        ).map(appView),
      );
    },
  },

  {
    name: 'app update',
    usage: 'app update CLIENT_ID [options] change a developer app',
    details: [
      '--name N              new name',
      '--description D       new description',
      '--image URL           new image',
      '--redirect-uri U      replace the redirect URIs (repeat for several); --no-redirect-uri removes them all',
      '--owner ADDRESS       hand the app to a wallet; --no-owner takes it back to the operator',
    ].join('\n'),
    async run(args) {
      const apps = await load();
      const { updateDeveloperApp } = apps;
      const { values, positionals } = parseArgs({
        args,
        options: {
          name: { type: 'string' },
          description: { type: 'string' },
          image: { type: 'string' },
          'redirect-uri': { type: 'string', multiple: true },
          'no-redirect-uri': { type: 'boolean' },
          owner: { type: 'string' },
          'no-owner': { type: 'boolean' },
        },
        strict: true,
        allowPositionals: true,
      });
      const clientId = oneClientId(positionals, 'app update');
      if (values['redirect-uri'] && values['no-redirect-uri'])
        throw new UsageError('app update takes --redirect-uri or --no-redirect-uri, not both');
      if (values.owner !== undefined && values['no-owner'])
        throw new UsageError('app update takes --owner or --no-owner, not both');
      const app = await withOperator(async (ctx) => {
        const patch: UpdateAppInput = {
          ...(values.name !== undefined ? { name: values.name } : {}),
          ...(values.description !== undefined ? { description: values.description } : {}),
          ...(values.image !== undefined ? { image: values.image } : {}),
          ...(values['redirect-uri']
            ? { redirectUris: values['redirect-uri'] }
            : values['no-redirect-uri']
              ? { redirectUris: [] }
              : {}),
          ...(values.owner !== undefined
            ? { createdBy: owner(values.owner) }
            : values['no-owner']
              ? { createdBy: null }
              : {}),
        };
        if (Object.keys(patch).length === 0) throw new UsageError('app update needs at least one change (see --help)');
        return (await updateDeveloperApp(ctx, clientId, apps.OPERATOR, patch, ctx.clock.now())).app;
      });
      print(appView(app));
    },
  },

  {
    name: 'app rotate-secret',
    usage: 'app rotate-secret CLIENT_ID   replace the client secret (new one printed once; the old one stops working)',
    async run(args) {
      const apps = await load();
      const { updateDeveloperApp } = apps;
      const { positionals } = parseArgs({ args, options: {}, strict: true, allowPositionals: true });
      const clientId = oneClientId(positionals, 'app rotate-secret');
      const r = await withOperator((ctx) =>
        updateDeveloperApp(ctx, clientId, apps.OPERATOR, { rotateClientSecret: true }, ctx.clock.now()),
      );
      print({ client_id: r.app.clientId, client_secret: r.clientSecret });
    },
  },

  {
    name: 'app delete',
    usage: 'app delete CLIENT_ID          delete a developer app and revoke every session issued to it',
    async run(args) {
      const apps = await load();
      const { deleteDeveloperApp, getDeveloperApp } = apps;
      const { positionals } = parseArgs({ args, options: {}, strict: true, allowPositionals: true });
      const clientId = oneClientId(positionals, 'app delete');
      await withOperator(async (ctx) => {
        if (!(await getDeveloperApp(ctx.db, clientId)))
          throw new CommandFailure(`No developer app with client id ${clientId}`);
        await deleteDeveloperApp(ctx, clientId, apps.OPERATOR, ctx.clock.now());
      });
      print({ client_id: clientId, deleted: true });
    },
  },

  {
    name: 'token create',
    usage:
      'token create --address A --scopes a,b [--expires 30d] [--label L]  mint an access token for an address (backends, scripts)',
    details: [
      `--address A           the address the session acts as (0x… or native)`,
      `--scopes a,b          granted scopes: ${SCOPE_IDS.join(', ')}`,
      '--expires D           lifetime: 90m, 12h, 30d (default 30d, at most 366d); there is no refresh token',
      '--label L             what it is for; shown by token list',
      'The token is printed once; use it as Authorization: Bearer <access_token> together with x-api-key.',
      "Creation and revocation are logged; 'platform token revoke ID' ends it at once.",
    ].join('\n'),
    async run(args) {
      const { values } = parseArgs({
        args,
        options: {
          address: { type: 'string' },
          scopes: { type: 'string' },
          expires: { type: 'string' },
          label: { type: 'string' },
        },
        strict: true,
      });
      if (!values.address) throw new UsageError('token create needs --address <address>');
      if (!values.scopes)
        throw new UsageError(`token create needs --scopes (comma-separated: ${SCOPE_IDS.join(', ')})`);
      const ttlMs = values.expires === undefined ? undefined : parseDuration(values.expires);
      if (ttlMs === null) throw new UsageError('--expires must be a duration such as 90m, 12h or 30d');
      const scopes = values.scopes
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const t = await withOperator((ctx) =>
        createOperatorToken(ctx, {
          address: values.address!,
          scopes,
          ...(ttlMs !== undefined ? { ttlMs } : {}),
          ...(values.label !== undefined ? { label: values.label } : {}),
        }),
      );
      print({
        id: t.id,
        access_token: t.accessToken,
        token_type: 'Bearer',
        access_token_expires_at: String(t.expiresAt),
        expires_in: Math.floor((t.expiresAt - t.createdAt) / 1000),
        scope: t.scopes.join(' '),
        address: t.address,
        platformAddress: t.platformAddress,
        label: t.label,
      });
    },
  },

  {
    name: 'token list',
    usage: 'token list                    list operator tokens (never their values)',
    async run(args) {
      parseArgs({ args, options: {}, strict: true });
      print(await withOperator((ctx) => listOperatorTokens(ctx)));
    },
  },

  {
    name: 'token revoke',
    usage: 'token revoke ID               revoke an operator token at once',
    async run(args) {
      const { positionals } = parseArgs({ args, options: {}, strict: true, allowPositionals: true });
      if (positionals.length !== 1) throw new UsageError('token revoke needs exactly one token id');
      const id = positionals[0];
      if (!(await withOperator((ctx) => revokeOperatorToken(ctx, id)))) {
        process.stderr.write(`No live operator token with id ${id}\n`);
        return 1;
      }
      print({ id, revoked: true });
    },
  },

  {
    name: 'console-link',
    usage: 'console-link --address A [--expires 10m]  print a one-time console sign-in link for an address',
    details: [
      '--address A           the address the console session acts as (0x… or native)',
      '--expires D           how long the link can be used: 90s, 10m, 2h (default 10m, at most 24h)',
      'The link works once, at the service’s own address (PUBLIC_URL); the session it opens lasts',
      'like a wallet sign-in (12 hours). Creation and use are logged without the secret.',
    ].join('\n'),
    async run(args) {
      const { values } = parseArgs({
        args,
        options: { address: { type: 'string' }, expires: { type: 'string' } },
        strict: true,
      });
      if (!values.address) throw new UsageError('console-link needs --address <address>');
      const ttlMs = values.expires === undefined ? undefined : parseDuration(values.expires);
      if (ttlMs === null) throw new UsageError('--expires must be a duration such as 90s, 10m or 2h');
      const address = values.address;
      // loaded here: the other commands do not need the console's session code
      const { createConsoleLink } = await import('../portal/console-links.ts');
      const link = await withOperator((ctx) =>
        createConsoleLink(ctx, { address, ...(ttlMs !== undefined ? { ttlMs } : {}) }),
      );
      process.stdout.write(
        JSON.stringify(
          {
            url: link.url,
            id: link.linkId,
            address: link.address,
            platformAddress: link.platformAddress,
            expires_at: new Date(link.expiresAt).toISOString(),
          },
          null,
          2,
        ) + '\n',
      );
    },
  },

  {
    name: 'signin rotate-keys',
    usage:
      'signin rotate-keys            add a new id_token signing key (OpenID Connect); the old one stays in the JWKS until its id_tokens expire',
    details: [
      'Every process on the database reads the new key within a minute, and it signs from then on.',
      'The replaced key stays in the JWKS until the last id_token it signed has expired (1 hour after',
      'the new key took over, plus a minute); keys that have left the JWKS are deleted.',
      'Prints { kid, generation, signs_from, previous: { kid, published_until }, deleted }.',
    ].join('\n'),
    async run(args) {
      parseArgs({ args, options: {}, strict: true });
      // loaded here: the key code (and jose) is not needed by the other commands
      const { rotateSigningKeys } = await import('./signing-keys.ts');
      const r = await withOperator((ctx) => rotateSigningKeys(ctx));
      if (!r) throw new CommandFailure('Another key rotation ran at the same time; run the command again.');
      print({
        kid: r.kid,
        generation: r.generation,
        signs_from: String(r.signsFrom),
        previous: r.previous ? { kid: r.previous.kid, published_until: String(r.previous.publishedUntil) } : null,
        deleted: r.deleted,
      });
    },
  },
];
