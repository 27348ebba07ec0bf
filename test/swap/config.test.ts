// Swap configuration: defaults and validation (a bad value names its variable).
// test-run: once (no database: pure code; scripts/test.mjs)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.ts';

const base = () => ({ DATA_DIR: mkdtempSync(join(tmpdir(), 'swap-config-')) });

describe('swap configuration', () => {
  test('defaults', () => {
    const c = loadConfig(base());
    assert.deepEqual(c.swap, {
      chainPollIntervalMs: 6000,
      takerFeeRefreshMs: 600_000,
      importPollIntervalMs: 2000,
      upstreamTimeoutMs: 10_000,
      priceImpactWarningPercent: 5,
      minPoolReserve: 1_000_000n,
    });
    assert.equal(c.chainRestUrl, null);
    assert.equal(c.skipApiUrl, null);
  });

  test('values are read and validated', () => {
    const c = loadConfig({
      ...base(),
      SWAP_PRICE_IMPACT_WARNING_PERCENT: '2.5',
      SWAP_MIN_POOL_RESERVE: '0',
      CHAIN_POLL_INTERVAL_MS: '1000',
      CHAIN_REST_URL: 'http://127.0.0.1:1317/',
    });
    assert.equal(c.swap.priceImpactWarningPercent, 2.5);
    assert.equal(c.swap.minPoolReserve, 0n);
    assert.equal(c.swap.chainPollIntervalMs, 1000);
    assert.equal(c.chainRestUrl, 'http://127.0.0.1:1317');
    const bad = (env: Record<string, string>, variable: string) =>
      assert.throws(
        () => loadConfig({ ...base(), ...env }),
        (e: unknown) => e instanceof ConfigError && e.variable === variable,
      );
    bad({ SWAP_PRICE_IMPACT_WARNING_PERCENT: '101' }, 'SWAP_PRICE_IMPACT_WARNING_PERCENT');
    bad({ SWAP_PRICE_IMPACT_WARNING_PERCENT: 'five' }, 'SWAP_PRICE_IMPACT_WARNING_PERCENT');
    bad({ SWAP_MIN_POOL_RESERVE: '-1' }, 'SWAP_MIN_POOL_RESERVE');
    bad({ CHAIN_POLL_INTERVAL_MS: '10' }, 'CHAIN_POLL_INTERVAL_MS');
    bad({ SWAP_UPSTREAM_TIMEOUT_MS: 'x' }, 'SWAP_UPSTREAM_TIMEOUT_MS');
    bad({ SWAP_IMPORT_POLL_INTERVAL_MS: '0' }, 'SWAP_IMPORT_POLL_INTERVAL_MS');
    bad({ CHAIN_TAKER_FEE_REFRESH_MS: '5' }, 'CHAIN_TAKER_FEE_REFRESH_MS');
    bad({ SKIP_API_URL: 'ftp://x' }, 'SKIP_API_URL');
  });
});
