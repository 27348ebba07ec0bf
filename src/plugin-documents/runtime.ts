// The custom plugin runtime: a plugin document's pinned version, seen by the claims engine as a
// ClaimPlugin. Params are checked against the version's schemas at claim create / update, user
// inputs at simulate / complete. The endpoint is called once per attempt: `complete` calls it as
// its simulation and execution replays that answer through the preset (ignoreSimulations: the
// simulation auto-passes and execution calls). Managed state (ClaimToken's used tokens, a
// ClaimNumbers claim number) commits with the attempt's result, only when the claim succeeds.
import { sha256Hex } from '../shared/crypto.ts';
import { badRequest, ApiError } from '../shared/errors.ts';
import type {
  AnyClaimPlugin,
  ClaimPlugin,
  EvaluateContext,
  JsonObject,
  PluginResult,
  PluginSource,
} from '../plugins/types.ts';
import { resolveDocument, type ResolvedDocument } from './cache.ts';
import { buildRequest, type CallContext, type CallOutcome } from './call.ts';
import { callThreadFor } from './call-thread.ts';
import type { PluginVersion } from './model.ts';
import { recordPluginError } from './storage.ts';
import { checkValues } from './validation.ts';

export const TOKEN_USED = 'Claim token already used';

/**
 * What execution replays: the part of the simulation's 200 answer its preset reads
 * (`{ claimToken }`, `{ claimNumber }`), or `true` for presets that read nothing. A bare `true`
 * carries no data, so a queued attempt without inputs needs no encryption (claims/payload.ts).
 * A call made before the queue's transaction (ignoreSimulations) that failed is `{ error }`.
 */
type Replay = true | JsonObject;

const isOwner = (d: ResolvedDocument, address: string) => d.doc.created_by === address || d.doc.managed_by === address;
/** Published: listed by its owner (`toPublish`) and reviewed by the operator. */
const isPublished = (d: ResolvedDocument) => d.doc.to_publish === 1 && d.doc.review_completed === 1;

function inputsOf(version: PluginVersion, ctx: EvaluateContext): JsonObject {
  return checkValues(version.userInputsSchema, ctx.input, `body.${ctx.instanceId}`);
}

/** What the preset reads from a 200 answer, or `{ error }` when the answer lacks it. */
function extract(version: PluginVersion, body: JsonObject): Replay {
  switch (version.stateFunctionPreset) {
    case 'Stateless':
    case 'CustomResponseHandler':
      return true;
    case 'ClaimToken': {
      const token = body.claimToken;
      if (typeof token !== 'string' || token === '' || token.length > 4096)
        return { error: 'Invalid response from API: expected { claimToken: string }' };
      return { claimToken: token };
    }
    case 'ClaimNumbers': {
      const n = body.claimNumber;
      if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) return { error: 'Invalid claim number' };
      return { claimNumber: n };
    }
  }
}

const failedWith = (r: Replay): string | null => (r !== true && typeof r.error === 'string' ? r.error : null);

/** The result of an extracted answer, against the state as it was before the attempt. */
async function apply(replay: Replay, ctx: EvaluateContext): Promise<PluginResult> {
  const error = failedWith(replay);
  if (error !== null) return { success: false, error };
  if (replay === true) return { success: true, replay };
  if (typeof replay.claimToken === 'string') {
    // tokens are kept hashed: the state needs equality only
    const key = `t:${sha256Hex(replay.claimToken)}`;
    if (await ctx.state.get(key)) return { success: false, error: TOKEN_USED };
    return { success: true, stateChanges: [{ key, value: 1 }], replay };
  }
  return { success: true, claimNumber: replay.claimNumber as number, replay };
}

