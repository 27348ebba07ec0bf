// The plugin call thread (src/plugin-documents/call-thread.ts): calls batched per turn come back
// each with its own outcome; a thread that stops fails the calls it held instead of leaving them
// hanging, and the next call starts a new thread; a closed thread refuses at once; a process that
// made calls still exits on its own; faults of ours and uncopyable contexts are raised, not
// reported as failed calls. (Every custom plugin test through HTTP runs on the thread too.)
// test-run: once (no database: pure code; scripts/test.mjs)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { versionConfig } from '../helpers/plugins.ts';
import { startHttpsEndpoint, testCertificates, type HttpsEndpoint } from '../helpers/https-endpoint.ts';
import { CallThread } from '../../src/plugin-documents/call-thread.ts';
import type { CallContext } from '../../src/plugin-documents/call.ts';
import type { PluginVersion } from '../../src/plugin-documents/model.ts';
import { toPlatformAddress } from '../../src/shared/addresses.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

const version = (uri: string) =>
  ({
    ...versionConfig(uri, {
      stateFunctionPreset: 'ClaimToken',
      verificationCall: { uri, hardcodedInputs: [], passAddress: true },
    }),
    version: 1,
    finalized: true,
    createdAt: 0,
    lastUpdated: 0,
  }) as PluginVersion;

const context = (uri: string, platformAddress: string): CallContext => ({
  pluginId: 'thread-test',
  pluginSecret: 'ab'.repeat(32),
  version: version(uri),
  instanceId: 'p',
  claim: { claimId: 'c', createdAt: 1, lastUpdated: 2 },
  claimAttemptId: '',
  isSimulation: true,
  attemptStatus: 'executing',
  platformAddress,
  isAddressSignedIn: false,
  locale: 'en',
  publicParams: {},
  privateParams: {},
  inputs: {},
});

const options = () => ({ allowPrivateCidrs: ['127.0.0.1/32'], extraCaPem: testCertificates().caPem });

