// Claim documents: validation at create and update, create / update / soft delete (each request
// one transaction), and who may edit. Private params are encrypted at rest (model.claimToRow).
import { chunks, isUniqueViolation, type DB, type Tx } from '../db/index.ts';
import type { AppContext } from '../context.ts';
import { toCanonical, tryParseAddress } from '../shared/addresses.ts';
import { randomHex } from '../shared/crypto.ts';
import { badRequest, conflict, forbidden, notFound } from '../shared/errors.ts';
import { onDemandCompatible, pluginIds, resolvePlugin } from '../plugins/registry.ts';
import type { AnyClaimPlugin, StoredStateEntry } from '../plugins/types.ts';
import type { JsonObject } from '../shared/json.ts';
import { whitelistList } from '../plugins/whitelist.ts';
import {
  claimToRow,
  forgetClaim,
  isOnChain,
  laneOf,
  loadClaim,
  trackerKey,
  type ClaimDetails,
  type ClaimRecord,
  type PluginInstance,
  type TrackerDetails,
} from './model.ts';
import { pluginEnv } from './plugin-env.ts';
import { liveClaimQuery } from './storage.ts';
import { validateSatisfyMethod, type SatisfyMethod } from './satisfy.ts';
import { assertApprovalManager } from './tracker-ownership.ts';

/** Test claims vanish with the session that created them: an access token lives one day. */
export const TEST_CLAIM_LIFETIME_MS = 24 * 60 * 60 * 1000;
export const MAX_PLUGINS_PER_CLAIM = 50;

export interface PluginInput {
  pluginId: string;
  instanceId: string;
  version?: string;
  publicParams?: JsonObject;
  privateParams?: JsonObject;
  /** Update only: clear this instance's state. */
  resetState?: boolean;
  /** Update only: replace this instance's state (shape of its public/private state). */
  newState?: JsonObject;
}

export interface ClaimInput {
  claimId: string;
  plugins?: PluginInput[];
  rewards?: JsonObject[];
  metadata?: { name?: string; description?: string; image?: string };
  showInSearchResults?: boolean;
  categories?: string[];
  estimatedCost?: string;
  estimatedTime?: string;
  approach?: string;
  assignMethod?: string;
  satisfyMethod?: unknown;
  collectionId?: string;
  standaloneClaim?: boolean;
  trackerDetails?: unknown;
  useCreatorAddressAsLeaf?: boolean;
  managedBy?: string;
  /** Update only: the version the caller read; a mismatch is a 409. -1 skips the check. */
  _expectedVersion?: number;
}

/** State changes an update implies, applied in the same transaction as the claim row. */
type StateOp = { instanceId: string; clear: boolean; clearLedger: boolean; entries: StoredStateEntry[] };

interface Actor {
  platformAddress: string;
}

const INSTANCE_ID = /^[A-Za-z0-9]{1,64}$/;

function parseTrackerDetails(v: unknown, path: string): TrackerDetails {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw badRequest(`${path} must be an object`);
  const t = v as Record<string, unknown>;
  const keys = ['collectionId', 'approvalId', 'challengeTrackerId', 'approvalLevel', 'approverAddress'];
  for (const k of Object.keys(t)) if (!keys.includes(k)) throw badRequest(`${path} has unknown field "${k}"`);
  for (const k of ['collectionId', 'approvalId', 'challengeTrackerId']) {
    if (typeof t[k] !== 'string' || (t[k] as string).length === 0 || (t[k] as string).length > 256)
      throw badRequest(`${path}.${k} must be a non-empty string`);
  }
  if (t.approvalLevel !== 'collection' && t.approvalLevel !== 'outgoing' && t.approvalLevel !== 'incoming') {
    throw badRequest(`${path}.approvalLevel must be collection, outgoing or incoming`);
  }
  const approver = t.approverAddress ?? '';
  if (typeof approver !== 'string') throw badRequest(`${path}.approverAddress must be a string`);
  if (t.approvalLevel === 'collection' && approver !== '')
    throw badRequest(`${path}.approverAddress must be empty for a collection-level approval`);
  if (t.approvalLevel !== 'collection' && approver === '')
    throw badRequest(`${path}.approverAddress is required for an ${t.approvalLevel} approval`);
  return {
    collectionId: t.collectionId as string,
    approvalId: t.approvalId as string,
    challengeTrackerId: t.challengeTrackerId as string,
    approvalLevel: t.approvalLevel,
    approverAddress: approver === '' ? '' : toCanonical(approver, `${path}.approverAddress`),
  };
}