function pluginFor(pluginId: string, version: PluginVersion): AnyClaimPlugin {
  const cfg = version;
  const needsSession = cfg.requiresSessions || cfg.requireSignIn === true;

  async function resolveLive(ctx: EvaluateContext): Promise<ResolvedDocument> {
    const d = await resolveDocument(ctx.db, ctx.app, pluginId);
    if (!d) throw new PluginGone(`Plugin ${pluginId} not found`);
    return d;
  }

  function callContext(
    d: ResolvedDocument,
    ctx: EvaluateContext,
    inputs: JsonObject,
    isSimulation: boolean,
    status: CallContext['attemptStatus'],
  ): CallContext {
    return {
      pluginId,
      pluginSecret: d.secret,
      version: cfg,
      instanceId: ctx.instanceId,
      claim: ctx.claim,
      claimAttemptId: isSimulation ? '' : ctx.claimAttemptId,
      isSimulation,
      attemptStatus: status,
      platformAddress: ctx.platformAddress,
      isAddressSignedIn: ctx.session?.platformAddress === ctx.platformAddress,
      locale: ctx.locale,
      publicParams: ctx.publicParams,
      privateParams: ctx.privateParams,
      inputs,
    };
  }

  /** Session and user inputs: the checks before any call. */
  function precheck(ctx: EvaluateContext): { inputs: JsonObject } | { error: string; status: number } {
    if (needsSession && (!ctx.session || ctx.session.platformAddress !== ctx.platformAddress)) {
      return { error: `Must be signed in as the claiming address to use plugin ${pluginId}`, status: 401 };
    }
    try {
      return { inputs: inputsOf(cfg, ctx) };
    } catch (err) {
      if (err instanceof ApiError) return { error: err.message, status: 400 };
      throw err;
    }
  }

  async function recordError(ctx: EvaluateContext, error: string, simulate: boolean): Promise<void> {
    await recordPluginError(
      ctx.db,
      pluginId,
      error,
      { claimId: ctx.claim.claimId, claimAttemptId: simulate ? '' : ctx.claimAttemptId, instanceId: ctx.instanceId },
      ctx.now,
    );
  }

  /** One call, reduced to what the preset reads; a failure is recorded as a plugin error. */
  async function callAndExtract(ctx: EvaluateContext, inputs: JsonObject, simulate: boolean): Promise<Replay> {
    let d: ResolvedDocument;
    try {
      d = await resolveLive(ctx);
    } catch (err) {
      if (err instanceof PluginGone) return { error: err.message };
      throw err;
    }
    const outcome: CallOutcome = await callThreadFor(ctx.app).call(
      callContext(d, ctx, inputs, simulate, 'executing'),
      ctx.app.clock.now(),
    );
    const replay = outcome.ok ? extract(cfg, outcome.response) : { error: outcome.error };
    const error = failedWith(replay);
    // the owner's log keeps the detail; the replay (what claimers see) only the plain text
    if (error !== null) await recordError(ctx, (!outcome.ok && outcome.detail) || error, simulate);
    return replay;
  }

  const plugin: ClaimPlugin = {
    id: pluginId,
    duplicatesAllowed: cfg.duplicatesAllowed,
    stateful: cfg.stateFunctionPreset === 'ClaimToken',
    requiresUserInput: cfg.requiresUserInputs,
    requiresSession: needsSession,
    onDemand: cfg.reuseForNonIndexed,
    ...(cfg.stateFunctionPreset === 'ClaimNumbers'
      ? { canAssignClaimNumbers: () => null, answersClaimNumber: true }
      : {}),

    async validate(pub, priv, { path, creator, db, app }) {
      const d = await resolveDocument(db, app, pluginId);
      if (!d) throw badRequest(`${path}.pluginId: unknown plugin "${pluginId}"`);
      if (!cfg.finalized && !isOwner(d, creator)) {
        throw badRequest(
          `${path}.version: version ${cfg.version} of plugin ${pluginId} is not finalized; only its creator or manager may use it`,
        );
      }
      if (!isPublished(d) && !isOwner(d, creator) && !d.approvedUsers.includes(creator)) {
        throw badRequest(
          `${path}: You must be the owner of non-published plugins or approved to use them by the owner.`,
        );
      }
      return {
        publicParams: checkValues(cfg.publicParamsSchema, pub, `${path}.publicParams`),
        privateParams: checkValues(cfg.privateParamsSchema, priv, `${path}.privateParams`),
      };
    },

    async evaluate(ctx) {
      const checked = precheck(ctx);
      if ('error' in checked) return { success: false, ...checked };
      if (cfg.skipProcessingWebhook) return { success: true };
      const simulate = ctx.mode === 'simulate';
      if (simulate && cfg.ignoreSimulations) return { success: true };
      const replayed = !simulate ? (ctx.replay as Replay | undefined) : undefined;
      if (replayed !== undefined) return apply(replayed, ctx);
      return apply(await callAndExtract(ctx, checked.inputs, simulate), ctx);
    },

    // execution-time calls (ignoreSimulations) run before the queue's transaction
    ...(cfg.ignoreSimulations && !cfg.skipProcessingWebhook
      ? {
          async prepareExecution(ctx: EvaluateContext): Promise<Replay | null> {
            const checked = precheck(ctx);
            if ('error' in checked) return null; // evaluate fails the same way before reading this
            // the state is read inside the transaction: this hands over what the preset reads
            return callAndExtract(ctx, checked.inputs, false);
          },
        }
      : {}),

    ...(cfg.receiveStatusWebhook && cfg.verificationCall
      ? {
          async statusWebhook(ctx, status) {
            const d = await resolveDocument(ctx.db, ctx.app, pluginId);
            if (!d) return null;
            let inputs: JsonObject;
            try {
              inputs = inputsOf(cfg, ctx);
            } catch {
              inputs = {};
            }
            const { body, headers } = buildRequest(callContext(d, ctx, inputs, false, status));
            return { url: cfg.verificationCall!.uri, body, ...(Object.keys(headers).length ? { headers } : {}) };
          },
        }
      : {}),
  };
  return plugin;
}

class PluginGone extends Error {}

// one ClaimPlugin per (document, version, config change); finalized versions never change
const built = new WeakMap<PluginVersion, AnyClaimPlugin>();

/** Plugin documents as a plugin source: `pluginId` + pinned `version` → the version's plugin. */
export const customPlugins: PluginSource = {
  async resolve(pluginId, version, { db, app }) {
    if (!/^[1-9][0-9]{0,8}$/.test(version)) return undefined;
    const d = await resolveDocument(db, app, pluginId);
    const v = d?.versions.get(Number(version));
    if (!v) return undefined;
    let p = built.get(v);
    if (!p) built.set(v, (p = pluginFor(pluginId, v)));
    return p;
  },
};
