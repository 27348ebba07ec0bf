// The merkle tree the chain checks proofs against (reference-service §3.3): leaves already hashed
// (sha256 of the code or of the native address), in claim-number order, no sorting; the leaf layer
// is padded with 32 zero bytes up to the next power of two; parent = sha256(left ‖ right). Each
// layer is one contiguous Uint8Array (32 bytes per node); the zero padding is simply the array's
// initial content.
import { setImmediate as nextTick } from 'node:timers/promises';
import { NODE_BYTES, TreeHasher, hexToNode, nodeHex } from './digest.ts';
import type { BuildPool } from './build-pool.ts';
import { leafFiller, type LeafFiller, type LeafSource } from './leaves.ts';

/** The chain accepts proofs of at most 20 aunts (`expectedProofLength` ≤ 20). */
export const MAX_PROOF_LENGTH = 20;
export const MAX_LEAVES = 2 ** MAX_PROOF_LENGTH;

export interface MerkleTree {
  /** Leaves before padding. */
  leafCount: number;
  /** Proof length (the chain's `expectedProofLength`): layers.length - 1. */
  depth: number;
  /** layers[0]: the padded leaf layer (2^depth leaves); layers[depth]: the root. */
  layers: Uint8Array[];
  /** Open-addressing table over the real leaves, keyed by a leaf's first 4 bytes: leaf index + 1. */
  lookup: Int32Array;
  /** Memory held by the tree, in bytes (for the cache's budget). */
  byteSize: number;
}

export interface ProofStep {
  aunt: string;
  onRight: boolean;
}

/** One entry of `allProofDetails` (docs/onchain-claims.md). */
export interface ProofDetails {
  proofObj: ProofStep[];
  isValidProof: boolean;
  leafIndex: number;
  leaf: string;
}

export function paddedSize(leafCount: number): number {
  let size = 1;
  while (size < leafCount) size *= 2;
  return leafCount === 0 ? 0 : size;
}

function sameNode(a: Uint8Array, ao: number, b: Uint8Array, bo: number): boolean {
  for (let i = 0; i < NODE_BYTES; i++) if (a[ao + i] !== b[bo + i]) return false;
  return true;
}

// Digests are uniformly distributed, so their first four bytes are a good hash-table key.
const slotKey = (bytes: Uint8Array, off: number) =>
  (bytes[off] << 24) | (bytes[off + 1] << 16) | (bytes[off + 2] << 8) | bytes[off + 3];

/** Index of the first leaf equal to the 32 bytes `node`, or -1. */
export function findLeaf(tree: MerkleTree, node: Uint8Array): number {
  if (tree.leafCount === 0) return -1;
  const leaves = tree.layers[0];
  const mask = tree.lookup.length - 1;
  for (let slot = slotKey(node, 0) & mask; ; slot = (slot + 1) & mask) {
    const entry = tree.lookup[slot];
    if (entry === 0) return -1;
    if (sameNode(leaves, (entry - 1) * NODE_BYTES, node, 0)) return entry - 1;
  }
}

function buildLookup(leaves: Uint8Array, leafCount: number): Int32Array {
  let capacity = 2;
  while (capacity < leafCount * 2) capacity *= 2;
  const table = new Int32Array(capacity);
  const mask = capacity - 1;
  for (let i = 0; i < leafCount; i++) {
    for (let slot = slotKey(leaves, i * NODE_BYTES) & mask; ; slot = (slot + 1) & mask) {
      const entry = table[slot];
      if (entry === 0) {
        table[slot] = i + 1;
        break;
      }
      if (sameNode(leaves, (entry - 1) * NODE_BYTES, leaves, i * NODE_BYTES)) break; // duplicate: the first index answers
    }
  }
  return table;
}

function assertLeafCount(leafCount: number): void {
  if (!Number.isInteger(leafCount) || leafCount < 0 || leafCount > MAX_LEAVES) {
    throw new RangeError(`A merkle tree holds 0 to ${MAX_LEAVES} leaves (got ${leafCount})`);
  }
}

/** The tree over finished layers (layers[0]: the padded leaves), with its leaf index. */
function finishTree(layers: Uint8Array[], leafCount: number): MerkleTree {
  const lookup = buildLookup(layers[0], leafCount);
  const byteSize = layers.reduce((n, l) => n + l.byteLength, lookup.byteLength);
  return { leafCount, depth: layers.length - 1, layers, lookup, byteSize };
}

/**
 * The build as resumable steps: it yields after every `slice` units of work so the async driver
 * can let other requests run while a large tree is built.
 */
function* buildSteps(leafCount: number, fill: LeafFiller, slice: number): Generator<void, MerkleTree> {
  assertLeafCount(leafCount);
  const size = paddedSize(leafCount);
  const leaves = new Uint8Array(size * NODE_BYTES);
  const hasher = new TreeHasher();
  try {
    for (let from = 0; from < leafCount; from += slice) {
      fill(leaves, from, Math.min(leafCount, from + slice), hasher);
      yield;
    }
  } finally {
    hasher.wipe();
  }
  const layers = [leaves];
  for (let nodes = size; nodes > 1; nodes /= 2) {
    const below = layers[layers.length - 1];
    const above = new Uint8Array((nodes / 2) * NODE_BYTES);
    for (let from = 0; from < nodes / 2; from += slice) {
      hasher.hashPairs(below, above, from, Math.min(nodes / 2, from + slice));
      yield;
    }
    layers.push(above);
  }
  return finishTree(layers, leafCount);
}

