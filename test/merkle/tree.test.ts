// The tree, rebuilt independently: merkletreejs (node:crypto SHA-256, fillDefaultHash of 32 zero
// bytes) must give the same roots and proofs, and every proof must pass a separate implementation
// of the chain's CheckMerklePath / GetLeafIndex.
// test-run: once (no database: pure code; scripts/test.mjs)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { MerkleTree as ReferenceTree } from 'merkletreejs';
import { TreeHasher, nodeHex, viewOf } from '../../src/merkle/digest.ts';
import { codeLeaves, stringLeaves } from '../../src/merkle/leaves.ts';
import { BuildPool } from '../../src/merkle/build-pool.ts';
import {
  buildTree,
  buildTreeAsync,
  buildTreeParallel,
  proveLeaf,
  rootHex,
  MAX_LEAVES,
  PARALLEL_MIN_LEAVES,
  type ProofStep,
} from '../../src/merkle/tree.ts';

const sha256 = (data: Buffer | string): Buffer => createHash('sha256').update(data).digest();
const code = (seed: string, i: number) => `${sha256(`${seed}-${i}`).toString('hex')}-${i}`;

/** The chain's check, written from its description: fold the aunts, compare, recover the index. */
function chainVerify(
  leafPreimage: string,
  aunts: ProofStep[],
  root: string,
  expectedProofLength: number,
): { ok: boolean; leafIndex: number } {
  if (aunts.length !== expectedProofLength) return { ok: false, leafIndex: -1 };
  let current = sha256(leafPreimage);
  for (const { aunt, onRight } of aunts) {
    const a = Buffer.from(aunt, 'hex');
    current = onRight ? sha256(Buffer.concat([current, a])) : sha256(Buffer.concat([a, current]));
  }
  if (current.toString('hex') !== root) return { ok: false, leafIndex: -1 };
  let x = 1;
  for (let i = aunts.length - 1; i >= 0; i--) x = aunts[i].onRight ? 2 * x : 2 * x + 1;
  return { ok: true, leafIndex: x - 2 ** expectedProofLength };
}

describe('digest', () => {
  test('the tree engine equals node:crypto SHA-256 for every message length 0..300 and for node pairs', () => {
    const hasher = new TreeHasher();
    const out = new Uint8Array(32);
    for (let length = 0; length <= 300; length++) {
      const text = randomBytes(length)
        .toString('latin1')
        .replace(/[^\x20-\x7e]/g, 'a');
      hasher.hashStringInto(text, viewOf(out), 0);
      assert.equal(
        Buffer.from(out).toString('hex'),
        sha256(Buffer.from(text, 'utf8')).toString('hex'),
        `length ${length}`,
      );
    }
    // a long multi-byte string grows the message buffer
    const long = 'ü€𝄞'.repeat(500);
    hasher.hashStringInto(long, viewOf(out), 0);
    assert.equal(Buffer.from(out).toString('hex'), sha256(long).toString('hex'));
    const below = randomBytes(64 * 9);
    const above = new Uint8Array(32 * 9);
    hasher.hashPairs(below, above, 0, 9);
    for (let j = 0; j < 9; j++)
      assert.equal(nodeHex(above, j), sha256(below.subarray(j * 64, j * 64 + 64)).toString('hex'), `pair ${j}`);
  });
});

