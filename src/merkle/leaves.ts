// What a tree's leaves are made of, as plain data so a build can be split across worker threads:
//   codes:   leaf i = sha256(code i), code i = sha256hex("<seed>-<i>") + "-<i>" (docs/onchain-claims.md)
//   strings: leaf i = sha256(UTF-8 of values[i - first]): native addresses, or codes given as text
import { NODE_BYTES, viewOf, type TreeHasher } from './digest.ts';

export type LeafSource =
  | { kind: 'codes'; seedCode: string }
  | {
      kind: 'strings';
      values: readonly string[] /** index of values[0] in the tree (a slice sent to a worker) */;
      first?: number;
    };

/** Writes leaves [from, to) of a leaf layer (32 bytes per leaf). */
export type LeafFiller = (layer: Uint8Array, from: number, to: number, hasher: TreeHasher) => void;

export function leafFiller(source: LeafSource): LeafFiller {
  if (source.kind === 'codes') {
    const prefix = new TextEncoder().encode(`${source.seedCode}-`);
    return (layer, from, to, hasher) => {
      const out = viewOf(layer);
      for (let i = from; i < to; i++) hasher.hashCodeInto(prefix, i, out, i * NODE_BYTES);
    };
  }
  const { values, first = 0 } = source;
  return (layer, from, to, hasher) => {
    const out = viewOf(layer);
    for (let i = from; i < to; i++) hasher.hashStringInto(values[i - first], out, i * NODE_BYTES);
  };
}

/** Leaves of a code tree, derived from the claim's seed. */
export const codeLeaves = (seedCode: string): LeafFiller => leafFiller({ kind: 'codes', seedCode });

/** Leaves sha256(UTF-8 of each string). */
export const stringLeaves = (values: readonly string[]): LeafFiller => leafFiller({ kind: 'strings', values });
