// Per-process merkle state: the leaf signer, the tree cache and the build threads, one of each per AppContext.
import type { AppContext } from '../context.ts';
import { BuildPool } from './build-pool.ts';
import { TreeCache } from './cache.ts';
import { createLeafSigner, type LeafSigner } from './leaf-signer.ts';

export interface MerkleService {
  signer: LeafSigner;
  trees: TreeCache;
  builders: BuildPool;
}

const services = new WeakMap<AppContext, MerkleService>();

export function merkleService(ctx: AppContext): MerkleService {
  let service = services.get(ctx);
  if (!service) {
    service = {
      signer: createLeafSigner(ctx.config.leafSignerKey),
      trees: new TreeCache(),
      builders: new BuildPool(ctx.config.merkleBuildThreads),
    };
    services.set(ctx, service);
    const { trees, builders } = service;
    ctx.onClose.push(async () => {
      trees.clear();
      await builders.close();
    });
  }
  return service;
}
