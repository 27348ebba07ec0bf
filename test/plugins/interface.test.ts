// The plugin contract as later plugin kinds will use it: a plugin registered from outside the core
// set (one object, one registerPlugin call) takes part in validation, simulate, complete and state;
// what it returns as `replay` at simulation comes back at execution (custom plugins are called once
// per attempt); it reads the state as it was before the attempt.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import type { SignedIn } from '../helpers/signin.ts';
import { registerPlugin } from '../../src/plugins/registry.ts';
import { badRequest } from '../../src/shared/errors.ts';
import type { ClaimPlugin } from '../../src/plugins/types.ts';
import { drainQueue } from '../../src/claims/queue.ts';
import {
  attempt,
  createClaim,
  getClaim,
  manager,
  newClaimId,
  numUses,
  randomAddress,
  status,
} from '../claims/helpers.ts';

const calls: Array<{ mode: string; replay: unknown; prior: unknown; claimAttemptId: string }> = [];

// A ClaimToken-style stateful preset: the "endpoint" is called in simulation only; execution
// replays its answer and marks the token used.
const probe: ClaimPlugin<{ label: string }> = {
  id: 'probe',
  duplicatesAllowed: false,
  stateful: true,
  requiresUserInput: true,
  requiresSession: false,
  validate(pub, _priv, { path }) {
    const p = (pub ?? {}) as { label?: unknown };
    if (typeof p.label !== 'string') throw badRequest(`${path}.publicParams.label must be a string`);
    return { publicParams: { label: p.label }, privateParams: {} };
  },
  async evaluate(ctx) {
    const token =
      ctx.mode === 'simulate' ? `token-${(ctx.input as { n: number }).n}` : (ctx.replay as { token: string }).token;
    const prior = await ctx.state.get(`used:${token}`);
    calls.push({ mode: ctx.mode, replay: ctx.replay, prior, claimAttemptId: ctx.claimAttemptId });
    if (prior) return { success: false, error: 'Claim token already used' };
    return { success: true, stateChanges: [{ key: `used:${token}`, value: 1 }], replay: { token } };
  },
  publicState(entries) {
    return { usedTokens: entries.map((e) => e.key.slice(5)).sort() };
  },
};

describe('plugin interface', () => {
  let m: SignedIn;
  before(() => registerPlugin(probe));
  const t = useApp({ env: { RUN_WORKER: 'false' } });
  before(async () => {
    m = await manager(t);
  });

  test('params are validated by the plugin', async () => {
    const res = await t.request('POST', '/api/v0/claims', {
      token: m.accessToken,
      body: { claims: [{ claimId: newClaimId(), plugins: [numUses(5), { pluginId: 'probe', instanceId: 'p' }] }] },
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().errorMessage, 'claims[0].plugins[1].publicParams.label must be a string');
  });

  test('simulation result is replayed at execution; state commits; a failure proposes nothing', async () => {
    const claimId = newClaimId();
    await createClaim(t, m.accessToken, {
      claimId,
      plugins: [numUses(5), { pluginId: 'probe', instanceId: 'p', publicParams: { label: 'x' } }],
    });
    calls.length = 0;
    const a = await attempt(t, 'complete', claimId, randomAddress(), { p: { n: 1 } });
    const b = await attempt(t, 'complete', claimId, randomAddress(), { p: { n: 1 } }); // same token, accepted before a executes
    assert.equal(a.statusCode, 200, a.body);
    assert.equal(b.statusCode, 200, b.body);
    await drainQueue(t.ctx);
    const executions = calls.filter((c) => c.mode === 'execute');
    assert.equal(calls.filter((c) => c.mode === 'simulate').length, 2);
    assert.deepEqual(
      executions.map((c) => c.replay),
      [{ token: 'token-1' }, { token: 'token-1' }],
      'execution gets the simulation answer back',
    );
    assert.deepEqual(
      executions.map((c) => c.claimAttemptId),
      [a.json().claimAttemptId, b.json().claimAttemptId],
    );
    assert.equal((await status(t, a.json().claimAttemptId)).success, true);
    const second = await status(t, b.json().claimAttemptId);
    assert.equal(second.success, false);
    assert.equal(second.error, 'Claim token already used');
    const doc = await getClaim(t, claimId);
    assert.deepEqual(doc.plugins[1].publicState, { usedTokens: ['token-1'] });
    assert.equal(doc.plugins[0].publicState.numUses, 1);
    const again = await attempt(t, 'simulate', claimId, randomAddress(), { p: { n: 1 } });
    assert.equal(again.json().errorMessage, 'Claim token already used');
  });
});
