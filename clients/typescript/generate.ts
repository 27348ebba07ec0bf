// Generates the typed client's declarations from the service's own OpenAPI document:
//   node clients/typescript/generate.ts          writes openapi.json and schema.d.ts here
//   node clients/typescript/generate.ts --check  exits 1 when they are stale (the test suite runs this check)
// The app is built on a throwaway SQLite database and never listens; `app.swagger()` is the same
// document `GET /openapi.json` serves. The declarations follow openapi-typescript's layout
// (`paths[path][method].parameters / requestBody / responses`), which openapi-fetch consumes.
// (openapi-typescript itself needs the TypeScript 5 compiler API; this project compiles with
// TypeScript 7, which has none, so this small emitter covers the JSON Schema the routes use.)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

type Schema = Record<string, any>;
const HERE = fileURLToPath(new URL('.', import.meta.url));
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export async function buildOpenApiDocument(): Promise<Schema> {
  const { loadConfig } = await import('../../src/config.ts');
  const { createContext } = await import('../../src/context.ts');
  const { buildApp } = await import('../../src/server.ts');
  const dir = mkdtempSync(join(tmpdir(), 'platform-openapi-'));
  try {
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      DATA_DIR: dir,
      RUN_WORKER: 'false',
      SECRET_KEY: '0'.repeat(64),
      LEAF_SIGNER_KEY: '1'.repeat(64),
      PUBLIC_URL: 'http://127.0.0.1:3000',
    });
    const ctx = await createContext(config, { backgroundCheckpoints: false });
    const app = await buildApp(ctx);
    const doc = JSON.parse(JSON.stringify(app.swagger())) as Schema;
    await app.close();
    await ctx.close();
    return doc;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const quote = (s: string) => JSON.stringify(s);
const ident = (s: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(s) ? s : quote(s));
const pad = (n: number) => '    '.repeat(n);

function doc(s: Schema, depth: number): string {
  const text = [s.description, s.pattern ? `Pattern: ${s.pattern}` : undefined].filter(Boolean).join('\n');
  if (!text) return '';
  return `${pad(depth)}/** ${String(text)
    .replace(/\*\//g, '*\\/')
    .replace(/\n/g, `\n${pad(depth)} * `)} */\n`;
}

export function tsType(s: Schema | boolean | undefined, depth: number): string {
  if (s === undefined || s === true) return 'unknown';
  if (s === false) return 'never';
  if (s.$ref) return `components["schemas"][${quote(String(s.$ref).split('/').pop()!)}]`;
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
  if (s.anyOf || s.oneOf) return (s.anyOf ?? s.oneOf).map((x: Schema) => tsType(x, depth)).join(' | ');
  if (s.allOf) return s.allOf.map((x: Schema) => `(${tsType(x, depth)})`).join(' & ');
  if (Array.isArray(s.type)) return s.type.map((t: string) => tsType({ ...s, type: t }, depth)).join(' | ');
  switch (s.type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `(${tsType(s.items, depth)})[]`;
    case 'object':
    case undefined: {
      if (s.type === undefined && !s.properties) return 'unknown';
      const required = new Set<string>(s.required ?? []);
      const lines = Object.entries((s.properties ?? {}) as Record<string, Schema>).map(
        ([k, v]) =>
          `${doc(v, depth + 1)}${pad(depth + 1)}${ident(k)}${required.has(k) ? '' : '?'}: ${tsType(v, depth + 1)};`,
      );
      // With fixed properties too, TypeScript cannot type the other keys apart from them: unknown.
      if (s.additionalProperties !== undefined && s.additionalProperties !== false) {
        const other =
          s.additionalProperties === true || lines.length ? 'unknown' : tsType(s.additionalProperties, depth + 1);
        lines.push(`${pad(depth + 1)}[key: string]: ${other};`);
      } else if (s.additionalProperties === undefined && !s.properties)
        lines.push(`${pad(depth + 1)}[key: string]: unknown;`);
      return lines.length ? `{\n${lines.join('\n')}\n${pad(depth)}}` : 'Record<string, never>';
    }
    default:
      return 'unknown';
  }
}

