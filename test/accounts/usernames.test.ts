// Usernames: POST /api/v0/user/updateAccount and the reads by username, on both databases.
// Uniqueness regardless of letter case lives in the database; the race test sends one name (in
// many letter cases) from many users at once and expects exactly one winner.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { signIn, type SignedIn } from '../helpers/signin.ts';

const UPDATE = '/api/v0/user/updateAccount';

describe('usernames', () => {
  let alice: SignedIn;
  let bob: SignedIn;
  const t = useApp();
  before(async () => {
    [alice, bob] = await Promise.all([signIn(t), signIn(t)]);
  });

  const setName = (who: SignedIn, username: unknown) =>
    t.request('POST', UPDATE, { token: who.accessToken, body: { username } });
  const byName = (username: string) => t.request('GET', `/api/v0/user?username=${encodeURIComponent(username)}`);
  const byAddress = (address: string) => t.request('GET', `/api/v0/user?address=${encodeURIComponent(address)}`);

  test('set, read by username in any case and by either address form', async () => {
    const r = await setName(alice, 'Alice_01');
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(r.json(), {});
    for (const name of ['Alice_01', 'alice_01', 'ALICE_01']) {
      const res = await byName(name);
      assert.equal(res.statusCode, 200, res.body);
      const { account } = res.json();
      assert.equal(account.username, 'Alice_01', 'the name as set, whatever case was asked');
      assert.equal(account.platformAddress, alice.platformAddress);
      assert.equal(account.ethAddress, alice.address);
    }
    for (const address of [alice.platformAddress, alice.address, alice.address.toLowerCase()]) {
      const res = await byAddress(address);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().account.username, 'Alice_01');
    }
  });

  test('a name taken in any letter case is a 409; your own name in another case is yours', async () => {
    assert.equal((await setName(alice, 'Clash')).statusCode, 200);
    for (const name of ['Clash', 'clash', 'CLASH', 'cLaSh']) {
      const r = await setName(bob, name);
      assert.equal(r.statusCode, 409, r.body);
      assert.match(r.json().errorMessage, /Username already taken/);
    }
    const recase = await setName(alice, 'CLASH');
    assert.equal(recase.statusCode, 200, recase.body);
    assert.equal((await byAddress(alice.platformAddress)).json().account.username, 'CLASH');
    assert.equal((await byAddress(bob.platformAddress)).json().account.username, undefined, 'the loser has no name');
  });

  test('changing releases the old name; clearing with "" removes it', async () => {
    assert.equal((await setName(alice, 'First')).statusCode, 200);
    assert.equal((await setName(alice, 'Second')).statusCode, 200);
    assert.equal((await byName('first')).statusCode, 404);
    assert.equal((await setName(bob, 'first')).statusCode, 200, 'the released name is free');
    assert.equal((await byName('FIRST')).json().account.platformAddress, bob.platformAddress);

    assert.equal((await setName(alice, '')).statusCode, 200);
    assert.equal((await byAddress(alice.platformAddress)).json().account.username, undefined);
    const gone = await byName('Second');
    assert.equal(gone.statusCode, 404);
    assert.match(gone.json().errorMessage, /No account has the username "Second"/);
    assert.equal((await setName(bob, 'second')).statusCode, 200, 'a cleared name is free');
  });

  test('characters and length: 1 to 15 letters, digits and underscores', async () => {
    for (const good of ['a', '_', '9', 'abc_DEF_123', 'x'.repeat(15)]) {
      const r = await setName(alice, good);
      assert.equal(r.statusCode, 200, `${good}: ${r.body}`);
    }
    for (const bad of [
      'x'.repeat(16),
      'has space',
      'dash-name',
      'dot.name',
      'émile',
      'name!',
      '👀',
      ' lead',
      'tab\t',
    ]) {
      const r = await setName(alice, bad);
      assert.equal(r.statusCode, 400, `${bad}: ${r.body}`);
      assert.equal(
        r.json().errorMessage,
        'body.username is invalid: Username must be 1 to 15 characters long and can only contain letters, numbers, and underscores.',
      );
    }
    assert.equal((await setName(alice, 7)).statusCode, 400, 'not a string');
    const extra = await t.request('POST', UPDATE, { token: alice.accessToken, body: { username: 'ok', readme: 'hi' } });
    assert.equal(extra.statusCode, 400);
    assert.match(extra.json().errorMessage, /unknown field "readme"/);
    const missing = await t.request('POST', UPDATE, { token: alice.accessToken, body: {} });
    assert.equal(missing.statusCode, 400);
    assert.match(missing.json().errorMessage, /username/);
  });

  test('needs a session holding manageAccount', async () => {
    const none = await t.request('POST', UPDATE, { body: { username: 'nobody' } });
    assert.equal(none.statusCode, 401);
    const narrow = await signIn(t, { scopes: ['completeClaims'] });
    const r = await setName(narrow, 'narrow');
    assert.equal(r.statusCode, 403);
    assert.match(r.json().errorMessage, /manageAccount/);
    assert.equal((await byName('narrow')).statusCode, 404);
  });

  test('concurrent requests for one name in different cases: exactly one wins', async () => {
    const users = await Promise.all(Array.from({ length: 8 }, () => signIn(t)));
    const cases = ['racer', 'RACER', 'Racer', 'rAcEr', 'racER', 'RACer', 'raCER', 'Racer'];
    const results = await Promise.all(users.map((u, i) => setName(u, cases[i])));
    const codes = results.map((r) => r.statusCode).sort();
    assert.deepEqual(codes, [200, 409, 409, 409, 409, 409, 409, 409], results.map((r) => r.body).join('\n'));
    const winner = users[results.findIndex((r) => r.statusCode === 200)];
    assert.equal((await byName('RACER')).json().account.platformAddress, winner.platformAddress);
    const holders = await t.ctx.db
      .selectFrom('account_usernames')
      .select('platform_address')
      .where('username', 'in', cases)
      .execute();
    assert.equal(holders.length, 1);
  });

  test('GET /api/v0/user needs exactly one of address or username, and a valid address', async () => {
    const neither = await t.request('GET', '/api/v0/user');
    assert.equal(neither.statusCode, 400);
    assert.match(neither.json().errorMessage, /exactly one of address or username/);
    const both = await t.request('GET', `/api/v0/user?address=${alice.platformAddress}&username=x`);
    assert.equal(both.statusCode, 400);
    const empty = await t.request('GET', '/api/v0/user?username=');
    assert.equal(empty.statusCode, 400);
    assert.match(empty.json().errorMessage, /querystring.username must NOT have fewer than 1 characters/);
    const bad = await byAddress('bb1notanaddress');
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().errorMessage, /Invalid address in querystring.address/);
    assert.equal(
      (await t.request('GET', `/api/v0/user?address=${alice.platformAddress}`, { apiKey: null })).statusCode,
      401,
      'API key required',
    );
  });
});
