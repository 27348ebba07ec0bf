// Behaviours a one-line regression could break unnoticed (issue 16): each test here was seen to
// fail on the bug its comment names. Both routes, and the state read back after the fact.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { signIn, testAccount } from '../helpers/signin.ts';
import {
  ALL_SCOPES,
  attempt,
  claimWithPlugins,
  completeAndWait,
  getClaim,
  numUses,
  randomAddress,
  refusedOnBothRoutes,
  status,
} from '../claims/helpers.ts';

describe('plugin edges', () => {
  // a manager: every scope
  const t = useApp({ clock: 1_700_000_000_000, signedIn: ALL_SCOPES });

  const claimWith = (plugins: unknown[]) => claimWithPlugins(t, t.session.accessToken, plugins);

  const refused = refusedOnBothRoutes(t);

  test('an unknown plugin id is a 400 that lists the valid ids', async () => {
    const res = await t.request('POST', '/api/v0/claims', {
      token: t.session.accessToken,
      body: { claims: [{ claimId: `u${Date.now()}`, plugins: [numUses(1), { pluginId: 'passwd', instanceId: 'p' }] }] },
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.deepEqual(res.json(), {
      errorMessage:
        'claims[0].plugins[1].pluginId: unknown plugin "passwd" (valid: numUses, codes, password, transferTimes, initiatedBy, whitelist, halt, anonymous, ' +
        'discord, github, google, twitch, twitter, github-contributions, must-own-badges, min-badge, satisfies-claim, username-set, url-clicker, custom-instructions; ' +
        'or the id of a plugin document)',
    });
  });

  // Bug it catches: a password check that skips the comparison for an empty string.
  test('password: an empty password is "Incorrect password." on simulate and complete, and uses nothing', async () => {
    const claimId = await claimWith([
      numUses(1),
      { pluginId: 'password', instanceId: 'pw', privateParams: { password: 'hunter2' } },
    ]);
    await refused(claimId, randomAddress(), { pw: { password: '' } }, 'Incorrect password.');
    assert.equal((await getClaim(t, claimId)).plugins[0].publicState.numUses, 0, 'no use consumed');
    // the single use is still there for the right password, and it is claim number 0
    const who = randomAddress();
    const done = await completeAndWait(t, claimId, who, { pw: { password: 'hunter2' } });
    assert.equal(done.success, true, done.error);
    assert.equal((await getClaim(t, claimId)).plugins[0].publicState.numUses, 1);
    await refused(claimId, randomAddress(), { pw: { password: 'hunter2' } }, 'Overall max uses exceeded');
  });

  // Bug it catches: the end of a UintRange made exclusive.
  test('transferTimes: the end bound is inclusive (now+1000 passes, now+1001 fails)', async () => {
    const now = t.clock.now();
    const claimId = await claimWith([
      numUses(10),
      {
        pluginId: 'transferTimes',
        instanceId: 'tt',
        publicParams: { transferTimes: [{ start: String(now - 1000), end: String(now + 1000) }] },
      },
    ]);
    try {
      t.clock.set(now + 1000);
      const sim = await attempt(t, 'simulate', claimId, randomAddress());
      assert.equal(sim.statusCode, 200, sim.body);
      const done = await completeAndWait(t, claimId, randomAddress());
      assert.equal(done.success, true, done.error);
      t.clock.set(now + 1001);
      await refused(claimId, randomAddress(), {}, 'We are currently outside the approved time window.');
      t.clock.set(now - 1000);
      assert.equal(
        (await attempt(t, 'simulate', claimId, randomAddress())).statusCode,
        200,
        'the start bound is inclusive too',
      );
    } finally {
      t.clock.set(now);
    }
  });

  // Bug it catches: initiatedBy comparing anything but the canonical address of session and claimer.
  test('initiatedBy: another wallet in 0x form is refused; the claimer in lowercase 0x form passes and is recorded natively', async () => {
    const claimId = await claimWith([numUses(10), { pluginId: 'initiatedBy', instanceId: 'ib' }]);
    const claimer = await signIn(t, { scopes: ['completeClaims'] });
    const other = testAccount();
    await refused(
      claimId,
      other.address,
      {},
      'Invalid address. Provided address does not match the address of the signed in user.',
      403,
      claimer.accessToken,
    );
    await refused(
      claimId,
      other.address.toLowerCase(),
      {},
      'Invalid address. Provided address does not match the address of the signed in user.',
      403,
      claimer.accessToken,
    );
    // the other wallet's own session does not open the claimer's address either
    const otherSession = await signIn(t, { privateKey: other.privateKey, scopes: ['completeClaims'] });
    await refused(
      claimId,
      claimer.address,
      {},
      'Invalid address. Provided address does not match the address of the signed in user.',
      403,
      otherSession.accessToken,
    );
    const done = await completeAndWait(t, claimId, claimer.address.toLowerCase(), {}, claimer.accessToken);
    assert.equal(done.success, true, done.error);
    assert.equal(done.platformAddress, claimer.platformAddress);
    assert.equal((await status(t, done.claimAttemptId, claimer.accessToken)).platformAddress, claimer.platformAddress);
  });
});
