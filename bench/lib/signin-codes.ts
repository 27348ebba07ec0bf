// Authorization codes for the sign-in benchmarks, minted straight into the table (no wallet
// proofs): the token endpoint is what is measured, not the authorize step.
import type { DB } from '../../src/db/index.ts';
import { CODE_TTL_MS } from '../../src/signin/lifetimes.ts';
import type { SigninAuthorizationTable } from '../../src/signin/storage.ts';
import { randomHex, sha256Hex } from '../../src/shared/crypto.ts';

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
    rows.push({
      authorization_id: randomHex(16),
      code_hash: sha256Hex(code),
      client_id: clientId,
      redirect_uri: redirectUri,
      scopes: openid ? '["openid","completeClaims"]' : '["completeClaims"]',
      code_challenge: null,
      address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
      platform_address: 'bb17w0adeg64ky0daxwd2ugyuneellmjgnxqqnph3',
      chain: 'ETH',
      message: 'bench',
      created_at: now,
      code_expires_at: now + CODE_TTL_MS,
      code_consumed_at: null,
      expires_at: null,
      revoked_at: null,
      access_hash: null,
      access_scopes: null,
      access_expires_at: null,
      refresh_hash: null,
      refresh_expires_at: null,
      oidc_nonce: openid ? `nonce-${i}` : null,
    });
  }
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insertInto('signin_authorizations')
      .values(rows.slice(i, i + 500))
      .execute();
  return codes;
}
