// Files at rest: the data directory is created 700, the SQLite database and its WAL/SHM files and
// the generated secrets 600, whatever the process umask; an existing database file readable by
// others is tightened when opened.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, startApp, TEST_DB } from '../helpers/app.ts';

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

test('data directory 700; database, WAL, SHM and secret files 600', async () => {
  const parent = mkdtempSync(join(tmpdir(), 'platform-modes-'));
  const dataDir = join(parent, 'nested', 'data');
  const database = createTestDatabase(TEST_DB);
  const previous = process.umask(0o022); // the common default, under which files come out 644
  try {
    const t = await startApp({ database: { ...database, env: { ...database.env, DATA_DIR: dataDir } } });
    try {
      // something written, so the WAL exists
      assert.equal((await t.request('GET', '/api/v0/claim/none')).statusCode, 404);
      assert.equal(mode(dataDir), '700');
      for (const f of ['secret.key', 'leaf-signer.key']) assert.equal(mode(join(dataDir, f)), '600', f);
      if (TEST_DB === 'sqlite') {
        for (const f of ['platform.sqlite', 'platform.sqlite-wal', 'platform.sqlite-shm']) {
          assert.ok(existsSync(join(dataDir, f)), f);
          assert.equal(mode(join(dataDir, f)), '600', f);
        }
      }
    } finally {
      await t.close();
    }
    if (TEST_DB === 'sqlite') {
      // an existing database from an older version, readable by all: tightened on the next start
      chmodSync(join(dataDir, 'platform.sqlite'), 0o644);
      const again = await startApp({ database: { ...database, env: { ...database.env, DATA_DIR: dataDir } } });
      await again.close();
      assert.equal(mode(join(dataDir, 'platform.sqlite')), '600');
    }
  } finally {
    process.umask(previous);
    rmSync(parent, { recursive: true, force: true });
  }
});
