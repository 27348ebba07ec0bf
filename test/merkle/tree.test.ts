// The tree, rebuilt independently: merkletreejs (node:crypto SHA-256, fillDefaultHash of 32 zero
// bytes) must give the same roots and proofs, and every proof must pass a separate implementation
// of the chain's CheckMerklePath / GetLeafIndex.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { MerkleTree as ReferenceTree } from 'merkletreejs';
import { nodeHex } from '../../src/merkle/digest.ts';
import { codeLeaves, stringLeaves } from '../../src/merkle/leaves.ts';
import { buildTree, buildTreeAsync, proveLeaf, rootHex, MAX_LEAVES, type ProofStep } from '../../src/merkle/tree.ts';

const sha256 = (data: Buffer | string): Buffer => createHash('sha256').update(data).digest();
const code = (seed: string, i: number) => `${sha256(`${seed}-${i}`).toString('hex')}-${i}`;

/** The chain's check, written from its description: fold the aunts, compare, recover the index. */
function chainVerify(leafPreimage: string, aunts: ProofStep[], root: string, expectedProofLength: number): { ok: boolean; leafIndex: number } {
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

describe('leaves', () => {
  test('code leaves are sha256 of sha256hex("<seed>-<i>")-<i>', () => {
    const seed = randomBytes(32).toString('hex');
    const indices = [0, 1, 9, 10, 99, 100, 12345, 999_999, 1_048_575];
    const layer = new Uint8Array((indices.at(-1)! + 1) * 32);
    const fill = codeLeaves(seed);
    for (const i of indices) fill(layer, i, i + 1);
    for (const i of indices) assert.equal(nodeHex(layer, i), sha256(code(seed, i)).toString('hex'), `index ${i}`);
  });

  test('code leaves work for seeds of any length, not only 64 hex characters', () => {
    for (const seed of ['', 'short', 'x'.repeat(200), 'ünïcödé']) {
      const layer = new Uint8Array(3 * 32);
      codeLeaves(seed)(layer, 0, 3);
      for (let i = 0; i < 3; i++) assert.equal(nodeHex(layer, i), sha256(code(seed, i)).toString('hex'));
    }
  });

  test('string leaves are sha256 of the UTF-8 bytes', () => {
    const values = ['bb1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqs7gvmv', '', 'é'.repeat(100)];
    const layer = new Uint8Array(values.length * 32);
    stringLeaves(values)(layer, 0, values.length);
    values.forEach((v, i) => assert.equal(nodeHex(layer, i), sha256(v).toString('hex')));
  });
});

describe('tree', () => {
  for (const count of [1, 2, 3, 5, 8, 1000, 4097]) {
    test(`${count} leaves: same root and proofs as merkletreejs, and the chain accepts every proof`, () => {
      const seed = randomBytes(32).toString('hex');
      const codes = Array.from({ length: count }, (_, i) => code(seed, i));
      const tree = buildTree(count, codeLeaves(seed));
      const reference = new ReferenceTree(codes.map((c) => sha256(c)), sha256, { fillDefaultHash: Buffer.alloc(32) });
      const root = reference.getRoot().toString('hex');
      assert.equal(rootHex(tree), root);
      assert.equal(tree.depth, reference.getLayers().length - 1);
      for (let i = 0; i < count; i++) {
        const leaf = sha256(codes[i]).toString('hex');
        const details = proveLeaf(tree, leaf);
        const expected = reference.getProof(sha256(codes[i]), i).map((p) => ({ aunt: p.data.toString('hex'), onRight: p.position === 'right' }));
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