/**
 * Validates one claim (create, or update over `previous`) and returns the record to store plus
 * the state operations it implies. Every problem is a 400 naming the field.
 */
async function buildClaim(
  input: ClaimInput,
  opts: { path: string; actor: Actor; previous: ClaimRecord | null; db: DB | Tx; ctx: AppContext; testClaim: boolean },
): Promise<{ record: ClaimRecord; stateOps: StateOp[] }> {
  const { path, previous, actor } = opts;
  const now = opts.ctx.clock.now();
  if (!previous && input.plugins === undefined) throw badRequest(`${path}.plugins is required`);

  // plugins
  const pluginInputs: PluginInput[] =
    input.plugins ??
    previous!.plugins.map((p) => ({
      pluginId: p.pluginId,
      instanceId: p.instanceId,
      version: p.version,
      publicParams: p.publicParams,
    }));
  if (pluginInputs.length > MAX_PLUGINS_PER_CLAIM)
    throw badRequest(`${path}.plugins must hold at most ${MAX_PLUGINS_PER_CLAIM} plugins`);
  const seen = new Set<string>();
  const plugins: PluginInstance[] = [];
  const resolved = new Map<string, AnyClaimPlugin>();
  const stateOps: StateOp[] = [];
  for (const [i, p] of pluginInputs.entries()) {
    const pp = `${path}.plugins[${i}]`;
    if (!INSTANCE_ID.test(p.instanceId))
      throw badRequest(`${pp}.instanceId must be 1 to 64 letters or digits (plugin instance IDs must be alphanumeric)`);
    if (seen.has(p.instanceId))
      throw badRequest(
        `${pp}.instanceId: duplicate instance ID "${p.instanceId}" (duplicate instance IDs are not allowed)`,
      );
    seen.add(p.instanceId);
    if (p.version !== undefined && (typeof p.version !== 'string' || p.version.length > 32))
      throw badRequest(`${pp}.version must be a string of at most 32 characters`);
    const before = previous?.plugins.find((q) => q.instanceId === p.instanceId && q.pluginId === p.pluginId);
    const version = p.version ?? before?.version ?? '1';
    const plugin = await resolvePlugin({ pluginId: p.pluginId, version }, { db: opts.db, app: opts.ctx });
    if (!plugin) {
      const which = p.version === undefined ? '' : ` version ${p.version}`;
      throw badRequest(
        `${pp}.pluginId: unknown plugin "${p.pluginId}"${which} (valid: ${pluginIds().join(', ')}; or the id of a plugin document${which ? ' with that version' : ''})`,
      );
    }
    resolved.set(p.instanceId, plugin);
    if (!plugin.duplicatesAllowed && pluginInputs.some((q, j) => j < i && q.pluginId === p.pluginId)) {
      throw badRequest(`${pp}: duplicate plugins are not allowed for type: ${p.pluginId}`);
    }
    // Omitted private params on update keep the stored ones (a reader without private access
    // gets them stripped and must be able to send the document back).
    const privateInput =
      'privateParams' in p && p.privateParams !== undefined ? p.privateParams : (before?.privateParams ?? {});
    const validated = await plugin.validate(p.publicParams ?? {}, privateInput, {
      path: pp,
      claimId: input.claimId,
      creator: previous?.createdBy ?? actor.platformAddress,
      caller: actor.platformAddress,
      ...(before ? { previous: { publicParams: before.publicParams, privateParams: before.privateParams } } : {}),
      ...pluginEnv(opts.ctx, now, opts.db),
    });
    plugins.push({ pluginId: p.pluginId, instanceId: p.instanceId, version, ...validated });

    // state
    if (!previous) {
      if (p.resetState !== undefined || p.newState !== undefined)
        throw badRequest(`${pp}: resetState and newState apply to updates only`);
      continue;
    }
    if (p.resetState && p.newState !== undefined) throw badRequest(`${pp}: cannot set both resetState and newState`);
    const replaced = previous.plugins.find((q) => q.instanceId === p.instanceId && q.pluginId !== p.pluginId);
    const replacedKind = replaced !== undefined;
    if (p.newState !== undefined) {
      if (!plugin.stateFromDocument) throw badRequest(`${pp}.newState: plugin ${p.pluginId} has no state to set`);
      stateOps.push({
        instanceId: p.instanceId,
        clear: true,
        clearLedger: plugin.id === 'numUses',
        entries: plugin.stateFromDocument(p.newState, `${pp}.newState`),
      });
    } else if (p.resetState || replacedKind) {
      stateOps.push({
        instanceId: p.instanceId,
        clear: true,
        clearLedger: plugin.id === 'numUses' || replaced?.pluginId === 'numUses',
        entries: [],
      });
    }
  }
  if (previous) {
    for (const old of previous.plugins) {
      if (!plugins.some((p) => p.instanceId === old.instanceId))
        stateOps.push({
          instanceId: old.instanceId,
          clear: true,
          clearLedger: old.pluginId === 'numUses',
          entries: [],
        });
    }
  }

  const hasNumUses = plugins.some((p) => p.pluginId === 'numUses');
  if (!hasNumUses) {
    const needy = plugins.find((p) => !onDemandCompatible(resolved.get(p.instanceId)!));
    if (needy) {
      throw badRequest(
        `${path}: numUses plugin is required: plugin "${needy.instanceId}" (${needy.pluginId}) is stateful or needs user input or a session; a claim without numUses is an on-demand claim and takes only stateless plugins without inputs`,
      );
    }
  }

  // claim-number assigner
  const assignMethod = input.assignMethod ?? previous?.assignMethod ?? '';
  // A ClaimNumbers plugin answers the claim number; unless assignMethod names it, that number
  // would be silently dropped (numUses would assign instead), and a claim has only one number.
  const numberers = plugins.filter((p) => resolved.get(p.instanceId)?.answersClaimNumber);
  if (numberers.length > 1) {
    throw badRequest(
      `${path}.plugins: instances ${numberers.map((p) => `"${p.instanceId}"`).join(' and ')} both use the ClaimNumbers preset, but a claim has one claim number: keep one of them`,
    );
  }
  if (numberers.length === 1 && assignMethod !== numberers[0].instanceId) {
    const id = numberers[0].instanceId;
    throw badRequest(
      `${path}.assignMethod: plugin instance "${id}" uses the ClaimNumbers preset, so its answer is the claim number, but assignMethod does not name it and the number would be dropped: set assignMethod to "${id}"`,
    );
  }
  if (assignMethod !== '' && assignMethod !== 'firstComeFirstServe') {
    const inst = plugins.find((p) => p.instanceId === assignMethod);
    const plugin = inst && resolved.get(inst.instanceId);
    if (!inst || !plugin?.canAssignClaimNumbers) {
      throw badRequest(
        `${path}.assignMethod must match a plugin instance ID that can assign claim numbers (numUses, codes, whitelist, a custom plugin with the ClaimNumbers preset), be blank / empty, or be firstComeFirstServe`,
      );
    }
    const problem = plugin.canAssignClaimNumbers(inst);
    if (problem) throw badRequest(`${path}.assignMethod: ${problem}`);
    if (!hasNumUses) throw badRequest(`${path}.assignMethod: claim numbers need a numUses plugin`);
  }

  const satisfyInput = input.satisfyMethod !== undefined ? input.satisfyMethod : previous?.satisfyMethod;
  const satisfyMethod: SatisfyMethod | null =
    satisfyInput === null || satisfyInput === undefined
      ? null
      : validateSatisfyMethod(
          satisfyInput,
          plugins.map((p) => p.instanceId),
          `${path}.satisfyMethod`,
        );

  // on-chain link
  const trackerInput = input.trackerDetails !== undefined ? input.trackerDetails : previous?.trackerDetails;
  // the all-empty object is what reads answer for "no link" (a client may send a read claim back)
  const noLink =
    trackerInput === null ||
    trackerInput === undefined ||
    (typeof trackerInput === 'object' && Object.values(trackerInput).every((v) => v === ''));
  const trackerDetails = noLink ? null : parseTrackerDetails(trackerInput, `${path}.trackerDetails`);
  let collectionId = input.collectionId ?? previous?.collectionId ?? '';
  if (collectionId.length > 256) throw badRequest(`${path}.collectionId must be at most 256 characters`);
  if (trackerDetails) {
    if (collectionId === '') collectionId = trackerDetails.collectionId;
    else if (collectionId !== trackerDetails.collectionId)
      throw badRequest(`${path}.trackerDetails.collectionId must equal collectionId (${collectionId})`);
  }
  const standaloneClaim = input.standaloneClaim ?? previous?.standaloneClaim ?? false;
  const useCreatorAddressAsLeaf = input.useCreatorAddressAsLeaf ?? previous?.useCreatorAddressAsLeaf ?? false;
  const onChain = isOnChain({ collectionId, trackerDetails, standaloneClaim });
  if (onChain && !hasNumUses)
    throw badRequest(`${path}: numUses plugin is required for a claim linked to an on-chain approval`);
  if (
    onChain &&
    useCreatorAddressAsLeaf &&
    !plugins.some((p) => p.pluginId === 'whitelist' && whitelistList(p)?.whitelist)
  ) {
    throw badRequest(
      `${path}.useCreatorAddressAsLeaf needs a whitelist plugin with an address list (the leaves are its addresses)`,
    );
  }

  const md = input.metadata ?? previous?.details.metadata ?? {};
  const details: ClaimDetails = {
    rewards: input.rewards ?? previous?.details.rewards ?? [],
    metadata: { name: md.name ?? '', description: md.description ?? '', image: md.image ?? '' },
    categories: input.categories ?? previous?.details.categories ?? [],
    estimatedCost: input.estimatedCost ?? previous?.details.estimatedCost ?? '',
    estimatedTime: input.estimatedTime ?? previous?.details.estimatedTime ?? '',
    approach: input.approach ?? previous?.details.approach ?? 'api',
  };
  const managedBy =
    input.managedBy !== undefined
      ? toCanonical(input.managedBy, `${path}.managedBy`)
      : (previous?.managedBy ?? actor.platformAddress);

  const base = {
    claimId: input.claimId,
    createdBy: previous?.createdBy ?? actor.platformAddress,
    managedBy,
    collectionId,
    standaloneClaim,
    trackerDetails,
    plugins,
    seedCode: previous?.seedCode ?? (onChain ? randomHex(32) : null),
    useCreatorAddressAsLeaf,
    assignMethod,
    satisfyMethod,
    details,
    showInSearchResults: input.showInSearchResults ?? previous?.showInSearchResults ?? false,
    version: previous ? previous.version + 1 : 0,
    createdAt: previous?.createdAt ?? now,
    lastUpdated: now,
    testExpiresAt: previous ? previous.testExpiresAt : opts.testClaim ? now + TEST_CLAIM_LIFETIME_MS : null,
  };
  const record: ClaimRecord = { ...base, lane: laneOf(base) };
  if (onChain && !record.seedCode) record.seedCode = randomHex(32);
  return { record, stateOps };
}

