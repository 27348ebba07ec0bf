// Merkle benchmark: a tree of 1,000,000 code leaves and proofs for 1,000 of them, against
// merkletreejs on the same leaves in the same run.
//   node bench/merkle.ts [leafCount] [proofCount]
// Baselines: merkletreejs with crypto-js SHA256 and hex-string leaves (the reference service's
// configuration) and merkletreejs with node:crypto SHA-256 over Buffers (a faster baseline).
// This service is timed on one thread (buildTree) and as it runs in the service: on the build
// pool's worker threads (MERKLE_BUILD_THREADS, default: the machine's cores).
import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { MerkleTree as ReferenceTree } from 'merkletreejs';
import { codeLeaves, stringLeaves } from '../src/merkle/leaves.ts';
import { BuildPool } from '../src/merkle/build-pool.ts';
import { buildTree, buildTreeParallel, proveLeaf, rootHex, type MerkleTree } from '../src/merkle/tree.ts';
import { record } from './lib/record.ts';

const leafCount = Number(process.argv[2] ?? 1_000_000);
const proofCount = Number(process.argv[3] ?? 1_000);
const threads = Number(process.env.MERKLE_BUILD_THREADS ?? Math.min(availableParallelism(), 8));

const sha256 = (data: Buffer | string): Buffer => createHash('sha256').update(data).digest();

function time<T>(fn: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = fn();
  return { value, ms: performance.now() - start };
}

async function timeAsync<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
}

const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);
const ratio = (baseline: number, ours: number) => `${(baseline / ours).toFixed(1)}×`;

console.log(
  `merkle benchmark: ${leafCount.toLocaleString('en')} code leaves, ${proofCount} proofs, ${threads} build threads`,
);

const seed = randomBytes(32).toString('hex');
const codes = Array.from({ length: leafCount }, (_, i) => `${sha256(`${seed}-${i}`).toString('hex')}-${i}`);
const leafBuffers = codes.map((c) => sha256(c));

// --- this service ---------------------------------------------------------------------------
// Warm-up on a small tree so the JIT has compiled the hashing loops, as in a running service.
const copyLeaves = (layer: Uint8Array, from: number, to: number) => {
  for (let i = from; i < to; i++) layer.set(leafBuffers[i], i * 32);
};
const warm = Math.min(leafCount, 4096);
buildTree(warm, copyLeaves);
buildTree(warm, stringLeaves(codes.slice(0, warm)));
buildTree(warm, codeLeaves(seed));

const pool = new BuildPool(threads);
await buildTreeParallel(Math.min(leafCount, 65_536), { kind: 'codes', seedCode: seed }, pool); // starts the workers

const fromLeaves = time(() => buildTree(leafCount, copyLeaves));
const fromCodes = time(() => buildTree(leafCount, stringLeaves(codes)));
const fromSeed = time(() => buildTree(leafCount, codeLeaves(seed)));
const parallelCodes = await timeAsync(() => buildTreeParallel(leafCount, { kind: 'strings', values: codes }, pool));
const parallelSeed = await timeAsync(() => buildTreeParallel(leafCount, { kind: 'codes', seedCode: seed }, pool));
await pool.close();
const tree: MerkleTree = parallelSeed.value;
const root = rootHex(tree);
for (const t of [fromLeaves, fromCodes, fromSeed, parallelCodes])
  if (rootHex(t.value) !== root) throw new Error('roots differ between build paths');

// --- merkletreejs, node:crypto ---------------------------------------------------------------
const nodeLeavesOnly = time(() => new ReferenceTree(leafBuffers, sha256, { fillDefaultHash: Buffer.alloc(32) }));
if (nodeLeavesOnly.value.getRoot().toString('hex') !== root) throw new Error('merkletreejs (node:crypto) root differs');
const nodeFromCodes = time(
  () =>
    new ReferenceTree(
      codes.map((c) => sha256(c)),
      sha256,
      { fillDefaultHash: Buffer.alloc(32) },
    ),
);
const referenceNode = nodeFromCodes.value;

// --- merkletreejs, crypto-js (the reference configuration) -----------------------------------
let cryptoJsMs: number | null = null;
try {
  const require = createRequire(import.meta.resolve('merkletreejs'));
  const SHA256 = require('crypto-js/sha256') as (m: string) => { toString(): string };
  const full = time(
    () =>
      new ReferenceTree(
        codes.map((c) => SHA256(c).toString()),
        SHA256,
        { fillDefaultHash: '0'.repeat(64) },
      ),
  );
  if (full.value.getHexRoot().replace(/^0x/, '') !== root) throw new Error('merkletreejs (crypto-js) root differs');
  cryptoJsMs = full.ms;
} catch (err) {
  console.log(`(crypto-js baseline skipped: ${(err as Error).message})`);
}

