// The id_token signing keys (ES256), shared by every process on one database.
//
// Keys are numbered generations (the primary key). The first start inserts generation 1 if absent and
// reads back whichever process's key won, so concurrent starts agree on one key. `platform signin
// rotate-keys` adds the next generation. Private keys are stored as JWKs sealed with the keyring.
//
// Timing, so that no client ever meets an id_token whose key is not in the JWKS:
// - each process re-reads the key rows every KEY_REFRESH_MS;
// - a new key is published at once but signs only from KEY_REFRESH_MS after its creation, by which
//   time every process has read it (and serves it in its JWKS);
// - a replaced key stays published until every id_token it signed has expired (its replacement's
//   start + ID_TOKEN_TTL_MS, plus KEY_REFRESH_MS for clocks of other hosts), then leaves the JWKS;
//   the next rotation deletes its row.
// Each process decrypts and imports a private key once, when it first signs with it.
import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject, sign } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import { CompactSign, calculateJwkThumbprint, compactVerify, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { AppContext } from '../context.ts';
import { ID_TOKEN_TTL_MS } from './lifetimes.ts';
import type { SigninSigningKeyTable } from './storage.ts';

export const ID_TOKEN_ALG = 'ES256';
/** How often a process re-reads the keys; also how long a new key is published before it signs. */
export const KEY_REFRESH_MS = 60_000;

type KeyRow = SigninSigningKeyTable;

/** Index of the key that signs at `now`: the newest one published for KEY_REFRESH_MS, else the oldest. */
function signerIndex(rows: KeyRow[], now: number): number {
  for (let i = rows.length - 1; i > 0; i--) if (rows[i].created_at + KEY_REFRESH_MS <= now) return i;
  return 0;
}

/** Until when a key stays in the JWKS (null: as long as it signs or is about to). */
function publishedUntil(rows: KeyRow[], i: number, now: number): number | null {
  if (i >= signerIndex(rows, now)) return null;
  const replacedAt = rows[i + 1].created_at + KEY_REFRESH_MS;
  return replacedAt + ID_TOKEN_TTL_MS + KEY_REFRESH_MS;
}

const isPublished = (rows: KeyRow[], i: number, now: number) => {
  const until = publishedUntil(rows, i, now);
  return until === null || now < until;
};

async function newKeyRow(ctx: AppContext, generation: number, now: number): Promise<KeyRow> {
  const { privateKey } = await generateKeyPair(ID_TOKEN_ALG, { extractable: true });
  const priv = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(priv); // RFC 7638: of the public members only
  const pub: JWK = { kty: priv.kty, crv: priv.crv, x: priv.x, y: priv.y, kid, alg: ID_TOKEN_ALG, use: 'sig' };
  return {
    generation,
    kid,
    alg: ID_TOKEN_ALG,
    public_jwk: JSON.stringify(pub),
    private_jwk_sealed: ctx.keyring.encrypt(JSON.stringify({ ...priv, kid, alg: ID_TOKEN_ALG })),
    created_at: now,
  };
}

const readRows = (ctx: AppContext): Promise<KeyRow[]> =>
  ctx.db.selectFrom('signin_signing_keys').selectAll().orderBy('generation').execute();

/** Creates generation 1 unless a key exists (insert-if-absent: of concurrent first starts, one key wins). */
export async function ensureSigningKey(ctx: AppContext): Promise<void> {
  const any = await ctx.db.selectFrom('signin_signing_keys').select('generation').limit(1).executeTakeFirst();
  if (any) return;
  const row = await newKeyRow(ctx, 1, ctx.clock.now());
  await ctx.db
    .insertInto('signin_signing_keys')
    .values(row)
    .onConflict((oc) => oc.column('generation').doNothing())
    .execute();
}

export interface Rotation {
  kid: string;
  generation: number;
  /** When the new key starts signing (UNIX ms): once every process has read it. */
  signsFrom: number;
  /** The newest key before it, which it replaces, and until when that one stays in the JWKS. */
  previous: { kid: string; publishedUntil: number } | null;
  /** Keys that had left the JWKS and were deleted. */
  deleted: string[];
}

/** Adds the next key generation; deletes keys that are no longer published. Null when another rotation won the race. */
export async function rotateSigningKeys(ctx: AppContext): Promise<Rotation | null> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (tx) => {
    const rows = await tx.selectFrom('signin_signing_keys').selectAll().orderBy('generation').execute();
    const last = rows.at(-1);
    const row = await newKeyRow(ctx, (last?.generation ?? 0) + 1, now);
    const inserted = await tx
      .insertInto('signin_signing_keys')
      .values(row)
      .onConflict((oc) => oc.column('generation').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) !== 1) return null;
    const all = [...rows, row];
    const gone = all.filter((_, i) => !isPublished(all, i, now)).map((r) => r.kid);
    if (gone.length) await tx.deleteFrom('signin_signing_keys').where('kid', 'in', gone).execute();
    const kept = all.filter((r) => !gone.includes(r.kid));
    // the new key takes over from the newest one before it, which then stays published until the
    // id_tokens it signs up to that moment have expired
    // (a first key, with none before it, signs at once)
    const signsFrom = rows.length ? now + KEY_REFRESH_MS : now;
    const before = kept.length - 2;
    return {
      kid: row.kid,
      generation: row.generation,
      signsFrom,
      previous:
        before >= 0 ? { kid: kept[before].kid, publishedUntil: publishedUntil(kept, before, signsFrom)! } : null,
      deleted: gone,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// The per-process view: the rows (re-read every KEY_REFRESH_MS) and the private keys imported so far.

/** One per context (AppContext.signingKeys). */
export interface KeyCache {
  rows: KeyRow[];
  loadedAt: number;
  loading: Promise<KeyRow[]> | null;
  /** Keys being imported, or imported (a key whose import failed is dropped, to be tried again). */
  imported: Map<string, Promise<Signer>>;
  /** The imported ones, for the synchronous path. */
  ready: Map<string, Signer>;
}

/** The key rows, re-read when older than KEY_REFRESH_MS (one read in flight per process). */
function currentRows(ctx: AppContext, now: number): KeyRow[] | Promise<KeyRow[]> {
  const c = ctx.signingKeys;
  // fresh unless KEY_REFRESH_MS has passed, or the clock went back past the last read
  if (c.rows.length && now >= c.loadedAt && now - c.loadedAt < KEY_REFRESH_MS) return c.rows;
  c.loading ??= (async () => {
    try {
      let rows = await readRows(ctx);
      if (rows.length === 0) {
        await ensureSigningKey(ctx);
        rows = await readRows(ctx);
      }
      c.rows = rows;
      c.loadedAt = now;
      return rows;
    } catch (err) {
      // a failed re-read keeps the keys already read (the next request tries again): a token
      // exchange has consumed its code by the time it signs, and must not fail for this
      if (!c.rows.length) throw err;
      ctx.log.warn(
        { err: (err as Error).message },
        'could not re-read the id_token signing keys; signing with the keys read before',
      );
      return c.rows;
    } finally {
      c.loading = null;
    }
  })();
  return c.loading;
}

export interface Signer {
  kid: string;
  /** The private key, as node:crypto signs with it. */
  key: KeyObject;
  /**
   * The JWS protected header `{"alg":"ES256","kid":…,"typ":"JWT"}`, base64url-encoded: the same for
   * every id_token this key signs, so it is produced once, by jose, when the key is imported.
   */
  header: string;
}

/**
 * A compact JWS (RFC 7515 §7.1) of a base64url payload: the signer's header, the payload, and the
 * ES256 signature (RFC 7518 §3.4: R || S, 32 bytes each). node:crypto signs (DER, as OpenSSL
 * gives it; its own 'ieee-p1363' output costs twice the signature in Node 24) and @noble/curves
 * re-encodes the DER signature as R || S.
 */
export function signJws(signer: Signer, payload: string): string {
  const input = `${signer.header}.${payload}`;
  const der = sign('sha256', Buffer.from(input, 'latin1'), signer.key);
  const rs = p256.Signature.fromBytes(der, 'der').toBytes('compact');
  return `${input}.${Buffer.from(rs.buffer, rs.byteOffset, rs.byteLength).toString('base64url')}`;
}

/**
 * The signer of a key row: the private key imported by node:crypto from its JWK, and the protected
 * header taken from a JWS that jose signs with it. Before it is used, a JWS made by signJws must
 * verify with jose against the row's public JWK.
 */
async function importSigner(row: KeyRow, privateJwk: JWK): Promise<Signer> {
  if (row.alg !== ID_TOKEN_ALG) throw new Error(`id_token key ${row.kid}: unsupported algorithm ${row.alg}`);
  const key = createPrivateKey({ key: privateJwk as JsonWebKey, format: 'jwk' });
  const probe = await new CompactSign(new Uint8Array())
    .setProtectedHeader({ alg: ID_TOKEN_ALG, kid: row.kid, typ: 'JWT' })
    .sign(key);
  const signer: Signer = { kid: row.kid, key, header: probe.slice(0, probe.indexOf('.')) };
  const publicKey = createPublicKey({ key: JSON.parse(row.public_jwk) as JsonWebKey, format: 'jwk' });
  await compactVerify(signJws(signer, Buffer.from('{}').toString('base64url')), publicKey, {
    algorithms: [ID_TOKEN_ALG],
  });
  return signer;
}

/** The key that signs at `now`, imported once per process (a promise only until it is). */
export function currentSigner(ctx: AppContext, now: number): Signer | Promise<Signer> {
  const rows = currentRows(ctx, now);
  if (rows instanceof Promise) return rows.then(() => currentSigner(ctx, now));
  const row = rows[signerIndex(rows, now)];
  const c = ctx.signingKeys;
  const ready = c.ready.get(row.kid);
  if (ready) return ready;
  let pending = c.imported.get(row.kid);
  if (!pending) {
    pending = importSigner(row, JSON.parse(ctx.keyring.decrypt(row.private_jwk_sealed)) as JWK);
    c.imported.set(row.kid, pending);
    pending.then(
      (signer) => c.ready.set(row.kid, signer),
      () => c.imported.delete(row.kid),
    );
  }
  return pending;
}

/** The JWKS (RFC 7517) of the keys published at `now`, newest first. */
export async function publishedJwks(ctx: AppContext, now: number): Promise<{ keys: JWK[] }> {
  const rows = await currentRows(ctx, now);
  const keys: JWK[] = [];
  for (let i = rows.length - 1; i >= 0; i--)
    if (isPublished(rows, i, now)) keys.push(JSON.parse(rows[i].public_jwk) as JWK);
  return { keys };
}
