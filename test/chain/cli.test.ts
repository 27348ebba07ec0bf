// The chain CLI and configuration: clear errors when the chain is unset or down, bad values named.
// The one-shot commands run in this process (runCliInProcess); `indexer`, a loop, is a real process.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/app.ts';
import { runCli, runCliInProcess } from '../helpers/cli.ts';

describe('chain CLI and configuration', () => {
  let database: TestDatabase;
  before(() => {
    database = createTestDatabase();
  });
  after(async () => {
    await database.drop();
  });

  test('platform indexer refuses to start without CHAIN_REST_URL', async () => {
    const res = await runCli(['indexer'], { ...database.env, CHAIN_REST_URL: '' });
    assert.equal(res.code, 1);
    assert.match(res.stderr, /Cannot index: CHAIN_REST_URL is not set/);
  });

  test('platform indexer status with the chain down names the chain and prints no lag it cannot know', async () => {
    const res = await runCliInProcess(['indexer', 'status'], {
      ...database.env,
      CHAIN_REST_URL: 'http://127.0.0.1:1',
      CHAIN_TIMEOUT_MS: '1000',
    });
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout);
    assert.equal(out.indexedHeight, null);
    assert.equal(out.lag, null);
    assert.match(out.chainError, /The chain REST endpoint \(CHAIN_REST_URL\) is unreachable/);
  });

  test('import-chain needs one FILE; an unreadable file is exit 1', async () => {
    assert.equal((await runCliInProcess(['import-chain'], database.env)).code, 2);
    const missing = await runCliInProcess(['import-chain', '/nonexistent/snapshot.json'], database.env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read the file \(ENOENT\)/);
  });

  test('chain variables are validated, naming the variable', () => {
    const base = { DATA_DIR: database.env.DATA_DIR };
    assert.throws(
      () => loadConfig({ ...base, CHAIN_START_HEIGHT: '0' }),
      /CHAIN_START_HEIGHT must be an integer from 1/,
    );
    assert.throws(
      () => loadConfig({ ...base, CHAIN_INDEXER_LEASE_MS: 'soon' }),
      /CHAIN_INDEXER_LEASE_MS must be an integer/,
    );
    assert.throws(
      () => loadConfig({ ...base, CHAIN_INDEX_BATCH: '5000' }),
      /CHAIN_INDEX_BATCH must be an integer from 1 to 1000/,
    );
    assert.throws(
      () => loadConfig({ ...base, CHAIN_TIMEOUT_MS: '10' }),
      /CHAIN_TIMEOUT_MS must be an integer from 100/,
    );
    const c = loadConfig({ ...base, SWAP_UPSTREAM_TIMEOUT_MS: '3000', CHAIN_START_HEIGHT: '8812345' });
    assert.equal(c.chain.timeoutMs, 3000, 'defaults to SWAP_UPSTREAM_TIMEOUT_MS');
    assert.equal(c.chain.startHeight, 8812345);
    assert.equal(c.chain.pollIntervalMs, 6000);
  });
});
