// `platform app create --name N --redirect-uri U [--redirect-uri U2 …]`: an operator-owned developer
// app. Prints { client_id, client_secret, redirect_uris }; the secret is shown only here.
import { parseArgs } from 'node:util';
import { registerCommand, UsageError, withContext } from '../cli.ts';
import { ApiError } from '../shared/errors.ts';
import { createDeveloperApp, GRANT_TYPES, type GrantType } from './apps.ts';

registerCommand({
  name: 'app create',
  usage: 'app create --name N --redirect-uri U …  create a developer app (OAuth client); secret printed once',
  async run(args) {
    const { values } = parseArgs({
      args,
      options: {
        name: { type: 'string' },
        'redirect-uri': { type: 'string', multiple: true },
        description: { type: 'string' },
        'grant-type': { type: 'string', multiple: true },
      },
      strict: true,
    });
    if (!values.name) throw new UsageError('app create needs --name <name>');
    const grantTypes = values['grant-type'];
    if (grantTypes?.some((g) => !GRANT_TYPES.includes(g as GrantType))) throw new UsageError(`--grant-type must be one of ${GRANT_TYPES.join(', ')}`);
    const name = values.name;
    try {
      const { app, clientSecret } = await withContext((ctx) =>
        createDeveloperApp(
          ctx.db,
          { name, redirectUris: values['redirect-uri'] ?? [], ...(values.description ? { description: values.description } : {}), ...(grantTypes ? { grantTypes: grantTypes as GrantType[] } : {}) },
          ctx.clock.now(),
        ),
      );
      process.stdout.write(JSON.stringify({ client_id: app.clientId, client_secret: clientSecret, redirect_uris: app.redirectUris }, null, 2) + '\n');
    } catch (err) {
      if (err instanceof ApiError) throw new UsageError(err.message);
      throw err;
    }
  },
});
