// Per-process merkle state: the leaf signer and the tree cache, one of each per AppContext.
import type { AppContext } from '../context.ts';
import { TreeCache } from './cache.ts';
import { createLeafSigner, type LeafSigner } from './leaf-signer.ts';

export interface MerkleService {
  signer: LeafSigner;
  trees: TreeCache;
}

const services = new WeakMap<AppContext, MerkleService>();

export function merkleService(ctx: AppContext): MerkleService {
  let service = services.get(ctx);
  if (!service) {
    service = { signer: createLeafSigner(ctx.config.leafSignerKey), trees: new TreeCache() };
    services.set(ctx, service);
    const trees = service.trees;
    ctx.onClose.push(() => trees.clear());
  }
  return service;
}
