// Leaf producers: each writes leaves [from, to) of a leaf layer (32 bytes per leaf).
//   code trees:    leaf i = sha256(code i), code i = sha256hex("<seed>-<i>") + "-<i>" (SPEC §2.7)
//   address trees: leaf i = sha256(native address i)
import { hash } from 'node:crypto';
import { NODE_BYTES, sha256Into } from './digest.ts';

export type LeafFiller = (layer: Uint8Array, from: number, to: number) => void;

/** Leaves of a code tree, derived from the claim's seed. */
export function codeLeaves(seedCode: string): LeafFiller {
  const prefix = `${seedCode}-`;
  return (layer, from, to) => {
    for (let i = from; i < to; i++) sha256Into(`${hash('sha256', prefix + i, 'hex')}-${i}`, layer, i * NODE_BYTES);
  };
}

/** Leaves sha256(UTF-8 of each string): codes given as strings, or native addresses. */
export function stringLeaves(values: readonly string[]): LeafFiller {
  return (layer, from, to) => {
    for (let i = from; i < to; i++) sha256Into(values[i], layer, i * NODE_BYTES);
  };
}
