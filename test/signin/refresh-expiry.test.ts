// Bugs found by the operability review (issue 15, "Bugs"): each test is the case that was observed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp } from '../helpers/app.ts';
import { authorizeCode, codeExchangeBody } from '../helpers/signin.ts';
import { ManualClock } from '../../src/shared/clock.ts';

const DAY = 86_400_000;
const TOKEN = '/api/v0/signin/token';

describe('refresh rotation resets expirations (docs/signin.md)', () => {
  const refreshBody = (client: { clientId: string; clientSecret: string }, refresh_token: string) => ({
    grant_type: 'refresh_token',
    refresh_token,
    client_id: client.clientId,
    client_secret: client.clientSecret,
  });

  test('each rotation gives a refresh token valid for the full lifetime from now; no absolute cap by default', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const t = await startApp({ clock });
    try {
      const { code, client } = await authorizeCode(t);
      let tokens = (await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) })).json();
      for (let i = 0; i < 4; i++) {
        clock.advance(50 * DAY); // 200 days in all: past any 60-day family end
        const res = await t.request('POST', TOKEN, { body: refreshBody(client, tokens.refresh_token) });
        assert.equal(res.statusCode, 200, res.body);
        tokens = res.json();
        assert.equal(Number(tokens.refresh_token_expires_at), clock.now() + 60 * DAY);
        assert.equal(Number(tokens.access_token_expires_at), clock.now() + DAY);
      }
    } finally {
      await t.close();
    }
  });

  test('SIGNIN_SESSION_MAX_AGE_DAYS caps a token family from its first grant', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const t = await startApp({ clock, env: { SIGNIN_SESSION_MAX_AGE_DAYS: '90' } });
    try {
      const start = clock.now();
      const { code, client } = await authorizeCode(t);
      let tokens = (await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) })).json();
      clock.advance(50 * DAY);
      tokens = (await t.request('POST', TOKEN, { body: refreshBody(client, tokens.refresh_token) })).json();
      assert.equal(Number(tokens.refresh_token_expires_at), start + 90 * DAY, 'the cap bounds the reset');
      clock.advance(40 * DAY);
      const late = await t.request('POST', TOKEN, { body: refreshBody(client, tokens.refresh_token) });
      assert.equal(late.statusCode, 400);
      assert.equal(late.json().error, 'invalid_grant');
    } finally {
      await t.close();
    }
  });
});
