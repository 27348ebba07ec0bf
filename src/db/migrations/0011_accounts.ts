// Accounts: usernames, and the indexes behind the account views that read other capabilities'
// tables by address (a user's sign-ins, a user's claim attempts).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // One row per account holding a username; clearing the name deletes the row.
  await db.schema
    .createTable('account_usernames')
    .addColumn('platform_address', 'text', (c) => c.primaryKey())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // Case-insensitive uniqueness lives in the database, so two concurrent requests for one name
  // (in any case) cannot both commit. Usernames are ASCII, so lower() agrees on both dialects.
  await db.schema
    .createIndex('account_usernames_lower')
    .on('account_usernames')
    .unique()
    .expression(sql`lower(username)`)
    .execute();

  await db.schema
    .createIndex('signin_authorizations_account')
    .on('signin_authorizations')
    .columns(['platform_address', 'created_at', 'authorization_id'])
    .execute();
  await db.schema
    .createIndex('claim_attempts_account')
    .on('claim_attempts')
    .columns(['platform_address', 'attempted_at', 'seq'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('claim_attempts_account').execute();
  await db.schema.dropIndex('signin_authorizations_account').execute();
  await db.schema.dropTable('account_usernames').execute();
}
