// headerField values are HTTP header values: printable ASCII, space and tab, in their serialised
// form (numbers, booleans and dates as sent). A value outside that is refused when it is saved
// (claim params at claim create / update, hardcoded inputs and defaults at plugin save) or sent
// (user inputs at simulate / complete): a 400 naming the field, with no call made and no error
// record written for the plugin's owner (a probe found such values saved with 200, then every
// attempt failing at call time and logged as the endpoint's fault).
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { startHttpsEndpoint, type HttpsEndpoint } from '../helpers/https-endpoint.ts';
import {
  createPlugin,
  createPluginRequest,
  newPluginId,
  owner,
  updatePlugin,
  versionConfig,
} from '../helpers/plugins.ts';
import type { SignedIn } from '../helpers/signin.ts';
import { attempt, claimWithPlugins, newClaimId, numUses, randomAddress } from '../claims/helpers.ts';

const field = (key: string, type: string, extra: Record<string, unknown> = {}) => ({ key, label: key, type, ...extra });
const custom = (
  pluginId: string,
  publicParams: Record<string, unknown> = {},
  privateParams: Record<string, unknown> = {},
) => ({ pluginId, instanceId: 'cp', version: '1', publicParams, privateParams });
const rule = 'must be a valid HTTP header value (headerField): printable ASCII characters, space and tab only';
const BAD = ['a\r\nInjected: 1', 'é 😀', 'del\u007f']; // NUL is refused for every body before any route runs

