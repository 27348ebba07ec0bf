// OpenID Connect on the sign-in flow (src/signin/id-token.ts, signing-keys.ts):
// - the `nonce` of an authorization request travels with the request, then with its code, into the
//   id_token (`oidc_nonce`: the requests table's `nonce` column is the EIP-4361 message nonce);
// - the id_token signing keys, one row per generation. The private key is sealed with the keyring
//   (SECRET_KEY); the public JWK is stored as served. A generation's number is its primary key, so
//   two processes creating the first key, or two rotations at once, cannot both succeed.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signin_requests').addColumn('oidc_nonce', 'text').execute();
  await db.schema.alterTable('signin_authorizations').addColumn('oidc_nonce', 'text').execute();
  await db.schema
    .createTable('signin_signing_keys')
    .addColumn('generation', 'integer', (c) => c.primaryKey())
    .addColumn('kid', 'text', (c) => c.notNull().unique())
    .addColumn('alg', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('private_jwk_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('signin_signing_keys').execute();
  await db.schema.alterTable('signin_authorizations').dropColumn('oidc_nonce').execute();
  await db.schema.alterTable('signin_requests').dropColumn('oidc_nonce').execute();
}
