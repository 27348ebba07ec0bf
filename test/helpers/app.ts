// Starts the real application on a fresh, private database for one test file: SQLite in a
// temporary directory, or (TEST_DB=postgres) its own schema in the test PostgreSQL database.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { LightMyRequestResponse } from 'fastify';
import { loadConfig, type Config } from '../../src/config.ts';
import { createContext, type AppContext } from '../../src/context.ts';
import { buildApp, type App, type BuildOptions } from '../../src/server.ts';
import { createApiKey } from '../../src/api-keys/storage.ts';
import { ManualClock, type Clock } from '../../src/shared/clock.ts';

export const TEST_DB = (process.env.TEST_DB ?? 'sqlite') as 'sqlite' | 'postgres';
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  env: Record<string, string>;
  drop(): Promise<void>;
}

/** A private database: env vars (DATA_DIR / DATABASE_URL) to point a config or a child process at it. */
export function createTestDatabase(kind: 'sqlite' | 'postgres' = TEST_DB): TestDatabase {
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-test-'));
  if (kind === 'sqlite') {
    return { env: { DATA_DIR: dataDir }, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('schema', schema);
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: url.toString() },
    async drop() {
      rmSync(dataDir, { recursive: true, force: true });
      // Under the test runner, schemas are dropped after the whole run (scripts/test.mjs): a drop
      // while another file's migrator introspects the catalog makes that introspection fail.
      if (process.env.TEST_DEFER_SCHEMA_DROP === '1') return;
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`drop schema if exists "${schema}" cascade`);
      await client.end();
    },
  };
}

export interface TestApp {
  app: App;
  ctx: AppContext;
  config: Config;
  clock: Clock;
  /** A valid API key. */
  apiKey: string;
  /** Base URL when started with `listen: true`. */
  url: string;
  database: TestDatabase;
  /** Sends a request; the API key is added unless `apiKey: null`. */
  request(
    method: string,
    path: string,
    opts?: { body?: unknown; headers?: Record<string, string>; apiKey?: string | null; token?: string },
  ): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export async function startApp(
  opts: {
    env?: Record<string, string>;
    clock?: Clock;
    listen?: boolean;
    manualClock?: boolean;
    extend?: BuildOptions['extend'];
    compileSchemas?: BuildOptions['compileSchemas'];
    database?: TestDatabase;
  } = {},
): Promise<TestApp> {
  const database = opts.database ?? createTestDatabase();
  const config = loadConfig({
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PORT: '0',
    ...database.env,
    ...opts.env,
  });
  const clock = opts.clock ?? (opts.manualClock ? new ManualClock() : undefined);
  const ctx = await createContext(config, { clock });
  // a start that fails (a route missing from the access table, a bad config) must not leave the
  // database open, or the test process never ends
  const app = await buildApp(ctx, { extend: opts.extend, compileSchemas: opts.compileSchemas }).catch(
    async (err: unknown) => {
      await ctx.close().catch(() => undefined);
      await database.drop().catch(() => undefined);
      throw err;
    },
  );
  let url = '';
  if (opts.listen) {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const addr = app.server.address();
    url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }
  const { key: apiKey } = await createApiKey(ctx.db, 'test', ctx.clock.now());
  return {
    app,
    ctx,
    config,
    clock: ctx.clock,
    apiKey,
    url,
    database,
    request(method, path, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      if (o.apiKey !== null) headers['x-api-key'] = o.apiKey ?? apiKey;
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      return app.inject({
        method: method as 'GET',
        url: path,
        headers,
        ...(o.body !== undefined ? { payload: o.body as object } : {}),
      });
    },
    async close() {
      await app.close();
      await ctx.close();
      await database.drop();
    },
  };
}
