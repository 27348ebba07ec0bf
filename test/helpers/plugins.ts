// Shared steps of the plugin document and custom plugin tests: an app that trusts the test CA and
// may call loopback (the egress module's test-only settings), owner sessions, and plugin
// documents created over HTTP.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startApp, type TestApp } from './app.ts';
import { testCertificates } from './https-endpoint.ts';
import { signIn, type SignedIn } from './signin.ts';
import type { Clock } from '../../src/shared/clock.ts';

export const PLUGIN_SCOPES = ['completeClaims', 'readPrivateClaimData', 'manageClaims', 'managePlugins'];

/** The env that lets the service call the local HTTPS endpoints of the tests. */
export const loopbackEgressEnv = (): Record<string, string> => ({
  EGRESS_EXTRA_CA_FILE: testCertificates().caFile,
  EGRESS_ALLOW_PRIVATE_CIDRS: '127.0.0.1/32,::1/128',
});

export function startPluginApp(opts: { env?: Record<string, string>; clock?: Clock } = {}): Promise<TestApp> {
  return startApp({ env: { ...loopbackEgressEnv(), ...opts.env }, ...(opts.clock ? { clock: opts.clock } : {}) });
}

export const owner = (t: TestApp, scopes = PLUGIN_SCOPES): Promise<SignedIn> => signIn(t, { scopes });

let counter = 0;
export const newPluginId = (prefix = 'p'): string =>
  `${prefix}-${Date.now().toString(36)}${(counter++).toString(36)}${randomBytes(2).toString('hex')}`;

/** A minimal valid version config calling `uri`. */
export const versionConfig = (uri: string, extra: Record<string, unknown> = {}) => ({
  stateFunctionPreset: 'Stateless',
  duplicatesAllowed: false,
  requiresSessions: false,
  requiresUserInputs: false,
  reuseForNonIndexed: false,
  receiveStatusWebhook: false,
  userInputsSchema: [],
  publicParamsSchema: [],
  privateParamsSchema: [],
  verificationCall: { uri, hardcodedInputs: [], passAddress: false },
  ...extra,
});

export function createPluginRequest(t: TestApp, token: string, body: Record<string, unknown>) {
  return t.request('POST', '/api/v0/plugins', { token, body });
}

/** Creates a plugin document over HTTP (finalized first version unless told) and returns its id. */
export async function createPlugin(
  t: TestApp,
  token: string,
  uri: string,
  config: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Promise<string> {
  const pluginId = (extra.pluginId as string | undefined) ?? newPluginId();
  const res = await createPluginRequest(t, token, {
    pluginId,
    metadata: { name: `Plugin ${pluginId}`, description: 'test plugin', image: '' },
    toPublish: false,
    initialVersion: { ...versionConfig(uri, config), finalized: true },
    ...extra,
  });
  assert.equal(res.statusCode, 200, res.body);
  return pluginId;
}

export function updatePlugin(t: TestApp, token: string, body: Record<string, unknown>) {
  return t.request('PUT', '/api/v0/plugins', { token, body });
}

/** The plugin's secret, read as its owner (returnSensitiveData). */
export async function pluginSecret(t: TestApp, token: string, pluginId: string): Promise<string> {
  const res = await t.request('POST', '/api/v0/plugins/fetch', {
    token,
    body: { pluginIds: [pluginId], returnSensitiveData: true },
  });
  assert.equal(res.statusCode, 200, res.body);
  const secret = res.json().plugins[0]?.pluginSecret as string;
  assert.match(secret, /^[0-9a-f]{64}$/);
  return secret;
}
