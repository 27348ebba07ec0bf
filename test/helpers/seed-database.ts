// A database as an older release left it, for the tests of a later migration: a fresh private
// database migrated up to a given migration only, with rows written through it, ready for
// startApp to apply the rest.
import assert from 'node:assert/strict';
import { openStorage, type DB } from '../../src/db/index.ts';
import { migrateTo } from '../../src/db/migrations/index.ts';
import { createTestDatabase, type TestDatabase } from './app.ts';

/** A new test database at `migration` (the last one applied), with `seed`'s rows; its connection is closed after. */
export async function seedDatabaseAt(migration: string, seed: (db: DB) => Promise<void>): Promise<TestDatabase> {
  const database = createTestDatabase();
  const storage = await openStorage({
    databaseUrl: database.env.DATABASE_URL ?? null,
    dataDir: database.env.DATA_DIR,
  });
  try {
    assert.deepEqual((await migrateTo(storage.db, migration, storage.schema)).at(-1), migration);
    await seed(storage.db);
  } finally {
    await storage.close();
  }
  return database;
}
