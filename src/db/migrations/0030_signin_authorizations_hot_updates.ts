// signin_authorizations is written once per sign-in and then updated in place by the code exchange
// and by every refresh rotation (code_consumed_at, the token hashes and lifetimes: none of them
// indexed). On PostgreSQL an UPDATE whose new row version fits on the same page and changes no
// indexed column is a HOT update: no new entry in any index. Rows are inserted in order, so pages
// were filled completely and every exchange and rotation moved its row to another page and added
// an entry to each of the table's indexes. fillfactor 70 leaves 30% of each new page free for
// those updates (pages filled before the migration keep their rows; new sign-ins land on new pages).
// Two of the table's indexes were prefixes of others, serving no query those do not:
// (client_id) of (client_id, created_at) from 0014 and (platform_address, created_at) of
// (platform_address, created_at, authorization_id) from 0011; each insert maintained them.
import { type Kysely, SqliteAdapter, sql } from 'kysely';

const postgres = (db: Kysely<any>) => !(db.getExecutor().adapter instanceof SqliteAdapter);

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('signin_authorizations_client_id').execute();
  await db.schema.dropIndex('signin_authorizations_user').execute();
  if (postgres(db)) await sql`alter table signin_authorizations set (fillfactor = 70)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (postgres(db)) await sql`alter table signin_authorizations reset (fillfactor)`.execute(db);
  await db.schema
    .createIndex('signin_authorizations_user')
    .on('signin_authorizations')
    .columns(['platform_address', 'created_at'])
    .execute();
  await db.schema
    .createIndex('signin_authorizations_client_id')
    .on('signin_authorizations')
    .column('client_id')
    .execute();
}
