// The service's leaf signer (reference-service §3.2). When an approval's merkle challenge names a
// `leafSigner`, the chain requires each proof's `leafSignature`: an EIP-191 personal_sign
// signature over "<leaf>-<transaction creator's native address>", recovered and compared with
// `leafSigner`. For code trees the leaf is the reserved code.
import { privateKeyToAccount } from 'viem/accounts';

export interface LeafSigner {
  /** EIP-55 EVM address of the key: what a creator puts into the approval's `leafSigner`. */
  address: `0x${string}`;
  /** 65-byte r‖s‖v signature, 0x hex, over `${leaf}-${platformAddress}`. */
  sign(leaf: string, platformAddress: string): Promise<`0x${string}`>;
}

export const leafSignatureMessage = (leaf: string, platformAddress: string): string => `${leaf}-${platformAddress}`;

export function createLeafSigner(privateKeyHex: string): LeafSigner {
  const account = privateKeyToAccount(`0x${privateKeyHex.replace(/^0x/, '')}`);
  return {
    address: account.address,
    sign: (leaf, platformAddress) => account.signMessage({ message: leafSignatureMessage(leaf, platformAddress) }),
  };
}