function params(list: Schema[] | undefined, depth: number): string {
  const groups: Record<string, Schema[]> = {};
  for (const p of list ?? []) (groups[p.in] ??= []).push(p);
  const part = (where: string) => {
    const ps = groups[where];
    if (!ps?.length) return `${pad(depth + 1)}${where}?: never;`;
    const optional = ps.every((p) => !p.required) ? '?' : '';
    const fields = ps.map(
      (p) =>
        `${doc(p, depth + 2)}${pad(depth + 2)}${ident(p.name)}${p.required ? '' : '?'}: ${tsType(p.schema, depth + 2)};`,
    );
    return `${pad(depth + 1)}${where}${optional}: {\n${fields.join('\n')}\n${pad(depth + 1)}};`;
  };
  return `{\n${['query', 'header', 'path', 'cookie'].map(part).join('\n')}\n${pad(depth)}}`;
}

function content(c: Record<string, { schema?: Schema }> | undefined, depth: number): string {
  if (!c) return 'never';
  const lines = Object.entries(c).map(
    ([type, v]) => `${pad(depth + 1)}${quote(type)}: ${tsType(v.schema, depth + 1)};`,
  );
  return `{\n${lines.join('\n')}\n${pad(depth)}}`;
}

function operation(op: Schema, depth: number): string {
  const lines: string[] = [];
  lines.push(`${pad(depth + 1)}parameters: ${params(op.parameters, depth + 1)};`);
  if (op.requestBody)
    lines.push(
      `${pad(depth + 1)}requestBody${op.requestBody.required ? '' : '?'}: {\n${pad(depth + 2)}content: ${content(op.requestBody.content, depth + 2)};\n${pad(depth + 1)}};`,
    );
  else lines.push(`${pad(depth + 1)}requestBody?: never;`);
  const responses = Object.entries((op.responses ?? {}) as Record<string, Schema>).map(
    ([code, r]) =>
      `${pad(depth + 2)}${/^\d+$/.test(code) ? code : ident(code)}: {\n${pad(depth + 3)}headers: { [name: string]: unknown };\n${pad(depth + 3)}content: ${r.content ? content(r.content, depth + 3) : `{\n${pad(depth + 4)}"application/json": unknown;\n${pad(depth + 3)}}`};\n${pad(depth + 2)}};`,
  );
  lines.push(`${pad(depth + 1)}responses: {\n${responses.join('\n')}\n${pad(depth + 1)}};`);
  const summary = op.summary ? `${pad(depth)}/** ${String(op.summary).replace(/\*\//g, '*\\/')} */\n` : '';
  return `${summary}${pad(depth)}${lines.length ? `{\n${lines.join('\n')}\n${pad(depth)}}` : '{}'}`;
}

export function renderSchemaTypes(openapi: Schema): string {
  const out: string[] = [
    "// Generated by clients/typescript/generate.ts from the service's OpenAPI document. Do not edit:",
    '// run `node clients/typescript/generate.ts` after changing a route schema (a test fails while stale).',
    '',
    'export interface paths {',
  ];
  for (const path of Object.keys(openapi.paths).sort()) {
    const item = openapi.paths[path] as Schema;
    out.push(`    ${quote(path)}: {`);
    out.push(`        parameters: { query?: never; header?: never; path?: never; cookie?: never };`);
    for (const m of METHODS) {
      if (item[m]) out.push(`        ${m}: ${operation(item[m], 2).trimStart()};`);
      else out.push(`        ${m}?: never;`);
    }
    out.push('    };');
  }
  out.push('}', '', 'export interface components {', '    schemas: {');
  for (const [name, s] of Object.entries((openapi.components?.schemas ?? {}) as Record<string, Schema>)) {
    out.push(`${doc(s, 2)}        ${quote(name)}: ${tsType(s, 2)};`);
  }
  out.push('    };', '}', '');
  return out.join('\n');
}

export async function generated(): Promise<{ 'openapi.json': string; 'schema.d.ts': string }> {
  const openapi = await buildOpenApiDocument();
  return { 'openapi.json': JSON.stringify(openapi, null, 2) + '\n', 'schema.d.ts': renderSchemaTypes(openapi) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = await generated();
  const check = process.argv.includes('--check');
  let stale = false;
  for (const [name, text] of Object.entries(files)) {
    const path = join(HERE, name);
    let current = '';
    try {
      current = readFileSync(path, 'utf8');
    } catch {}
    if (current === text) continue;
    stale = true;
    if (check) console.error(`stale: clients/typescript/${name} (run node clients/typescript/generate.ts)`);
    else writeFileSync(path, text);
  }
  if (check && stale) process.exit(1);
  if (!check) console.log(stale ? 'clients/typescript: regenerated' : 'clients/typescript: up to date');
}
