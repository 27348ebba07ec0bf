// docs/api.md lists every route with its credentials, fields and answers as the route schemas
// declare them: the generated part must be what scripts/api-reference.ts writes from the app's own
// OpenAPI document, so a changed route without `node scripts/api-reference.ts` fails here.
// test-run: once (no database: pure code; scripts/test.mjs)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { buildOpenApiDocument } from '../../clients/typescript/generate.ts';
import {
  API_REFERENCE_FILE,
  API_REFERENCE_MARKERS,
  renderApiReference,
  withReference,
} from '../../scripts/api-reference.ts';

test('docs/api.md shows every route of /openapi.json as the code declares it', async () => {
  const openapi = await buildOpenApiDocument();
  const doc = readFileSync(API_REFERENCE_FILE, 'utf8');
  const [start, end] = API_REFERENCE_MARKERS;
  assert.ok(doc.includes(start) && doc.indexOf(end) > doc.indexOf(start), 'docs/api.md holds the markers');
  assert.ok(
    withReference(doc, renderApiReference(openapi)) === doc,
    'docs/api.md shows a stale route reference: run node scripts/api-reference.ts',
  );
  // one heading per operation, and each names its method and path as /openapi.json does
  let operations = 0;
  for (const [path, item] of Object.entries(openapi.paths as Record<string, Record<string, unknown>>))
    for (const method of Object.keys(item)) {
      operations++;
      assert.ok(doc.includes(`### \`${method.toUpperCase()} ${path}\``), `${method} ${path} is in docs/api.md`);
    }
  assert.ok(operations >= 90, `only ${operations} operations`);
  // an answer code the route declares is explained in words, never as Fastify's "Default Response"
  assert.doesNotMatch(doc, /Default Response/);
});

test('the OpenAPI document words its answers and cites no document outside the repository', async () => {
  const text = JSON.stringify(await buildOpenApiDocument());
  assert.doesNotMatch(text, /Default Response/);
  assert.doesNotMatch(text, /\bSPEC\b|\.\.\/shared/);
});
