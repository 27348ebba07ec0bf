// The generated TypeScript client: its declarations match the service's current OpenAPI document
// (stale types fail here), and the client works against a running service.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { generated } from '../../clients/typescript/generate.ts';
import { createPlatformClient } from '../../clients/typescript/index.ts';

describe('TypeScript client', () => {
  const t = useApp({ listen: true });

  test('the committed declarations and OpenAPI document are not stale', async () => {
    const files = await generated();
    for (const [name, text] of Object.entries(files)) {
      const committed = readFileSync(new URL(`../../clients/typescript/${name}`, import.meta.url), 'utf8');
      assert.ok(committed === text, `clients/typescript/${name} is stale: run node clients/typescript/generate.ts`);
    }
  });

  test('calls the service with an API key and gets typed answers and errors', async () => {
    const api = createPlatformClient({ baseUrl: t.url, apiKey: t.apiKey });
    const { data } = await api.GET('/api/v0/plugins/core');
    assert.ok(data?.plugins.some((p) => p.pluginId === 'password'));
    const missing = await api.GET('/api/v0/claim/{claimId}', { params: { path: { claimId: 'nope' } } });
    assert.equal(missing.response.status, 404);
    assert.match(String(missing.error?.errorMessage), /nope/);
    const anonymous = createPlatformClient({ baseUrl: t.url });
    const refused = await anonymous.GET('/api/v0/plugins/core');
    assert.equal(refused.response.status, 401);
  });
});
