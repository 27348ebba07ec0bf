// Per-process merkle state: the leaf signer, the tree cache and the build threads, one of each per
// AppContext (`services.merkle`).
import type { AppContext } from '../context.ts';
import { BuildPool } from './build-pool.ts';
import { TreeCache } from './cache.ts';
import { createLeafSigner, type LeafSigner } from './leaf-signer.ts';

export interface MerkleService {
  signer: LeafSigner;
  trees: TreeCache;
  builders: BuildPool;
}

export function merkleService(ctx: Pick<AppContext, 'config' | 'services' | 'onClose'>): MerkleService {
  let service = ctx.services.merkle;
  if (!service) {
    service = ctx.services.merkle = {
      signer: createLeafSigner(ctx.config.leafSignerKey),
      trees: new TreeCache(),
      builders: new BuildPool(ctx.config.merkleBuildThreads),
    };
    const { trees, builders } = service;
    ctx.onClose.push(async () => {
      trees.clear();
      await builders.close();
    });
  }
  return service;
}