// --- proofs from the cached tree --------------------------------------------------------------
const picks = Array.from({ length: proofCount }, () => Math.floor(Math.random() * leafCount));
const pickedLeaves = picks.map((i) => leafBuffers[i].toString('hex'));
for (let i = 0; i < 50; i++) proveLeaf(tree, pickedLeaves[i % proofCount]); // warm-up
const ours = time(() => pickedLeaves.map((leaf) => proveLeaf(tree, leaf)));
ours.value.forEach((d, k) => {
  if (!d.isValidProof || d.leafIndex !== picks[k]) throw new Error(`bad proof for leaf ${picks[k]}`);
});
const referenceProofs = time(() =>
  picks.map((i) =>
    referenceNode
      .getProof(leafBuffers[i], i)
      .map((p) => ({ aunt: p.data.toString('hex'), onRight: p.position === 'right' })),
  ),
);
referenceProofs.value.forEach((p, k) => {
  if (JSON.stringify(p) !== JSON.stringify(ours.value[k].proofObj))
    throw new Error(`proof differs from merkletreejs for leaf ${picks[k]}`);
});

const rows: Array<[string, string]> = [
  ['build from leaf hashes (this service)', fmt(fromLeaves.ms)],
  ['build from code strings (this service)', fmt(fromCodes.ms)],
  ['build from the claim seed, codes derived (this service)', fmt(fromSeed.ms)],
  [`build from code strings (this service, ${threads} worker threads)`, fmt(parallelCodes.ms)],
  [`build from the claim seed (this service, ${threads} worker threads: what the cache runs)`, fmt(parallelSeed.ms)],
  ['merkletreejs + node:crypto, from leaf hashes', fmt(nodeLeavesOnly.ms)],
  ['merkletreejs + node:crypto, from code strings', fmt(nodeFromCodes.ms)],
];
if (cryptoJsMs !== null)
  rows.push(['merkletreejs + crypto-js (reference configuration), from code strings', fmt(cryptoJsMs)]);
rows.push(
  ['tree memory (layers + leaf index)', `${(tree.byteSize / 1024 / 1024).toFixed(1)} MiB`],
  [
    `${proofCount} proofs from the cached tree (this service)`,
    `${fmt(ours.ms)} = ${((ours.ms / proofCount) * 1000).toFixed(1)} µs/proof`,
  ],
  [
    `${proofCount} proofs, merkletreejs getProof(leaf, index)`,
    `${fmt(referenceProofs.ms)} = ${((referenceProofs.ms / proofCount) * 1000).toFixed(1)} µs/proof`,
  ],
);
const width = Math.max(...rows.map(([k]) => k.length));
for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);

console.log('ratios (baseline time / this service, same leaves, same run):');
if (cryptoJsMs !== null) {
  console.log(
    `  vs merkletreejs + crypto-js, codes -> tree, ${threads} threads: ${ratio(cryptoJsMs, parallelCodes.ms)} (goal ≥ 10×)`,
  );
  console.log(`  vs merkletreejs + crypto-js, codes -> tree, 1 thread:  ${ratio(cryptoJsMs, fromCodes.ms)}`);
}
console.log(
  `  vs merkletreejs + node:crypto, codes -> tree, ${threads} threads: ${ratio(nodeFromCodes.ms, parallelCodes.ms)}`,
);
console.log(`  vs merkletreejs + node:crypto, codes -> tree, 1 thread:  ${ratio(nodeFromCodes.ms, fromCodes.ms)}`);
console.log(`  vs merkletreejs + node:crypto, leaves -> tree, 1 thread: ${ratio(nodeLeavesOnly.ms, fromLeaves.ms)}`);
if (cryptoJsMs !== null)
  record('merkletreejs + crypto-js / this service, codes to tree', cryptoJsMs / parallelCodes.ms, { goal: 10 });
record('merkletreejs + node:crypto / this service, codes to tree, 1 thread', nodeFromCodes.ms / fromCodes.ms);
console.log(`  proof time per leaf: ${((ours.ms / proofCount) * 1000).toFixed(1)} µs (goal < 1000 µs)`);
console.log(`root ${root}, proof length ${tree.depth}; all roots and all ${proofCount} proofs equal merkletreejs`);
