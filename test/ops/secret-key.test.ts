// SECRET_KEY mismatches stop the start: a process whose key cannot open what the database holds
// exits with one line naming SECRET_KEY, instead of starting cleanly and answering 500 wherever
// it meets sealed data (a probe found exactly that: private claim params, on both databases).
// The first refusal is a real process (its exit code as a shell sees it); the other commands run in
// this process (runCliInProcess, the same command code without a Node start each).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createTestDatabase, TEST_DB, type TestDatabase } from '../helpers/app.ts';
import { runCli, runCliInProcess } from '../helpers/cli.ts';
import { startService } from '../helpers/process.ts';
import { randomAddress } from '../claims/helpers.ts';

const MISMATCH = /Invalid configuration: SECRET_KEY is not the key this database was written with/;
const key = () => randomBytes(32).toString('hex');

/** Runs one statement on the test database (the check row is not reachable through the API). */
async function execute(db: TestDatabase, statement: string): Promise<void> {
  if (TEST_DB === 'sqlite') {
    const sqlite = new Database(join(db.env.DATA_DIR!, 'platform.sqlite'));
    sqlite.exec(statement);
    sqlite.close();
    return;
  }
  const url = new URL(db.env.DATABASE_URL!);
  const schema = url.searchParams.get('schema');
  url.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(`set search_path = "${schema}"`);
    await client.query(statement);
  } finally {
    await client.end();
  }
}

describe('SECRET_KEY must open what the database holds', () => {
  let db: TestDatabase;
  const original = key();
  before(async () => {
    db = createTestDatabase();
    // a claim with private params: data sealed with the original key
    const env = { ...db.env, SECRET_KEY: original };
    const apiKey = JSON.parse((await runCliInProcess(['api-key', 'create', '--label', 'k'], env)).stdout).key as string;
    const token = JSON.parse(
      (await runCliInProcess(['token', 'create', '--address', randomAddress(), '--scopes', 'manageClaims'], env))
        .stdout,
    ).access_token as string;
    const service = await startService(env);
    try {
      const res = await fetch(`${service.url}/api/v0/claims`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          claims: [
            {
              claimId: 'sealed',
              plugins: [
                { instanceId: 'uses', pluginId: 'numUses', publicParams: { maxUses: 5 }, privateParams: {} },
                {
                  instanceId: 'pw',
                  pluginId: 'password',
                  publicParams: {},
                  privateParams: { password: 'open sesame' },
                },
              ],
            },
          ],
        }),
      });
      assert.equal(res.status, 200, await res.text());
    } finally {
      await service.stop();
    }
  });
  after(() => db.drop());

  test('another key stops the start with one line naming SECRET_KEY; the original key starts', async () => {
    const other = await runCli(['api-key', 'list'], { ...db.env, SECRET_KEY: key() });
    assert.equal(other.code, 1, other.stderr);
    assert.match(other.stderr, MISMATCH);
    assert.doesNotMatch(other.stderr, /\n\s+at /, 'no stack trace');
    assert.equal((await runCliInProcess(['api-key', 'list'], { ...db.env, SECRET_KEY: original })).code, 0);
  });

  test('a database written before the check is judged by the data it holds, then recorded', async () => {
    await execute(db, 'delete from secret_key_check');
    const other = await runCliInProcess(['api-key', 'list'], { ...db.env, SECRET_KEY: key() });
    assert.equal(other.code, 1, other.stderr);
    assert.match(other.stderr, MISMATCH);
    assert.equal((await runCliInProcess(['api-key', 'list'], { ...db.env, SECRET_KEY: original })).code, 0);
    // the original key is recorded again: another key is refused by the check row alone
    await execute(db, 'delete from claims');
    assert.equal((await runCliInProcess(['api-key', 'list'], { ...db.env, SECRET_KEY: key() })).code, 1);
  });

  test('a new database records whichever key starts it first', async () => {
    const fresh = createTestDatabase();
    try {
      const first = key();
      assert.equal((await runCliInProcess(['api-key', 'list'], { ...fresh.env, SECRET_KEY: first })).code, 0);
      assert.match((await runCliInProcess(['api-key', 'list'], { ...fresh.env, SECRET_KEY: key() })).stderr, MISMATCH);
      assert.equal((await runCliInProcess(['api-key', 'list'], { ...fresh.env, SECRET_KEY: first })).code, 0);
    } finally {
      await fresh.drop();
    }
  });

  test('SQLite: a lost DATA_DIR/secret.key is not silently replaced by a new one', {
    skip: TEST_DB !== 'sqlite' && 'SQLite only: the generated key file',
  }, async () => {
    const fresh = createTestDatabase();
    try {
      assert.equal((await runCliInProcess(['api-key', 'create', '--label', 'x'], fresh.env)).code, 0);
      rmSync(join(fresh.env.DATA_DIR!, 'secret.key'));
      const restarted = await runCliInProcess(['api-key', 'list'], fresh.env);
      assert.equal(restarted.code, 1, restarted.stderr);
      assert.match(restarted.stderr, MISMATCH);
    } finally {
      await fresh.drop();
    }
  });
});
