// Who may link a claim to an on-chain approval (trackerDetails): that approval's manager, as the
// chain says. Collection-level approvals are managed by the collection's manager; incoming and
// outgoing approvals by their approver (the address whose balance store holds them). Without a
// verdict from the chain there is no link: an unconfigured or unreachable chain refuses it.
import type { AppContext } from '../context.ts';
import { chainClientFor, ChainError } from '../chain/client.ts';
import { tryCanonical } from '../shared/addresses.ts';
import { badRequest, forbidden } from '../shared/errors.ts';
import type { TrackerDetails } from './model.ts';

/** Throws unless `caller` (canonical) manages the approval `t` names (403), or the chain cannot tell (503/502). */
export async function assertApprovalManager(
  ctx: AppContext,
  caller: string,
  t: TrackerDetails,
  path: string,
): Promise<void> {
  const chain = chainClientFor(ctx);
  if (!chain) {
    throw new ChainError(
      503,
      `${path}: linking a claim to an on-chain approval needs the chain to confirm the approval's manager, and the chain is not configured (set CHAIN_REST_URL)`,
    );
  }
  const collection = await chain.collectionManagement(t.collectionId);
  if (!collection) throw badRequest(`${path}.collectionId: collection ${t.collectionId} does not exist on the chain`);
  if (t.approvalLevel === 'collection') {
    const manager = tryCanonical(collection.manager) ?? '';
    if (manager !== caller) {
      throw forbidden(
        `${path}: only the manager of collection ${t.collectionId} may link a claim to its collection-level approval ${t.approvalId}; the chain says the manager is ${manager === '' ? 'nobody' : manager}, and you are ${caller}`,
      );
    }
    return;
  }
  if (t.approverAddress !== caller) {
    throw forbidden(
      `${path}: only the approver ${t.approverAddress} may link a claim to its ${t.approvalLevel} approval ${t.approvalId} in collection ${t.collectionId}; you are ${caller}`,
    );
  }
}