/**
 * One unit of a parallel build: the aligned subtree of leaves [start, start + size) of the padded
 * leaf layer (real leaves end at `leafCount`), hashed up to its own root. `layers[0…log2(size)]`
 * are the tree's layers in shared memory; chunks write disjoint ranges of them.
 */
export interface ChunkTask {
  source: LeafSource;
  leafCount: number;
  start: number;
  size: number;
  layers: Uint8Array[];
}

export function buildChunk(task: ChunkTask, hasher: TreeHasher): void {
  const { layers, start, size } = task;
  const end = Math.min(start + size, task.leafCount);
  if (end > start) leafFiller(task.source)(layers[0], start, end, hasher);
  for (let level = 0; size >>> (level + 1) >= 1; level++) {
    hasher.hashPairs(layers[level], layers[level + 1], start >>> (level + 1), (start + size) >>> (level + 1));
  }
}

/** Below this many leaves a tree is built on the main thread: starting the chunks would cost more. */
export const PARALLEL_MIN_LEAVES = 16_384;

/**
 * Builds on the pool's worker threads: the padded leaf layer is cut into aligned subtrees (a few
 * per thread, so a slow chunk does not hold the others back), each hashed up to its own root in a
 * worker; the main thread only hashes the few layers above the chunks and indexes the leaves.
 * Small trees, and a pool without threads, build on the main thread in slices.
 */
export async function buildTreeParallel(leafCount: number, source: LeafSource, pool: BuildPool): Promise<MerkleTree> {
  if (pool.threads === 0 || leafCount < PARALLEL_MIN_LEAVES) return buildTreeAsync(leafCount, leafFiller(source));
  assertLeafCount(leafCount);
  const size = paddedSize(leafCount);
  const layers: Uint8Array[] = [];
  for (let nodes = size; nodes >= 1; nodes /= 2) layers.push(new Uint8Array(new SharedArrayBuffer(nodes * NODE_BYTES)));
  let chunk = size;
  while (chunk / 2 >= 4096 && size / chunk < pool.threads * 4) chunk /= 2;
  const chunkLevels = Math.log2(chunk);
  const tasks: Promise<void>[] = [];
  for (let start = 0; start < size; start += chunk) {
    // A chunk past the last leaf is all padding: only its subtree of zero leaves is hashed.
    const chunkSource =
      source.kind === 'strings'
        ? { kind: 'strings' as const, values: source.values.slice(start, start + chunk), first: start }
        : source;
    tasks.push(
      pool.run({ source: chunkSource, leafCount, start, size: chunk, layers: layers.slice(0, chunkLevels + 1) }),
    );
  }
  await Promise.all(tasks);
  const hasher = new TreeHasher();
  for (let level = chunkLevels; level < layers.length - 1; level++)
    hasher.hashPairs(layers[level], layers[level + 1], 0, size >>> (level + 1));
  return finishTree(layers, leafCount);
}

/** Builds synchronously (tests, benchmarks, small trees). */
export function buildTree(leafCount: number, fill: LeafFiller): MerkleTree {
  const steps = buildSteps(leafCount, fill, Number.MAX_SAFE_INTEGER);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Builds in slices of a few milliseconds, yielding to the event loop in between. */
export async function buildTreeAsync(leafCount: number, fill: LeafFiller, slice = 4096): Promise<MerkleTree> {
  const steps = buildSteps(leafCount, fill, slice);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await nextTick();
  }
}

/** Root as lowercase hex ('' for a tree without leaves). */
export function rootHex(tree: MerkleTree): string {
  return tree.leafCount === 0 ? '' : nodeHex(tree.layers[tree.depth], 0);
}

/** Siblings from the leaf up: `onRight` when the sibling is the right-hand input of the parent. */
export function proofPath(tree: MerkleTree, leafIndex: number): ProofStep[] {
  const proof: ProofStep[] = [];
  let index = leafIndex;
  for (let level = 0; level < tree.depth; level++) {
    proof.push({ aunt: nodeHex(tree.layers[level], index ^ 1), onRight: (index & 1) === 0 });
    index >>>= 1;
  }
  return proof;
}

/**
 * Proof details for a leaf given as 64 hex characters. A leaf that is not in the tree gets
 * `isValidProof: false`, `leafIndex: -1` and no aunts: never a proof of some other leaf.
 */
export function proveLeaf(tree: MerkleTree, leaf: string): ProofDetails {
  const normalized = leaf.toLowerCase();
  const node = hexToNode(normalized);
  const index = node ? findLeaf(tree, node) : -1;
  if (index < 0) return { proofObj: [], isValidProof: false, leafIndex: -1, leaf: normalized };
  const proofObj = proofPath(tree, index);
  return { proofObj, isValidProof: proofObj.length === tree.depth, leafIndex: index, leaf: normalized };
}