describe('plugin call thread', () => {
  let endpoint: HttpsEndpoint;
  before(async () => {
    endpoint = await startHttpsEndpoint();
  });
  after(() => endpoint.close());

  /** Runs `fn` with a new thread (the loopback test options unless given), closed afterwards. */
  async function withThread(
    fn: (thread: CallThread) => Promise<void>,
    opts: ConstructorParameters<typeof CallThread>[0] = options(),
  ): Promise<void> {
    const thread = new CallThread(opts);
    try {
      await fn(thread);
    } finally {
      await thread.close();
    }
  }
  /** A call context for a new random address. */
  const anyContext = () => context(endpoint.url, toPlatformAddress(randomBytes(20)));
  /** Waits until the endpoint has received more than `before` requests (the test's timeout bounds it). */
  async function receivedAfter(before: number): Promise<void> {
    while (endpoint.requests.length === before) await new Promise((r) => setTimeout(r, 10));
  }

  test('200 calls made in one turn each get the outcome of their own request', async () => {
    // the endpoint answers every call with the address it was sent, after a delay that varies, so
    // outcomes come back out of order and in several batches
    endpoint.respond((req) => ({
      status: 200,
      body: { claimToken: req.json.platformAddress },
      delayMs: Math.floor(Math.random() * 20),
    }));
    await withThread(async (thread) => {
      const addresses = Array.from({ length: 200 }, () => toPlatformAddress(randomBytes(20)));
      const outcomes = await Promise.all(
        addresses.map((a) => thread.call(context(endpoint.url, a), 1_700_000_000_000)),
      );
      assert.deepEqual(
        outcomes,
        addresses.map((a) => ({ ok: true, response: { claimToken: a } })),
      );
      // a second turn's calls travel in a message of their own
      const again = await thread.call(context(endpoint.url, addresses[0]!), 1_700_000_000_000);
      assert.deepEqual(again, { ok: true, response: { claimToken: addresses[0] } });
      const stats = await thread.stats();
      assert.equal(stats.requests, 201);
      assert.ok(
        stats.tlsHandshakes >= 1 && stats.tlsHandshakes <= 32,
        `connections are pooled (${stats.tlsHandshakes} handshakes)`,
      );
    });
  });

  test('a thread that stops fails the calls it held with a clear outcome; the next call starts a new thread', async () => {
    // the endpoint answers long after any thread stop, however slow the machine
    endpoint.respond(() => ({ status: 200, body: { claimToken: 'late' }, delayMs: 10_000 }));
    await withThread(async (thread) => {
      const address = toPlatformAddress(randomBytes(20));
      const held = thread.call(context(endpoint.url, address), 1);
      const before = endpoint.requests.length;
      await receivedAfter(before);
      assert.equal(endpoint.requests.length, before + 1, 'the call reached the endpoint');
      await thread.terminate();
      // settled by the stop: had it waited for the endpoint, the outcome would be its 'late' answer
      assert.deepEqual(await held, {
        ok: false,
        error: 'Plugin endpoint could not be called: the plugin call thread stopped',
      });

      endpoint.respond(() => ({ status: 200, body: { claimToken: 'fresh' } }));
      assert.deepEqual(await thread.call(context(endpoint.url, address), 1), {
        ok: true,
        response: { claimToken: 'fresh' },
      });
    });
  });

  test('a call made and a thread stopped in the same turn is never sent', async () => {
    endpoint.respond(() => ({ status: 200, body: {} }));
    await withThread(async (thread) => {
      const before = endpoint.requests.length;
      const call = thread.call(anyContext(), 1);
      await thread.terminate();
      assert.deepEqual(await call, {
        ok: false,
        error: 'Plugin endpoint could not be called: the plugin call thread stopped',
      });
      // long enough for a new thread to start and make the call, were it sent
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(
        endpoint.requests.length,
        before,
        'its attempt has its outcome: the call must not be made after all',
      );
    });
  });

  test('stats before any call are zero (no thread is started for them)', async () => {
    await withThread(async (thread) => {
      assert.deepEqual(await thread.stats(), { requests: 0, tlsHandshakes: 0, openPools: 0 });
    });
  });

  test('closing fails the calls in flight as closed', async () => {
    endpoint.respond(() => ({ status: 200, body: {}, delayMs: 10_000 }));
    const thread = new CallThread(options());
    const before = endpoint.requests.length;
    const held = thread.call(anyContext(), 1);
    await receivedAfter(before);
    await thread.close();
    assert.deepEqual(await held, {
      ok: false,
      error: 'Plugin endpoint could not be called: the egress client is closed',
    });
  });

  test('a fault of ours on the thread is raised, not reported as a failed call; the thread goes on', async () => {
    endpoint.respond(() => ({ status: 200, body: {} }));
    await withThread(async (thread) => {
      const broken = { ...anyContext(), inputs: null as unknown as CallContext['inputs'] };
      await assert.rejects(thread.call(broken, 1), (err: Error) => err instanceof Error && /null/.test(err.message));
      assert.deepEqual(await thread.call(anyContext(), 1), { ok: true, response: {} });
    });
  });

  test('a context that cannot be copied to the thread fails its own batch; the next call goes through', async () => {
    endpoint.respond(() => ({ status: 200, body: {} }));
    await withThread(async (thread) => {
      const uncopyable = { ...anyContext(), inputs: { f: (() => 1) as unknown as string } };
      await assert.rejects(thread.call(uncopyable, 1), (err: Error) => err.name === 'DataCloneError');
      assert.deepEqual(await thread.call(anyContext(), 1), { ok: true, response: {} });
    });
  });

  test('a closed thread answers every call at once, and its stats are zero', async () => {
    const thread = new CallThread(options());
    await thread.close();
    assert.deepEqual(await thread.call(anyContext(), 1), {
      ok: false,
      error: 'Plugin endpoint could not be called: the egress client is closed',
    });
    assert.deepEqual(await thread.stats(), { requests: 0, tlsHandshakes: 0, openPools: 0 });
  });

  test('the default configuration refuses a loopback endpoint on the thread as on the main thread', async () => {
    await withThread(async (thread) => {
      const outcome = await thread.call(anyContext(), 1);
      assert.equal(outcome.ok, false);
      const { error, detail } = outcome as { error: string; detail: string };
      assert.equal(error, 'Plugin endpoint could not be called');
      assert.match(detail, /^Plugin endpoint could not be called: .*127\.0\.0\.1.*/);
    }, {});
  });

  test('a process that made calls exits on its own: the thread does not hold it open', async () => {
    endpoint.respond(() => ({ status: 200, body: {} }));
    const script = `
      import { CallThread } from ${JSON.stringify(new URL('../../src/plugin-documents/call-thread.ts', import.meta.url).href)};
      const thread = new CallThread({ allowPrivateCidrs: ['127.0.0.1/32'], extraCaPem: process.env.CA });
      const c = JSON.parse(process.env.CONTEXT);
      const outcome = await thread.call(c, 1);
      console.log(JSON.stringify(outcome));
    `;
    const file = join(mkdtempSync(join(tmpdir(), 'call-thread-')), 'exits.mjs');
    writeFileSync(file, script);
    // asynchronous: the endpoint answers from this process's event loop
    const child = spawn(process.execPath, [file], {
      env: {
        ...process.env,
        CA: testCertificates().caPem,
        CONTEXT: JSON.stringify(context(endpoint.url, toPlatformAddress(randomBytes(20)))),
      },
      timeout: PATIENCE_MS,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const [code, signal] = await new Promise<[number | null, string | null]>((r) =>
      child.once('close', (c, s) => r([c, s])),
    );
    assert.equal(signal, null, `the process had to be killed: ${stderr}`);
    assert.equal(code, 0, stderr);
    assert.deepEqual(JSON.parse(stdout), { ok: true, response: {} });
  });
});
