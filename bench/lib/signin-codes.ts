// Authorization codes for the sign-in benchmarks, minted straight into the table (no wallet
// proofs): the token endpoint is what is measured, not the authorize step.
import type { DB } from '../../src/db/index.ts';
import type { SigninAuthorizationTable } from '../../src/signin/storage.ts';
import { randomHex, sha256Hex } from '../../src/shared/crypto.ts';
import { authorizationRow } from '../../test/helpers/signin.ts';

/** Inserts `n` fresh codes for the app (with the `openid` scope and a nonce when asked); returns them. */
export async function mintSigninCodes(
  db: DB,
  clientId: string,
  redirectUri: string,
  n: number,
  openid = false,
): Promise<string[]> {
  const now = Date.now();
  const codes: string[] = [];
  const rows: SigninAuthorizationTable[] = [];
  for (let i = 0; i < n; i++) {
    const code = randomHex(32);
    codes.push(code);
    rows.push(
      authorizationRow({
        authorization_id: randomHex(16),
        code_hash: sha256Hex(code),
        client_id: clientId,
        redirect_uri: redirectUri,
        scopes: openid ? '["openid","completeClaims"]' : '["completeClaims"]',
        message: 'bench',
        created_at: now,
        oidc_nonce: openid ? `nonce-${i}` : null,
      }),
    );
  }
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insertInto('signin_authorizations')
      .values(rows.slice(i, i + 500))
      .execute();
  return codes;
}