describe('leaves', () => {
  test('code leaves are sha256 of sha256hex("<seed>-<i>")-<i>', () => {
    const seed = randomBytes(32).toString('hex');
    const indices = [0, 1, 9, 10, 99, 100, 12345, 999_999, 1_048_575];
    const layer = new Uint8Array((indices.at(-1)! + 1) * 32);
    const fill = codeLeaves(seed);
    const hasher = new TreeHasher();
    for (const i of indices) fill(layer, i, i + 1, hasher);
    for (const i of indices) assert.equal(nodeHex(layer, i), sha256(code(seed, i)).toString('hex'), `index ${i}`);
  });

  test('code leaves work for seeds of any length, not only 64 hex characters', () => {
    for (const seed of ['', 'short', 'x'.repeat(200), 'ünïcödé']) {
      const layer = new Uint8Array(3 * 32);
      codeLeaves(seed)(layer, 0, 3, new TreeHasher());
      for (let i = 0; i < 3; i++) assert.equal(nodeHex(layer, i), sha256(code(seed, i)).toString('hex'));
    }
  });

  test('string leaves are sha256 of the UTF-8 bytes', () => {
    const values = ['bb1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqs7gvmv', '', 'é'.repeat(100)];
    const layer = new Uint8Array(values.length * 32);
    stringLeaves(values)(layer, 0, values.length, new TreeHasher());
    values.forEach((v, i) => assert.equal(nodeHex(layer, i), sha256(v).toString('hex')));
  });
});

describe('tree', () => {
  for (const count of [1, 2, 3, 5, 8, 1000, 4097]) {
    test(`${count} leaves: same root and proofs as merkletreejs, and the chain accepts every proof`, () => {
      const seed = randomBytes(32).toString('hex');
      const codes = Array.from({ length: count }, (_, i) => code(seed, i));
      const tree = buildTree(count, codeLeaves(seed));
      const reference = new ReferenceTree(
        codes.map((c) => sha256(c)),
        sha256,
        { fillDefaultHash: Buffer.alloc(32) },
      );
      const root = reference.getRoot().toString('hex');
      assert.equal(rootHex(tree), root);
      assert.equal(tree.depth, reference.getLayers().length - 1);
      for (let i = 0; i < count; i++) {
        const leaf = sha256(codes[i]).toString('hex');
        const details = proveLeaf(tree, leaf);
        const expected = reference
          .getProof(sha256(codes[i]), i)
          .map((p) => ({ aunt: p.data.toString('hex'), onRight: p.position === 'right' }));
        assert.deepEqual(details.proofObj, expected, `leaf ${i}`);
        assert.equal(details.leafIndex, i);
        assert.equal(details.leaf, leaf);
        assert.equal(details.isValidProof, true);
        assert.deepEqual(chainVerify(codes[i], details.proofObj, root, tree.depth), { ok: true, leafIndex: i });
      }
    });
  }

  test('the async build gives the same tree as the sync one', async () => {
    const seed = randomBytes(32).toString('hex');
    const a = buildTree(777, codeLeaves(seed));
    const b = await buildTreeAsync(777, codeLeaves(seed), 10);
    assert.equal(rootHex(b), rootHex(a));
    assert.deepEqual(b.layers, a.layers);
  });

  test('a leaf that is not in the tree gets isValidProof false and no proof, even in a one-leaf tree', () => {
    for (const count of [1, 2, 5]) {
      const seed = randomBytes(32).toString('hex');
      const tree = buildTree(count, codeLeaves(seed));
      const stranger = sha256(code(seed, count)).toString('hex'); // the next code, not in the tree
      assert.deepEqual(proveLeaf(tree, stranger), { proofObj: [], isValidProof: false, leafIndex: -1, leaf: stranger });
      // the zero padding is not a leaf either
      assert.equal(proveLeaf(tree, '0'.repeat(64)).isValidProof, false);
    }
    const empty = buildTree(0, codeLeaves('s'));
    assert.equal(rootHex(empty), '');
    assert.equal(proveLeaf(empty, sha256('x').toString('hex')).isValidProof, false);
  });

  test('upper-case hex leaves are found; the answer carries the lower-case leaf', () => {
    const tree = buildTree(3, stringLeaves(['a', 'b', 'c']));
    const leaf = sha256('b').toString('hex');
    const details = proveLeaf(tree, leaf.toUpperCase());
    assert.equal(details.leafIndex, 1);
    assert.equal(details.leaf, leaf);
  });

  test('a repeated leaf answers with its first index', () => {
    const tree = buildTree(4, stringLeaves(['a', 'b', 'a', 'c']));
    assert.equal(proveLeaf(tree, sha256('a').toString('hex')).leafIndex, 0);
  });

  test('more leaves than the chain can prove are refused', () => {
    assert.throws(() => buildTree(MAX_LEAVES + 1, codeLeaves('s')), RangeError);
  });
});