async function assertTrackerFree(tx: Tx, record: ClaimRecord, now: number): Promise<void> {
  if (!isOnChain(record) || !record.trackerDetails) return;
  const other = await liveClaimQuery(tx, now)
    .select('claim_id')
    .where('tracker_key', '=', trackerKey(record.trackerDetails))
    .where('claim_id', '!=', record.claimId)
    .executeTakeFirst();
  if (other)
    throw conflict(
      `Claim ${other.claim_id} is already linked to this challenge tracker (collectionId, approvalId, challengeTrackerId, approvalLevel, approverAddress)`,
    );
}

/** Whether `record` links to an approval that `previous` (null: a new claim) was not linked to. */
const isNewLink = (previous: ClaimRecord | null, record: ClaimRecord): boolean =>
  isOnChain(record) &&
  !!record.trackerDetails &&
  (!previous || !isOnChain(previous) || trackerKey(previous.trackerDetails!) !== trackerKey(record.trackerDetails));

/**
 * Asks the chain, before the write transaction (no connection or write lock is held across a
 * network call), whether the actor manages every approval the inputs would newly link to. Answers
 * the tracker keys verified; the transaction then refuses any new link outside that set (the
 * claim changed in between).
 */
async function verifyNewLinks(
  ctx: AppContext,
  actor: Actor,
  inputs: ClaimInput[],
  update: boolean,
): Promise<Set<string>> {
  const pending = new Map<string, { t: TrackerDetails; path: string }>();
  for (const [i, input] of inputs.entries()) {
    const path = `claims[${i}]`;
    const previous = update ? await loadClaim(ctx.db, ctx, input.claimId, ctx.clock.now()) : null;
    if (update && (!previous || !canEdit(previous, actor))) continue; // the transaction answers 404 / 403
    const trackerInput = input.trackerDetails !== undefined ? input.trackerDetails : previous?.trackerDetails;
    if (trackerInput === null || trackerInput === undefined) continue;
    const t = parseTrackerDetails(trackerInput, `${path}.trackerDetails`);
    const standaloneClaim = input.standaloneClaim ?? previous?.standaloneClaim ?? false;
    const linked = previous && isOnChain(previous) ? trackerKey(previous.trackerDetails!) : null;
    if (standaloneClaim || linked === trackerKey(t) || pending.has(trackerKey(t))) continue;
    pending.set(trackerKey(t), { t, path: `${path}.trackerDetails` });
  }
  await Promise.all(
    [...pending.values()].map(({ t, path }) => assertApprovalManager(ctx, actor.platformAddress, t, path)),
  );
  return new Set(pending.keys());
}

