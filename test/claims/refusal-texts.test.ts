// Bugs found by the operability review (issue 15, "Bugs"): each test is the case that was observed.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import type { SignedIn } from '../helpers/signin.ts';
import { attempt, claimWithPlugins, manager, numUses, randomAddress } from '../claims/helpers.ts';
import { createStore, signInUser } from '../stores/helpers.ts';

describe('claims and addresses', () => {
  let m: SignedIn;
  const t = useApp();
  before(async () => {
    m = await manager(t);
  });

  test('halt plus another failing plugin: always "Claim halted"', async () => {
    const pw = { pluginId: 'password', instanceId: 'pw', publicParams: {}, privateParams: { password: 'secret' } };
    const halt = { pluginId: 'halt', instanceId: 'h', publicParams: {}, privateParams: {} };
    // halt after the failing plugin in claim order, and a failing mandatory numUses before it
    for (const plugins of [
      [numUses(5), pw, halt],
      [numUses(0), halt],
      [numUses(5), halt, pw],
    ]) {
      const claimId = await claimWithPlugins(t, m.accessToken, plugins);
      for (const kind of ['simulate', 'complete'] as const) {
        const res = await attempt(
          t,
          kind,
          claimId,
          randomAddress(),
          plugins.includes(pw) ? { pw: { password: 'wrong' } } : {},
        );
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().errorMessage, 'Claim halted', `${kind} ${plugins.map((p) => p.pluginId)}`);
      }
    }
  });

  test('a 0x address with a bad EIP-55 checksum is reported as a bad checksum', async () => {
    const claimId = await claimWithPlugins(t, m.accessToken, [numUses(5)]);
    const good = '0x52908400098527886E0F7030069857D2E4169EE7'; // EIP-55 test vector
    const bad = '0x52908400098527886e0F7030069857D2E4169EE7';
    assert.equal((await attempt(t, 'simulate', claimId, good)).statusCode, 200);
    const res = await attempt(t, 'simulate', claimId, bad);
    assert.equal(res.statusCode, 400);
    assert.match(res.json().errorMessage, /EIP-55 checksum/);
    assert.match(
      res.json().errorMessage,
      /0x52908400098527886E0F7030069857D2E4169EE7/,
      'names the correctly checksummed form',
    );
    assert.doesNotMatch(res.json().errorMessage, /neither/);
  });

  test('plugin user inputs with unknown keys are refused with a 400 naming the key', async () => {
    const claimId = await claimWithPlugins(t, m.accessToken, [
      numUses(5),
      { pluginId: 'password', instanceId: 'pw', publicParams: {}, privateParams: { password: 'a' } },
    ]);
    const extra = await attempt(t, 'simulate', claimId, randomAddress(), { pw: { password: 'a', extra: 1 } });
    assert.equal(extra.statusCode, 400);
    assert.equal(extra.json().errorMessage, 'body.pw has unknown field "extra"');
    const codes = await claimWithPlugins(t, m.accessToken, [
      numUses(5),
      { pluginId: 'codes', instanceId: 'c', publicParams: { numCodes: 1 }, privateParams: { codes: ['x'] } },
    ]);
    const extraCode = await attempt(t, 'simulate', codes, randomAddress(), { c: { code: 'x', password: 'y' } });
    assert.equal(extraCode.statusCode, 400);
    assert.equal(extraCode.json().errorMessage, 'body.c has unknown field "password"');
    // a plugin without inputs takes none
    const none = await attempt(t, 'simulate', claimId, randomAddress(), { pw: { password: 'a' }, numUses: { x: 1 } });
    assert.equal(none.statusCode, 400);
    assert.equal(none.json().errorMessage, 'body.numUses has unknown field "x"');
    assert.equal((await attempt(t, 'simulate', claimId, randomAddress(), { pw: { password: 'a' } })).statusCode, 200);
  });

  test('store 403 texts are grammatical', async () => {
    const owner = await signInUser(t);
    const other = await signInUser(t);
    const s = await createStore(t, owner);
    const read = await t.request('GET', `/api/v0/dynamicStore/${s.dynamicDataId}`, { token: other.token });
    assert.equal(read.statusCode, 403);
    assert.equal(
      read.json().errorMessage,
      'Only the creator or manager of this store, or a caller presenting its dataSecret, can read this store',
    );
    const edit = await t.request('POST', '/api/v0/storeActions/single', {
      token: other.token,
      body: { dynamicDataId: s.dynamicDataId, actionName: 'add', payload: { address: randomAddress() } },
    });
    assert.equal(edit.statusCode, 403);
    assert.equal(
      edit.json().errorMessage,
      'Only the creator or manager of this store, or a caller presenting its dataSecret, can edit this store',
    );
  });
});
