// Trees are built once per claim version and kept: requests only look them up. An entry is keyed
// by claim id and replaced when the claim's fingerprint (version, lastUpdated and the leaf inputs)
// changes. Concurrent requests for a tree being built share the one build. Memory is bounded:
// least recently used trees are dropped beyond `maxBytes` (a 2^20-leaf tree holds ~72 MB).
import type { MerkleTree } from './tree.ts';

interface Entry {
  fingerprint: string;
  tree: Promise<MerkleTree>;
  bytes: number;
  lastUsed: number;
}

export const DEFAULT_TREE_CACHE_BYTES = 256 * 1024 * 1024;

export class TreeCache {
  readonly maxBytes: number;
  private readonly entries = new Map<string, Entry>();
  private useCounter = 0;
  /** Trees built so far (tests check that requests do not rebuild). */
  builds = 0;

  constructor(maxBytes = DEFAULT_TREE_CACHE_BYTES) {
    this.maxBytes = maxBytes;
  }

  /** The cached tree of `claimId` when its fingerprint matches; otherwise builds (once) and keeps it. */
  get(claimId: string, fingerprint: string, build: () => Promise<MerkleTree>): Promise<MerkleTree> {
    const hit = this.entries.get(claimId);
    if (hit && hit.fingerprint === fingerprint) {
      hit.lastUsed = ++this.useCounter;
      return hit.tree;
    }
    this.builds++;
    const entry: Entry = { fingerprint, tree: build(), bytes: 0, lastUsed: ++this.useCounter };
    this.entries.set(claimId, entry);
    entry.tree.then(
      (tree) => {
        entry.bytes = tree.byteSize;
        this.evict(entry);
      },
      () => {
        // a failed build is not cached: the next request tries again
        if (this.entries.get(claimId) === entry) this.entries.delete(claimId);
      },
    );
    return entry.tree;
  }

  /** Bytes held by finished trees. */
  get size(): number {
    let total = 0;
    for (const e of this.entries.values()) total += e.bytes;
    return total;
  }

  has(claimId: string): boolean {
    return this.entries.has(claimId);
  }

  private evict(keep: Entry): void {
    let total = this.size;
    while (total > this.maxBytes) {
      let oldest: [string, Entry] | null = null;
      for (const kv of this.entries) {
        if (kv[1] !== keep && kv[1].bytes > 0 && (!oldest || kv[1].lastUsed < oldest[1].lastUsed)) oldest = kv;
      }
      if (!oldest) return;
      this.entries.delete(oldest[0]);
      total -= oldest[1].bytes;
    }
  }

  clear(): void {
    this.entries.clear();
  }
}
