// Accounts storage: usernames (table shape composed into src/db/schema.ts). Uniqueness is the
// database's job (a unique index on lower(username), migration 0011_accounts): a taken name is
// detected as the constraint violation it causes, so concurrent claims of one name cannot both win.
import { sql } from 'kysely';
import { isUniqueViolation, type DB, type Tx } from '../db/index.ts';

export interface AccountUsernameTable {
  platform_address: string;
  username: string;
  updated_at: number;
}

export interface AccountTables {
  account_usernames: AccountUsernameTable;
}

// Its tables join the database's type (db/schema.ts).
declare module '../db/schema.ts' {
  interface Database extends AccountTables {}
}

type Db = DB | Tx;

/**
 * Sets (or, with null, clears) the account's username. Answers 'taken' when another account holds
 * the name in any letter case; renaming your own name to another case of it is allowed.
 */
export async function writeUsername(
  db: DB,
  platformAddress: string,
  username: string | null,
  now: number,
): Promise<'ok' | 'taken'> {
  if (username === null) {
    await db.deleteFrom('account_usernames').where('platform_address', '=', platformAddress).execute();
    return 'ok';
  }
  try {
    await db
      .insertInto('account_usernames')
      .values({ platform_address: platformAddress, username, updated_at: now })
      .onConflict((oc) => oc.column('platform_address').doUpdateSet({ username, updated_at: now }))
      .execute();
    return 'ok';
  } catch (err) {
    if (isUniqueViolation(err)) return 'taken';
    throw err;
  }
}

/** The account holding `username` in any letter case. */
export async function addressOfUsername(db: Db, username: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('account_usernames')
    .select('platform_address')
    .where(sql<string>`lower(username)`, '=', username.toLowerCase())
    .executeTakeFirst();
  return row?.platform_address;
}

/** Usernames of these accounts (those without one are absent from the map). */
export async function usernamesOf(db: Db, platformAddresses: string[]): Promise<Map<string, string>> {
  if (platformAddresses.length === 0) return new Map();
  const rows = await db
    .selectFrom('account_usernames')
    .select(['platform_address', 'username'])
    .where('platform_address', 'in', platformAddresses)
    .execute();
  return new Map(rows.map((r) => [r.platform_address, r.username]));
}

/**
 * The username of one account, or undefined. Lookups through one handle that start together (the
 * claims of one eligibility answer, evaluated at once) are read with one query (usernamesOf).
 */
export function usernameOf(db: Db, platformAddress: string): Promise<string | undefined> {
  let batch = pendingNames.get(db);
  if (!batch) {
    const fresh = { addresses: new Set<string>(), result: null as Promise<Map<string, string>> | null };
    fresh.result = new Promise((resolve, reject) => {
      setImmediate(() => {
        pendingNames.delete(db);
        usernamesOf(db, [...fresh.addresses]).then(resolve, reject);
      });
    });
    pendingNames.set(db, (batch = fresh));
  }
  batch.addresses.add(platformAddress);
  return batch.result!.then((names) => names.get(platformAddress));
}
const pendingNames = new WeakMap<Db, { addresses: Set<string>; result: Promise<Map<string, string>> | null }>();
