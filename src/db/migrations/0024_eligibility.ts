// Eligibility (src/eligibility/): a change log written by triggers, so every process's in-memory
// eligibility index learns what changed (a claim, its state, a store, a collection, a balance)
// whichever process or capability wrote it, in the same transaction as the write; plus the
// indexes that let one address's footprint (its stores, its claim numbers) be read directly.
//
// kinds: 'claim' (k1 = claim id; the row or its state changed), 'store' (k1 = dynamic data id),
// 'collection' (k1 = collection id), 'balance' (k1 = address, k2 = collection id), 'member' (k1 =
// address, k2 = dynamic data id: added to or removed from a store).
import { sql, type Kysely } from 'kysely';
import { SqliteAdapter } from 'kysely';

const WATCHED: Array<{ table: string; kind: string; k1: string; k2?: string; ops: string[] }> = [
  { table: 'claims', kind: 'claim', k1: 'claim_id', ops: ['INSERT', 'UPDATE', 'DELETE'] },
  { table: 'claim_state', kind: 'claim', k1: 'claim_id', ops: ['INSERT', 'UPDATE', 'DELETE'] },
  { table: 'dynamic_stores', kind: 'store', k1: 'dynamic_data_id', ops: ['INSERT', 'UPDATE', 'DELETE'] },
  { table: 'chain_collections', kind: 'collection', k1: 'collection_id', ops: ['INSERT', 'UPDATE'] },
  { table: 'chain_balances', kind: 'balance', k1: 'address', k2: 'collection_id', ops: ['INSERT', 'UPDATE'] },
  { table: 'dynamic_store_members', kind: 'member', k1: 'address', k2: 'dynamic_data_id', ops: ['INSERT', 'DELETE'] },
];

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  let log = db.schema.createTable('eligibility_changes');
  log = sqlite
    ? log.addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
    : log.addColumn('seq', sql`bigserial`, (c) => c.primaryKey());
  await log
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('k1', 'text', (c) => c.notNull())
    .addColumn('k2', 'text', (c) => c.notNull())
    .execute();

  for (const w of WATCHED) {
    for (const op of w.ops) {
      const name = `eligibility_${w.table}_${op.toLowerCase()}`;
      const row = op === 'DELETE' ? 'OLD' : 'NEW';
      const k2 = w.k2 ? `${row}.${w.k2}` : "''";
      if (sqlite) {
        await sql
          .raw(
            `CREATE TRIGGER ${name} AFTER ${op} ON ${w.table} FOR EACH ROW BEGIN ` +
              `INSERT INTO eligibility_changes (kind, k1, k2) VALUES ('${w.kind}', ${row}.${w.k1}, ${k2}); END`,
          )
          .execute(db);
      } else {
        await sql
          .raw(
            `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ` +
              `INSERT INTO eligibility_changes (kind, k1, k2) VALUES ('${w.kind}', ${row}.${w.k1}, ${k2}); ` +
              `RETURN NULL; END $$`,
          )
          .execute(db);
        await sql
          .raw(`CREATE TRIGGER ${name} AFTER ${op} ON ${w.table} FOR EACH ROW EXECUTE FUNCTION ${name}()`)
          .execute(db);
      }
    }
  }

  await db.schema
    .createIndex('claim_numbers_by_address')
    .on('claim_numbers')
    .columns(['platform_address', 'claim_id', 'claim_number'])
    .execute();
  await db.schema
    .createIndex('dynamic_store_members_by_address')
    .on('dynamic_store_members')
    .columns(['address', 'dynamic_data_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema.dropIndex('dynamic_store_members_by_address').execute();
  await db.schema.dropIndex('claim_numbers_by_address').execute();
  for (const w of WATCHED) {
    for (const op of w.ops) {
      const name = `eligibility_${w.table}_${op.toLowerCase()}`;
      if (sqlite) await sql.raw(`DROP TRIGGER ${name}`).execute(db);
      else {
        await sql.raw(`DROP TRIGGER ${name} ON ${w.table}`).execute(db);
        await sql.raw(`DROP FUNCTION ${name}()`).execute(db);
      }
    }
  }
  await db.schema.dropTable('eligibility_changes').execute();
}
