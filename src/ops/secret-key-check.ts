// SECRET_KEY must be the same for every process of a database, and for its whole life: private
// claim params, store and plugin secrets and webhook payloads are sealed with it. A process
// started with another key (a new DATA_DIR/secret.key, a mistyped variable) would start cleanly
// and answer 500 wherever it met that data. So the database keeps one value sealed with its key,
// and a process whose key cannot open it refuses to start.
import type { DB } from '../db/index.ts';
import type { Keyring } from '../shared/crypto.ts';

const CHECK_TEXT = 'platform secret key check v1';

export const SECRET_KEY_MISMATCH =
  'Invalid configuration: SECRET_KEY is not the key this database was written with (data sealed with that key cannot be opened). ' +
  'Every process sharing a database needs the same SECRET_KEY; on SQLite without the variable it is DATA_DIR/secret.key, generated at the first start. ' +
  'Start with the original key.';

const opens = (keyring: Keyring, sealed: string): boolean => {
  try {
    keyring.decrypt(sealed);
    return true;
  } catch {
    return false;
  }
};

/** Throws SECRET_KEY_MISMATCH when the database was sealed with another key; records the key on first use. */
export async function checkSecretKey(db: DB, keyring: Keyring): Promise<void> {
  const read = () => db.selectFrom('secret_key_check').select('sealed').where('id', '=', 1).executeTakeFirst();
  let row = await read();
  if (!row) {
    // A database written before this check: judged by a sealed value it already holds
    const sample =
      (await db.selectFrom('claims').select('private_params as sealed').limit(1).executeTakeFirst()) ??
      (await db.selectFrom('dynamic_stores').select('data_secret_enc as sealed').limit(1).executeTakeFirst());
    if (sample && !opens(keyring, sample.sealed)) throw new Error(SECRET_KEY_MISMATCH);
    await db
      .insertInto('secret_key_check')
      .values({ id: 1, sealed: keyring.encrypt(CHECK_TEXT) })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    // two first starts at once: the row kept may be the other process's
    row = await read();
  }
  if (!row || !opens(keyring, row.sealed)) throw new Error(SECRET_KEY_MISMATCH);
}
