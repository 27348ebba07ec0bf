// The `signin-cleanup` background loop: expired challenges go within a minute, ended codes and
// token families within ten minutes (after their day of grace), and a stopped loop sweeps no more.
// The loop's intervals run on mocked timers; the rows and the clock the sweeps read are real.
import { after, before, describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from '../helpers/app.ts';
import { authorizeCode, createTestClient, testAccount } from '../helpers/signin.ts';
import type { ManualClock } from '../../src/shared/clock.ts';
import { DAY } from '../../src/signin/lifetimes.ts';
import { loadLoops } from '../../src/capabilities.ts';
import { startLoops } from '../../src/worker/runtime.ts';

const loops = await loadLoops();

const count = async (t: TestApp, table: 'signin_requests' | 'signin_authorizations') =>
  Number(
    (
      await t.ctx.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/** Waits (real time) until `read` gives `want`; the sweeps run asynchronously after a tick. */
async function eventually(read: () => Promise<number>, want: number, what: string) {
  let last = -1;
  for (let i = 0; i < 100; i++) {
    last = await read();
    if (last === want) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(last, want, what);
}

/** Gives pending sweeps time to run (real time), so that a "nothing happened" check means something. */
const settle = () => new Promise((r) => setTimeout(r, 200));

describe('the signin-cleanup loop', () => {
  let t: TestApp;
  let clock: ManualClock;
  before(async () => {
    t = await startApp({ manualClock: true });
    clock = t.clock as ManualClock;
  });
  after(async () => {
    mock.timers.reset();
    await t.close();
  });

  test('is listed under its name with what it does', async () => {
    const loop = loops.find((l) => l.name === 'signin-cleanup');
    assert.ok(loop, 'registered as signin-cleanup');
    assert.match(loop.description, /sign-in requests, codes and tokens/);
  });

  test('sweeps challenges every minute and ended authorizations every ten minutes, until stopped', async () => {
    const client = await createTestClient(t);
    const challenge = await t.request('POST', '/api/v0/signin/challenge', {
      body: {
        client_id: client.clientId,
        redirect_uri: client.redirectUri,
        scope: 'completeClaims',
        address: testAccount().address,
      },
    });
    assert.equal(challenge.statusCode, 200, challenge.body);
    await authorizeCode(t, { client }); // an unused code: its request and its authorization row
    const requests = await count(t, 'signin_requests');
    const authorizations = await count(t, 'signin_authorizations');
    assert.ok(requests >= 2 && authorizations >= 1);

    mock.timers.enable({ apis: ['setInterval'] });
    const closeHandlers = t.ctx.onClose.length;
    assert.deepEqual(await startLoops(t.ctx, loops, ['signin-cleanup']), ['signin-cleanup']);
    clock.advance(DAY + 60 * 60_000); // every row has ended, and its day of grace is over

    mock.timers.tick(59_999);
    await settle();
    assert.equal(await count(t, 'signin_requests'), requests, 'nothing before the first minute');
    mock.timers.tick(1);
    await eventually(() => count(t, 'signin_requests'), 0, 'expired challenges go at the minute');
    assert.equal(
      await count(t, 'signin_authorizations'),
      authorizations,
      'the minute sweep leaves authorizations alone',
    );

    mock.timers.tick(10 * 60_000 - 60_000 - 1);
    await settle();
    assert.equal(await count(t, 'signin_authorizations'), authorizations, 'nothing before ten minutes');
    mock.timers.tick(1);
    await eventually(() => count(t, 'signin_authorizations'), 0, 'ended authorizations go at ten minutes');

    // once the context closes, the loop is stopped: new expired rows stay
    const closing = t.ctx.onClose.splice(closeHandlers); // only the handles startLoops added: the app stays open
    for (const stop of closing) await stop();
    await t.request('POST', '/api/v0/signin/challenge', {
      body: {
        client_id: client.clientId,
        redirect_uri: client.redirectUri,
        scope: 'completeClaims',
        address: testAccount().address,
      },
    });
    clock.advance(DAY);
    mock.timers.tick(20 * 60_000);
    await settle();
    assert.equal(await count(t, 'signin_requests'), 1, 'a stopped loop sweeps nothing');
  });

  test('a sweep that fails is logged as a warning and the loop goes on', async () => {
    const warnings: Array<{ msg: string; err: unknown }> = [];
    const warn = t.ctx.log.warn;
    t.ctx.log.warn = ((obj: { err?: unknown }, msg: string) =>
      void warnings.push({ msg, err: obj?.err })) as typeof warn;
    mock.timers.reset(); // the test before left them on
    mock.timers.enable({ apis: ['setInterval'] });
    const closeHandlers = t.ctx.onClose.length;
    try {
      await startLoops(t.ctx, loops, ['signin-cleanup']);
      await t.ctx.db.schema.alterTable('signin_requests').renameTo('signin_requests_away').execute();
      try {
        mock.timers.tick(10 * 60_000); // both sweeps run, and both fail on the missing table
        for (let i = 0; i < 100 && warnings.length < 11; i++) await new Promise((r) => setTimeout(r, 20));
      } finally {
        await t.ctx.db.schema.alterTable('signin_requests_away').renameTo('signin_requests').execute();
      }
      // every minute's request sweep failed and was logged (the loop went on), and the ten-minute one once
      const logged = (msg: string) => warnings.filter((w) => w.msg === msg).length;
      assert.deepEqual(
        [logged('sign-in request sweep failed'), logged('sign-in sweep failed'), warnings.length],
        [10, 1, 11],
      );
      assert.ok(
        warnings.every((w) => w.err instanceof Error),
        'the error goes with the warning',
      );
    } finally {
      t.ctx.log.warn = warn;
      for (const stop of t.ctx.onClose.splice(closeHandlers)) await stop();
      mock.timers.reset();
    }
  });
});