describe('custom plugins: headerField values', () => {
  let ep: HttpsEndpoint;
  let alice: SignedIn;
  let pluginId: string;
  before(async () => {
    ep = await startHttpsEndpoint();
    ep.respond(() => ({ body: {} }));
  });
  const t = useApp({ plugins: true, env: { RUN_WORKER: 'false' } });
  before(async () => {
    alice = await owner(t);
    pluginId = await createPlugin(t, alice.accessToken, ep.url, {
      requiresUserInputs: true,
      userInputsSchema: [field('X-User-Hint', 'string', { headerField: true })],
      publicParamsSchema: [field('X-Site', 'url', { headerField: true })],
      privateParamsSchema: [field('X-Api-Key', 'string', { headerField: true })],
    });
  });
  after(() => ep.close());

  async function errorRecords(): Promise<number> {
    const res = await t.request('GET', `/api/v0/plugins/errors?pluginId=${pluginId}`, { token: alice.accessToken });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().total as number;
  }

  test('claim create and update refuse a private or public param header value outside printable ASCII (400 naming it)', async () => {
    const create = (pub: Record<string, unknown>, priv: Record<string, unknown>) =>
      t.request('POST', '/api/v0/claims', {
        token: alice.accessToken,
        body: { claims: [{ claimId: newClaimId(), plugins: [numUses(3), custom(pluginId, pub, priv)] }] },
      });
    for (const bad of BAD) {
      const res = await create({}, { 'X-Api-Key': bad });
      assert.equal(res.statusCode, 400, `${JSON.stringify(bad)}: ${res.body}`);
      assert.deepEqual(res.json(), { errorMessage: `claims[0].plugins[1].privateParams.X-Api-Key ${rule}` });
    }
    // a url passes the URL parser with CR LF inside (the parser drops them), not the header rule
    const url = await create({ 'X-Site': 'https://x.example/a\r\nInjected: 1' }, {});
    assert.equal(url.statusCode, 400, url.body);
    assert.deepEqual(url.json(), { errorMessage: `claims[0].plugins[1].publicParams.X-Site ${rule}` });

    const claimId = await claimWithPlugins(t, alice.accessToken, [
      numUses(3),
      custom(pluginId, { 'X-Site': 'https://x.example/a' }, { 'X-Api-Key': 'k-1\twith tab ~' }),
    ]);
    const update = await t.request('PUT', '/api/v0/claims', {
      token: alice.accessToken,
      body: { claims: [{ claimId, plugins: [numUses(3), custom(pluginId, {}, { 'X-Api-Key': 'a\r\nb' })] }] },
    });
    assert.equal(update.statusCode, 400, update.body);
    assert.deepEqual(update.json(), { errorMessage: `claims[0].plugins[1].privateParams.X-Api-Key ${rule}` });

    // the accepted values are sent as they are
    const before = ep.requests.length;
    const ok = await attempt(t, 'simulate', claimId, randomAddress(), { cp: { 'X-User-Hint': ' plain ' } });
    assert.equal(ok.statusCode, 200, ok.body);
    const call = ep.requests[before]!;
    assert.equal(call.headers['x-api-key'], 'k-1\twith tab ~');
    assert.equal(call.headers['x-site'], 'https://x.example/a');
    assert.equal(await errorRecords(), 0);
  });

  test('a user input header value is the claimer’s 400 at simulate and complete: no call, no error record', async () => {
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(3), custom(pluginId)]);
    const before = ep.requests.length;
    for (const kind of ['simulate', 'complete'] as const) {
      for (const bad of BAD) {
        const res = await attempt(t, kind, claimId, randomAddress(), { cp: { 'X-User-Hint': bad } });
        assert.equal(res.statusCode, 400, `${kind} ${JSON.stringify(bad)}: ${res.body}`);
        assert.deepEqual(res.json(), { errorMessage: `body.cp.X-User-Hint ${rule}` });
      }
    }
    assert.equal(ep.requests.length, before, 'the endpoint is never called');
    assert.equal(await errorRecords(), 0, 'nothing in the owner’s error log');
  });

  test('plugin create and update refuse a hardcoded input, default or option header value outside printable ASCII', async () => {
    const body = (config: Record<string, unknown>) => ({
      pluginId: newPluginId(),
      metadata: { name: 'h', description: '', image: '' },
      toPublish: false,
      initialVersion: versionConfig(ep.url, config),
    });
    const hardcoded = (value: unknown, type = 'string') => ({
      verificationCall: {
        uri: ep.url,
        hardcodedInputs: [{ ...field('X-Static', type, { headerField: true }), value }],
      },
    });
    for (const [config, errorMessage] of [
      [hardcoded('a\r\nb'), `initialVersion.verificationCall.hardcodedInputs[0].value ${rule}`],
      [hardcoded('é 😀'), `initialVersion.verificationCall.hardcodedInputs[0].value ${rule}`],
      [hardcoded('https://x.example/\nb', 'url'), `initialVersion.verificationCall.hardcodedInputs[0].value ${rule}`],
      [
        { privateParamsSchema: [field('X-Key', 'string', { headerField: true, defaultValue: 'a\nb' })] },
        `initialVersion.privateParamsSchema[0].defaultValue ${rule}`,
      ],
      [
        {
          publicParamsSchema: [field('X-Mode', 'string', { headerField: true, options: [{ label: 'A', value: 'ä' }] })],
        },
        `initialVersion.publicParamsSchema[0].options[0].value ${rule}`,
      ],
    ] as const) {
      const res = await createPluginRequest(t, alice.accessToken, body(config));
      assert.equal(res.statusCode, 400, `${JSON.stringify(config)}: ${res.body}`);
      assert.deepEqual(res.json(), { errorMessage }, JSON.stringify(config));
    }
    // numbers, booleans and dates are checked as sent (String(value)): always ASCII
    const fine = await createPluginRequest(
      t,
      alice.accessToken,
      body({
        verificationCall: {
          uri: ep.url,
          hardcodedInputs: [
            { ...field('X-N', 'number', { headerField: true }), value: -1.5e21 },
            { ...field('X-B', 'boolean', { headerField: true }), value: true },
            { ...field('X-D', 'date', { headerField: true }), value: 0 },
          ],
        },
      }),
    );
    assert.equal(fine.statusCode, 200, fine.body);

    const id = fine.json().plugin.pluginId as string;
    const update = await updatePlugin(t, alice.accessToken, {
      pluginId: id,
      versionCreate: versionConfig(ep.url, hardcoded('x\r\nInjected: 1')),
    });
    assert.equal(update.statusCode, 400, update.body);
    assert.deepEqual(update.json(), {
      errorMessage: `versionCreate.verificationCall.hardcodedInputs[0].value ${rule}`,
    });
  });
});
