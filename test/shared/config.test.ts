// test-run: once (no database: pure code; scripts/test.mjs)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.ts';

const dir = () => mkdtempSync(join(tmpdir(), 'platform-config-'));

describe('configuration', () => {
  test('defaults', () => {
    const d = dir();
    const c = loadConfig({ DATA_DIR: d });
    assert.equal(c.port, 3000);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.databaseUrl, null);
    assert.equal(c.logLevel, 'info');
    assert.equal(c.addressPrefix, 'bb');
    assert.equal(c.publicUrl, 'http://127.0.0.1:3000');
  });

  test('the secret is generated into DATA_DIR on first start, private, and kept', () => {
    const d = dir();
    const a = loadConfig({ DATA_DIR: d });
    const b = loadConfig({ DATA_DIR: d });
    assert.equal(a.secretKey.length, 32);
    assert.deepEqual(a.secretKey, b.secretKey);
    assert.equal(readFileSync(join(d, 'secret.key'), 'utf8').trim(), a.secretKey.toString('hex'));
    assert.equal(statSync(join(d, 'secret.key')).mode & 0o777, 0o600);
  });

  const bad = (env: Record<string, string>, variable: string, re: RegExp) =>
    assert.throws(
      () => loadConfig({ DATA_DIR: dir(), ...env }),
      (e: unknown) => e instanceof ConfigError && e.variable === variable && re.test(e.message),
    );

  test('each bad value names its variable', () => {
    bad({ PORT: '70000' }, 'PORT', /PORT must be an integer from 0 to 65535/);
    bad({ PORT: 'abc' }, 'PORT', /PORT/);
    bad({ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL', /must use postgres or postgresql/);
    bad({ DATABASE_URL: 'not a url' }, 'DATABASE_URL', /must be a URL/);
    bad({ LOG_LEVEL: 'loud' }, 'LOG_LEVEL', /must be one of/);
    bad({ SECRET_KEY: 'short' }, 'SECRET_KEY', /64 hex/);
    bad({ ADDRESS_PREFIX: 'BB' }, 'ADDRESS_PREFIX', /lowercase/);
    bad({ RUN_WORKER: 'maybe' }, 'RUN_WORKER', /true or false/);
    bad({ BODY_LIMIT: '10' }, 'BODY_LIMIT', /from 1024/);
    bad({ LEAF_SIGNER_KEY: 'zz' }, 'LEAF_SIGNER_KEY', /64 hex/);
    bad({ PUBLIC_URL: 'ftp://x' }, 'PUBLIC_URL', /http or https/);
    bad({ DATABASE_REPLICA_URL: 'postgres://r/db' }, 'DATABASE_REPLICA_URL', /needs DATABASE_URL/);
    const primary = { DATABASE_URL: 'postgres://p/db' };
    bad({ ...primary, DATABASE_REPLICA_URL: 'postgres://r/db,mysql://x' }, 'DATABASE_REPLICA_URL', /postgres/);
    bad({ ...primary, REPLICA_MAX_LAG_MS: '5' }, 'REPLICA_MAX_LAG_MS', /from 100/);
    bad(
      { ...primary, DATABASE_POOL_SIZE: '0' },
      'DATABASE_POOL_SIZE',
      /DATABASE_POOL_SIZE must be an integer from 1 to 1000/,
    );
    bad({ ...primary, DATABASE_POOL_SIZE: 'many' }, 'DATABASE_POOL_SIZE', /from 1 to 1000 \(got "many"\)/);
  });

  test('DATABASE_POOL_SIZE: 10 connections unless set', () => {
    assert.equal(loadConfig({ DATA_DIR: dir(), DATABASE_URL: 'postgres://p/db' }).databasePoolSize, 10);
    assert.equal(
      loadConfig({ DATA_DIR: dir(), DATABASE_URL: 'postgres://p/db', DATABASE_POOL_SIZE: '24' }).databasePoolSize,
      24,
    );
  });

  test('DATABASE_REPLICA_URL: one or more replicas, comma-separated; none by default', () => {
    const one = loadConfig({ DATA_DIR: dir(), DATABASE_URL: 'postgres://p/db' });
    assert.deepEqual(one.databaseReplicaUrls, []);
    assert.equal(one.replicaMaxLagMs, 5000);
    const two = loadConfig({
      DATA_DIR: dir(),
      DATABASE_URL: 'postgres://p/db',
      DATABASE_REPLICA_URL: ' postgres://r1/db , postgresql://r2/db?schema=s ',
      REPLICA_MAX_LAG_MS: '2000',
    });
    assert.deepEqual(two.databaseReplicaUrls, ['postgres://r1/db', 'postgresql://r2/db?schema=s']);
    assert.equal(two.replicaMaxLagMs, 2000);
  });
});