function assertLinkVerified(verified: Set<string>, previous: ClaimRecord | null, record: ClaimRecord): void {
  if (isNewLink(previous, record) && !verified.has(trackerKey(record.trackerDetails!))) {
    throw conflict(
      `Claim ${record.claimId} changed while its on-chain link was being verified; send the request again`,
    );
  }
}

const canEdit = (claim: ClaimRecord, actor: Actor) =>
  claim.createdBy === actor.platformAddress || claim.managedBy === actor.platformAddress;

export async function createClaims(
  ctx: AppContext,
  actor: Actor,
  inputs: ClaimInput[],
  testClaims = false,
): Promise<void> {
  const ids = new Set<string>();
  for (const [i, c] of inputs.entries()) {
    if (ids.has(c.claimId)) throw badRequest(`claims[${i}].claimId repeats "${c.claimId}"`);
    ids.add(c.claimId);
    if (c._expectedVersion !== undefined) throw badRequest(`claims[${i}]._expectedVersion applies to updates only`);
  }
  const verified = await verifyNewLinks(ctx, actor, inputs, false);
  await ctx.db.transaction().execute(async (tx) => {
    for (const [i, input] of inputs.entries()) {
      const path = `claims[${i}]`;
      const exists = await tx
        .selectFrom('claims')
        .select('claim_id')
        .where('claim_id', '=', input.claimId)
        .executeTakeFirst();
      if (exists) throw conflict(`A claim with claimId "${input.claimId}" already exists`);
      const { record } = await buildClaim(input, { path, actor, previous: null, db: tx, ctx, testClaim: testClaims });
      assertLinkVerified(verified, null, record);
      await assertTrackerFree(tx, record, ctx.clock.now());
      try {
        await tx.insertInto('claims').values(claimToRow(record, ctx.keyring)).execute();
      } catch (err) {
        // A parallel create of the same id passed the check above first (PostgreSQL: read committed)
        if (isUniqueViolation(err)) throw conflict(`A claim with claimId "${input.claimId}" already exists`);
        throw err;
      }
    }
  });
}

