// Shared steps of the webhook tests: the test-only egress settings, a plugin document owned by a
// signed-in address, deliveries enqueued as the claim runtime enqueues them, and an independent
// signature check (node:crypto directly, not the module under test).
import { createHmac, randomBytes } from 'node:crypto';
import type { TestApp } from '../helpers/app.ts';
import { testCertificates } from '../helpers/https-endpoint.ts';
import { enqueueDeliveries, type NewDelivery } from '../../src/webhooks/outbox.ts';

/** Lets the service reach the local test endpoint (tests only). */
export const egressTestEnv = (): Record<string, string> => ({
  EGRESS_EXTRA_CA_FILE: testCertificates().caFile,
  EGRESS_ALLOW_PRIVATE_CIDRS: '127.0.0.1/32',
});

let n = 0;

/** A plugin document owned by `owner`; returns its id and secret. */
export async function insertPlugin(t: TestApp, owner: string): Promise<{ pluginId: string; secret: string }> {
  const pluginId = `hook${Date.now().toString(36)}${(n++).toString(36)}${randomBytes(2).toString('hex')}`;
  const secret = randomBytes(32).toString('hex');
  const now = t.ctx.clock.now();
  await t.ctx.db
    .insertInto('plugin_docs')
    .values({
      plugin_id: pluginId,
      created_by: owner,
      managed_by: owner,
      locale: 'en',
      metadata: JSON.stringify({ name: pluginId, description: '', image: '' }),
      name_search: pluginId,
      to_publish: 0,
      review_completed: 0,
      approved_users: '[]',
      plugin_secret_enc: t.ctx.keyring.encrypt(secret),
      created_at: now,
      last_updated: now,
      deleted_at: null,
    })
    .execute();
  return { pluginId, secret };
}

export async function rotateSecret(t: TestApp, pluginId: string): Promise<string> {
  const secret = randomBytes(32).toString('hex');
  await t.ctx.db
    .updateTable('plugin_docs')
    .set({ plugin_secret_enc: t.ctx.keyring.encrypt(secret) })
    .where('plugin_id', '=', pluginId)
    .execute();
  return secret;
}

/** The status webhook payload of one resolved attempt, as the claim runtime builds it. */
export function webhookBody(
  claimAttemptId: string,
  status: 'success' | 'failure' = 'success',
  extra: Record<string, unknown> = {},
) {
  return {
    userKey: 'value',
    privateKey: 'hidden',
    platformAddress: null,
    ethAddress: null,
    isAddressSignedIn: null,
    pluginSecret: 'secret-at-call-time',
    version: 1,
    claimId: 'claim-1',
    claimAttemptId,
    instanceId: 'hook',
    _isSimulation: false,
    _attemptStatus: status,
    lastUpdated: 1_700_000_000_000,
    createdAt: 1_700_000_000_000,
    locale: 'en',
    ...extra,
  };
}

export function newDelivery(
  pluginId: string,
  url: string,
  claimAttemptId = `att${randomBytes(6).toString('hex')}`,
  instanceId = 'hook',
): NewDelivery {
  return {
    pluginId,
    claimId: 'claim-1',
    instanceId,
    claimAttemptId,
    url,
    body: webhookBody(claimAttemptId, 'success', { instanceId }),
  };
}

export async function enqueue(t: TestApp, deliveries: NewDelivery[]): Promise<void> {
  // inside a transaction, as the claim runtime does
  await t.ctx.db.transaction().execute((tx) => enqueueDeliveries(tx, deliveries, t.ctx.clock.now(), t.ctx.keyring));
}

/** HMAC-SHA256 over `<timestamp>.<body>` keyed with the secret, computed here from scratch. */
export function expectedSignature(secret: string, timestamp: string, rawBody: Buffer): string {
  return createHmac('sha256', secret)
    .update(Buffer.concat([Buffer.from(`${timestamp}.`), rawBody]))
    .digest('hex');
}
