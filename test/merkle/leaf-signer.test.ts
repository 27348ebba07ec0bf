// The leaf signer: its key is configured or generated into DATA_DIR and kept, its address is
// served, and its signatures recover (viem) to that address over "<code>-<native address>".
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { recoverMessageAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createLeafSigner } from '../../src/merkle/leaf-signer.ts';
import { startApp } from '../helpers/app.ts';

describe('leaf signer key', () => {
  test('generated into DATA_DIR on first start, private, and kept', () => {
    const dir = mkdtempSync(join(tmpdir(), 'merkle-key-'));
    const a = loadConfig({ DATA_DIR: dir });
    const b = loadConfig({ DATA_DIR: dir });
    assert.match(a.leafSignerKey, /^[0-9a-f]{64}$/);
    assert.equal(b.leafSignerKey, a.leafSignerKey);
    assert.equal(readFileSync(join(dir, 'leaf-signer.key'), 'utf8').trim(), a.leafSignerKey);
    assert.equal(statSync(join(dir, 'leaf-signer.key')).mode & 0o777, 0o600);
    assert.notEqual(a.leafSignerKey, a.secretKey.toString('hex'));
  });

  test('LEAF_SIGNER_KEY wins, with or without 0x; invalid keys stop the start', () => {
    const key = generatePrivateKey();
    assert.equal(
      loadConfig({ DATA_DIR: mkdtempSync(join(tmpdir(), 'merkle-key-')), LEAF_SIGNER_KEY: key }).leafSignerKey,
      key.slice(2),
    );
    assert.equal(
      loadConfig({ DATA_DIR: mkdtempSync(join(tmpdir(), 'merkle-key-')), LEAF_SIGNER_KEY: key.slice(2).toUpperCase() })
        .leafSignerKey,
      key.slice(2),
    );
    for (const bad of ['zz', '0'.repeat(64), 'f'.repeat(64)]) {
      assert.throws(
        () => loadConfig({ DATA_DIR: mkdtempSync(join(tmpdir(), 'merkle-key-')), LEAF_SIGNER_KEY: bad }),
        (e: unknown) => e instanceof ConfigError && e.variable === 'LEAF_SIGNER_KEY' && /secp256k1/.test(e.message),
      );
    }
  });

  test('signatures are 65-byte EIP-191 signatures over "<leaf>-<address>" that recover to the signer', async () => {
    const key = generatePrivateKey();
    const signer = createLeafSigner(key.slice(2));
    assert.equal(signer.address, privateKeyToAccount(key).address);
    const code = `${randomBytes(32).toString('hex')}-7`;
    const address = 'bb1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqs7gvmv';
    const signature = await signer.sign(code, address);
    assert.match(signature, /^0x[0-9a-f]{130}$/);
    assert.equal(await recoverMessageAddress({ message: `${code}-${address}`, signature }), signer.address);
    assert.notEqual(await recoverMessageAddress({ message: `${code}-${address}x`, signature }), signer.address);
  });
});

describe('GET /api/v0/merkle/leafSigner', () => {
  const key = generatePrivateKey();
  const t = useApp({ env: { LEAF_SIGNER_KEY: key } });

  test("answers the configured key's address", async () => {
    const res = await t.request('GET', '/api/v0/merkle/leafSigner');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { leafSigner: privateKeyToAccount(key).address });
  });

  test('needs the API key', async () => {
    const res = await t.request('GET', '/api/v0/merkle/leafSigner', { apiKey: null });
    assert.equal(res.statusCode, 401);
  });

  test('a generated key gives the same address after a restart', async () => {
    const first = await startApp();
    const address = (await first.request('GET', '/api/v0/merkle/leafSigner')).json().leafSigner;
    assert.equal(address, privateKeyToAccount(`0x${first.config.leafSignerKey}`).address);
    // a second instance on the same DATA_DIR and database, as after a restart
    const second = await startApp({ database: first.database });
    assert.equal((await second.request('GET', '/api/v0/merkle/leafSigner')).json().leafSigner, address);
    await second.app.close();
    await second.ctx.close();
    await first.close();
  });
});