export async function updateClaims(ctx: AppContext, actor: Actor, inputs: ClaimInput[]): Promise<void> {
  const ids = new Set<string>();
  for (const [i, c] of inputs.entries()) {
    if (ids.has(c.claimId)) throw badRequest(`claims[${i}].claimId repeats "${c.claimId}"`);
    ids.add(c.claimId);
  }
  try {
    await updateInTransaction(ctx, actor, inputs, await verifyNewLinks(ctx, actor, inputs, true));
  } finally {
    for (const id of ids) forgetClaim(ctx, id);
  }
}

async function updateInTransaction(
  ctx: AppContext,
  actor: Actor,
  inputs: ClaimInput[],
  verified: Set<string>,
): Promise<void> {
  await ctx.db.transaction().execute(async (tx) => {
    for (const [i, input] of inputs.entries()) {
      const path = `claims[${i}]`;
      const now = ctx.clock.now();
      const previous = await loadClaim(tx, ctx, input.claimId, now, { forUpdate: ctx.dialect === 'postgres' });
      if (!previous) throw notFound(`Claim ${input.claimId} not found`);
      if (!canEdit(previous, actor))
        throw forbidden(`Only the creator or manager of claim ${input.claimId} may update it`);
      if (
        input._expectedVersion !== undefined &&
        input._expectedVersion !== -1 &&
        input._expectedVersion !== previous.version
      ) {
        throw conflict(
          `Claim ${input.claimId} is at version ${previous.version}, not ${input._expectedVersion}; fetch it again`,
        );
      }
      if (
        input.managedBy !== undefined &&
        previous.createdBy !== actor.platformAddress &&
        toCanonical(input.managedBy, `${path}.managedBy`) !== previous.managedBy
      ) {
        throw forbidden(`Only the creator of claim ${input.claimId} may change managedBy`);
      }
      const { record, stateOps } = await buildClaim(input, { path, actor, previous, db: tx, ctx, testClaim: false });
      if (isOnChain(previous) && stateOps.some((op) => op.clearLedger)) {
        throw badRequest(
          `${path}: numUses state cannot be reset or removed for a claim linked to an on-chain approval (its claim numbers own merkle codes)`,
        );
      }
      assertLinkVerified(verified, previous, record);
      await assertTrackerFree(tx, record, now);
      const row = claimToRow(record, ctx.keyring);
      const { claim_id: _id, ...changes } = row;
      await tx.updateTable('claims').set(changes).where('claim_id', '=', record.claimId).execute();
      for (const op of stateOps) {
        if (op.clear)
          await tx
            .deleteFrom('claim_state')
            .where('claim_id', '=', record.claimId)
            .where('instance_id', '=', op.instanceId)
            .execute();
        if (op.clearLedger) await tx.deleteFrom('claim_numbers').where('claim_id', '=', record.claimId).execute();
        for (const chunk of chunks(op.entries, 500)) {
          await tx
            .insertInto('claim_state')
            .values(
              chunk.map((e) => ({
                claim_id: record.claimId,
                instance_id: op.instanceId,
                key: e.key,
                value: JSON.stringify(e.value),
              })),
            )
            .execute();
        }
      }
    }
  });
}

