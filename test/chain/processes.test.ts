// The indexer as real processes (`platform indexer`) on one database:
//   - SIGKILLed in the middle of a block (its reads done in part, nothing committed): the restart
//     resumes at the next uncommitted height and the read model ends with every transfer once;
//   - two indexers at once: one holds the lease and indexes; SIGKILL it and the other takes over.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createTestDatabase, startApp, type TestApp } from '../helpers/app.ts';
import { BIN, runCli } from '../helpers/cli.ts';
import { addressOf, bal, collectionDoc, messageEvent, startFakeChain, type FakeChain } from '../helpers/fake-chain.ts';
import { indexerDetails, waitIndexed } from './helpers.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

interface Proc {
  child: ChildProcess;
  kill(signal: NodeJS.Signals): Promise<void>;
}

function startIndexer(env: Record<string, string>): Promise<Proc> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'indexer'], {
      env: { ...process.env, ...env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const proc: Proc = {
      child,
      kill: (signal) =>
        new Promise((r) => {
          if (child.exitCode !== null || child.signalCode !== null) return r();
          child.once('close', () => r());
          child.kill(signal);
        }),
    };
    const onData = (d: Buffer) => {
      out += d;
      if (/"msg":"indexer started"/.test(out)) resolve(proc);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('close', (code) => reject(new Error(`platform indexer exited (${code}) before it was ready:\n${out}`)));
  });
}

const MANAGER = addressOf(100);
const holderAddress = (block: number, i: number) => addressOf(1000 + block * 10 + i);

/** Blocks 1..n after a creation block: each mints token 1 to five fresh addresses. */
function mintBlocks(chain: FakeChain, from: number, to: number): void {
  for (let h = from; h <= to; h++)
    chain.addBlock(
      Array.from({ length: 5 }, (_, i) =>
        chain.transfer({ collectionId: '1', from: 'Mint', to: holderAddress(h, i), tokenId: 1, amount: h }),
      ),
    );
}

async function allIds(t: TestApp, path: string, key: string): Promise<string[]> {
  const ids: string[] = [];
  let bookmark = '';
  for (;;) {
    const res = await t.request('GET', `${path}?bookmark=${encodeURIComponent(bookmark)}`);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    ids.push(...body[key].map((d: { _docId: string }) => d._docId));
    if (!body.pagination.hasMore) return ids;
    bookmark = body.pagination.bookmark;
  }
}

describe('indexer processes on one database', () => {
  let t: TestApp;
  let chain: FakeChain;
  let env: Record<string, string>;
  const procs: Proc[] = [];
  before(async () => {
    chain = await startFakeChain();
    const database = createTestDatabase();
    env = {
      ...database.env,
      CHAIN_REST_URL: chain.url,
      CHAIN_POLL_INTERVAL_MS: '100',
      CHAIN_INDEXER_LEASE_MS: '1500',
      CHAIN_INDEX_BATCH: '4',
    };
    // this process serves reads only; the indexers are child processes
    t = await startApp({ database, env: { ...env, RUN_WORKER: 'false' } });
    chain.setCollection('1', collectionDoc('1', MANAGER));
    chain.addBlock([
      chain.tx([messageEvent({ msgType: 'universal_update_collection', collectionId: '1', sender: MANAGER })]),
    ]);
    mintBlocks(chain, 2, 20);
  });
  after(async () => {
    await Promise.all(procs.map((p) => p.kill('SIGKILL')));
    await t.close();
    await chain.close();
  });

  test('SIGKILL between the reads and the commit of a block: restart resumes there, nothing lost or duplicated', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    chain.intercept({ match: (p, h) => h === 12 && p.includes('/get_balance/'), action: { wait: held } });
    const first = await startIndexer(env);
    procs.push(first);
    try {
      const until = Date.now() + PATIENCE_MS;
      while (!chain.requests.some((r) => r.height === 12 && r.path.includes('/get_balance/'))) {
        if (Date.now() > until) throw new Error('the indexer never reached block 12');
        await new Promise((r) => setTimeout(r, 20));
      }
      await waitIndexed(t, 11); // everything before the held block commits; 12 cannot
      await first.kill('SIGKILL');
      assert.equal((await indexerDetails(t))!.indexedHeight, 11, 'the held block was not committed');
    } finally {
      chain.clearInterceptors();
      release();
    }

    const mark = chain.requests.length;
    const second = await startIndexer(env);
    procs.push(second);
    await waitIndexed(t, 20);
    const blockReads = chain.requests
      .slice(mark)
      .map((r) => /\/blocks\/(\d+)$/.exec(r.path)?.[1])
      .filter((x): x is string => x !== undefined)
      .map(Number);
    assert.equal(Math.min(...blockReads), 12, 'the restart read no block it had already committed');

    const activity = await allIds(t, '/api/v0/collection/1/activity', 'activity');
    assert.equal(activity.length, 19 * 5, 'every transfer exactly once');
    assert.equal(new Set(activity).size, activity.length);
    const owners = await allIds(t, '/api/v0/collection/1/owners', 'owners');
    assert.equal(owners.length, 95);
    const b = (await t.request('GET', `/api/v0/collection/1/balance/${holderAddress(12, 3)}`)).json();
    assert.deepEqual(b.balances, [bal('12', '1')]);
    await second.kill('SIGTERM');
  });

  test('two indexers: one holds the lease; SIGKILL it and the other takes over', async () => {
    const a = await startIndexer(env);
    const b = await startIndexer(env);
    procs.push(a, b);
    mintBlocks(chain, 21, 25);
    await waitIndexed(t, 25);
    const status = JSON.parse((await runCli(['indexer', 'status'], env)).stdout);
    assert.equal(status.indexedHeight, 25);
    assert.equal(status.lag, 0);
    const holderPid = Number(String(status.leaseHolder).split(':').at(-2));
    const [holder, other] = holderPid === a.child.pid ? [a, b] : [b, a];
    assert.equal(holder.child.pid, holderPid, `lease held by one of the two (${status.leaseHolder})`);

    await holder.kill('SIGKILL');
    mintBlocks(chain, 26, 30);
    await waitIndexed(t, 30); // after the lease (1.5 s) expires
    const after = JSON.parse((await runCli(['indexer', 'status'], env)).stdout);
    assert.equal(Number(String(after.leaseHolder).split(':').at(-2)), other.child.pid);
    const activity = await allIds(t, '/api/v0/collection/1/activity', 'activity');
    assert.equal(activity.length, 29 * 5);
    assert.equal(new Set(activity).size, activity.length);
    await other.kill('SIGTERM');
  });
});