describe('parallel build on worker threads', () => {
  test('gives the same layers and leaf index as the main-thread build, for codes and for strings', async () => {
    const pool = new BuildPool(2);
    try {
      for (const count of [PARALLEL_MIN_LEAVES, PARALLEL_MIN_LEAVES + 5, 40_000]) {
        const seed = randomBytes(32).toString('hex');
        const parallel = await buildTreeParallel(count, { kind: 'codes', seedCode: seed }, pool);
        const single = buildTree(count, codeLeaves(seed));
        assert.equal(rootHex(parallel), rootHex(single), `codes, ${count} leaves`);
        assert.deepEqual(
          parallel.layers.map((l) => Buffer.from(l)),
          single.layers.map((l) => Buffer.from(l)),
        );
        assert.deepEqual(parallel.lookup, single.lookup);
      }
      const values = Array.from({ length: 20_000 }, (_, i) => `bb1${i.toString(36).padStart(38, 'q')}`);
      const parallel = await buildTreeParallel(values.length, { kind: 'strings', values }, pool);
      assert.equal(rootHex(parallel), rootHex(buildTree(values.length, stringLeaves(values))));
      const leaf = sha256(values[12_345]).toString('hex');
      assert.equal(proveLeaf(parallel, leaf).leafIndex, 12_345);
      assert.ok(pool.size >= 1 && pool.size <= 2, `the pool runs at most its thread count (${pool.size})`);
    } finally {
      await pool.close();
    }
  });

  test('a pool without threads builds on the main thread', async () => {
    const pool = new BuildPool(0);
    const seed = randomBytes(32).toString('hex');
    const tree = await buildTreeParallel(PARALLEL_MIN_LEAVES + 1, { kind: 'codes', seedCode: seed }, pool);
    assert.equal(rootHex(tree), rootHex(buildTree(PARALLEL_MIN_LEAVES + 1, codeLeaves(seed))));
    assert.equal(pool.size, 0);
  });

  test('killed workers fail the build in flight; the next build starts new workers and succeeds', async () => {
    const pool = new BuildPool(2);
    try {
      const seed = randomBytes(32).toString('hex');
      const inFlight = buildTreeParallel(2 ** 18, { kind: 'codes', seedCode: seed }, pool);
      while (pool.size === 0) await new Promise((r) => setTimeout(r, 5));
      const failed = assert.rejects(inFlight, /stopped/);
      await pool.terminateWorkers();
      await failed;
      assert.equal(pool.size, 0);
      const again = await buildTreeParallel(PARALLEL_MIN_LEAVES * 2, { kind: 'codes', seedCode: seed }, pool);
      assert.equal(rootHex(again), rootHex(buildTree(PARALLEL_MIN_LEAVES * 2, codeLeaves(seed))));
    } finally {
      await pool.close();
    }
  });

  test('a worker that throws rejects the build with the reason; idle workers stop', async () => {
    const pool = new BuildPool(1, 50);
    try {
      const values = Array.from({ length: PARALLEL_MIN_LEAVES }, (_, i) =>
        i === 100 ? (42 as unknown as string) : `v${i}`,
      );
      await assert.rejects(
        buildTreeParallel(values.length, { kind: 'strings', values }, pool),
        /Merkle tree build failed/,
      );
      assert.equal(pool.size, 1);
      for (let i = 0; i < 100 && pool.size > 0; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(pool.size, 0, 'the idle worker stopped');
    } finally {
      await pool.close();
    }
  });
});