export async function deleteClaims(ctx: AppContext, actor: Actor, claimIds: string[]): Promise<void> {
  try {
    await deleteInTransaction(ctx, actor, claimIds);
  } finally {
    for (const id of claimIds) forgetClaim(ctx, id);
  }
}

async function deleteInTransaction(ctx: AppContext, actor: Actor, claimIds: string[]): Promise<void> {
  await ctx.db.transaction().execute(async (tx) => {
    const now = ctx.clock.now();
    for (const claimId of new Set(claimIds)) {
      const claim = await loadClaim(tx, ctx, claimId, now, { forUpdate: ctx.dialect === 'postgres' });
      if (!claim) throw notFound(`Claim ${claimId} not found`);
      if (!canEdit(claim, actor)) throw forbidden(`Only the creator or manager of claim ${claimId} may delete it`);
      await tx
        .updateTable('claims')
        .set({ deleted_at: now, tracker_key: null })
        .where('claim_id', '=', claimId)
        .execute();
    }
  });
}

/** Whether `address` is the claim's creator or manager (canonical compare). */
export function isCreatorOrManager(
  claim: Pick<ClaimRecord, 'createdBy' | 'managedBy'>,
  address: string | undefined | null,
): boolean {
  if (!address) return false;
  const canonical = tryParseAddress(address)?.platformAddress ?? address;
  return claim.createdBy === canonical || claim.managedBy === canonical;
}
