// The plugin contract. A plugin checks one criterion of a claim. The engine runs every plugin of an
// attempt in parallel against the state as it was before the attempt; each returns pass or fail, its
// exact error text, the state change it proposes, and optionally a claim number. The engine decides
// (success logic) which proposals commit.
//
// The same shape is meant to carry the plugins of later issues:
//  - custom HTTPS plugins: `evaluate` makes the call in simulation and returns `replay`; at execution
//    the engine hands that value back (`ctx.replay`) so the endpoint is called once per attempt;
//  - hosted plugins reading chain data: `evaluate` is async and may read whatever it needs;
//  - stateful presets (ClaimToken, ClaimNumbers): `stateChanges` and `claimNumber`.
import type { AppContext } from '../context.ts';
import type { DB, Tx } from '../db/index.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { JsonObject } from '../shared/json.ts';

/** Also exported here, where the plugin-documents modules import it from. */
export type { JsonObject };

/** Who completes the attempt, as far as plugins may know (captured at complete time). */
export interface AttemptSession {
  /** Canonical address of the signed-in user. */
  platformAddress: string;
  scopes: string[];
}

/** One key of one instance's state, as stored (JSON value). `null` deletes the key. */
export interface StateChange {
  key: string;
  value: unknown;
}

/** Reads this instance's committed state (plus earlier writes of the same batch at execution). */
export interface InstanceState {
  get(key: string): Promise<unknown>;
}

export interface ClaimInfo {
  claimId: string;
  version: number;
  createdAt: number;
  lastUpdated: number;
  createdBy: string;
  managedBy: string;
  /** numUses.maxUses, or null for an on-demand claim. */
  maxUses: number | null;
}

/**
 * What the claims capability lends plugins (satisfies-claim reads other claims). It is handed in
 * through the contexts below, so no plugin imports claims, which imports the plugin registry.
 */
export interface ClaimsAccess {
  /** A live claim's plugin instances (through the context's `db`); null when absent, deleted or expired at `now`. */
  load(claimId: string): Promise<{ plugins: Array<{ pluginId: string; publicParams: JsonObject }> } | null>;
  /** Indexed claims: the address's claim numbers; on-demand claims: the criteria evaluated now. A 404 ApiError for an unknown claim. */
  successOf(claimId: string, address: string): Promise<{ successCount: number; claimNumbers: number[] }>;
}

/** What every plugin call shares, whatever the call: the deployment, the read handle, the time, the claims. */
export interface PluginEnv {
  /** Database handle of the current read (the committing transaction at execution). */
  db: DB | Tx;
  /**
   * The chain read model (the indexer's balances and collections), when it may be read apart from
   * `db`: a read replica for a simulation (docs/scale-out.md#read-replicas). Absent: `db`. A
   * complete's pre-check and the worker's resolution never set it: they read the primary.
   */
  readModel?: DB;
  keyring: Keyring;
  /** The deployment (config, logger, outbound calls through its egress client). */
  app: AppContext;
  now: number;
  claims: ClaimsAccess;
}

/** One run of an attempt's plugins: the engine's environment extends it, each plugin's EvaluateContext adds its instance. */
export interface AttemptRun extends PluginEnv {
  mode: 'simulate' | 'execute';
  /** '' during a simulation. */
  claimAttemptId: string;
}

export interface EvaluateContext<Pub = JsonObject, Priv = JsonObject> extends AttemptRun {
  claim: ClaimInfo;
  instanceId: string;
  publicParams: Pub;
  privateParams: Priv;
  /** Canonical (native) claiming address. */
  platformAddress: string;
  /** `body[instanceId]`, when the caller sent one. */
  input: unknown;
  session: AttemptSession | null;
  state: InstanceState;
  isClaimNumberAssigner: boolean;
  /** What this plugin returned as `replay` when the attempt was simulated at complete time. */
  replay?: unknown;
  /** The claimer's locale (from Accept-Language at complete / simulate time; default `en`). */
  locale: string;
}

/** A status webhook to deliver once the attempt is resolved (durable outbox, same transaction). */
export interface StatusWebhook {
  url: string;
  body: JsonObject;
  /** Fields sent as headers (custom plugins' headerField values). */
  headers?: Record<string, string>;
}

export interface PluginResult {
  success: boolean;
  /** Exact error text when failing (docs/plugins.md). */
  error?: string;
  /** HTTP status a failing simulation answers with (default 400). */
  status?: number;
  /** Applied, in one transaction with the attempt's result, only if the claim succeeds and this plugin is on the success path. */
  stateChanges?: StateChange[];
  /** Zero-based claim number this plugin would assign (used when it is the claim's assigner). */
  claimNumber?: number;
  /** Stored with the queued attempt and handed back at execution (custom plugins replay their simulation). */
  replay?: unknown;
  /**
   * A failing user-input plugin whose answer was right but cannot be used (a code already used): not
   * a wrong guess for the guess throttle (claims/guess-throttle.ts), since only a right guess gets here.
   */
  rightAnswer?: true;
}

export interface ValidateContext extends PluginEnv {
  /** Path for error messages, e.g. `claims[0].plugins[2]`. */
  path: string;
  /** The claim being created or updated (plugins that reference other claims check for cycles). */
  claimId: string;
  /** Canonical address of the claim's creator (of the caller on create). */
  creator: string;
  /** Canonical address of the session creating or updating the claim (absent outside claim writes). */
  caller?: string;
  /** The instance's params before this update (update only), with private params decrypted. */
  previous?: { publicParams: JsonObject; privateParams: JsonObject };
}

export interface ValidatedParams {
  publicParams: JsonObject;
  privateParams: JsonObject;
}

/** Options of the claim document read that affect what a plugin's state shows. */
export interface RenderStateOptions {
  fetchAllClaimedUsers: boolean;
  /** Whether the reader may see hidden state (creator or manager). */
  privileged: boolean;
  /** The claim's ledger of used claim numbers (loaded only with fetchAllClaimedUsers). */
  claimNumbers?: Array<{ claimNumber: number; platformAddress: string }>;
}

export interface StoredStateEntry {
  key: string;
  value: unknown;
}

export interface ClaimPlugin<Pub = JsonObject, Priv = JsonObject> {
  id: string;
  duplicatesAllowed: boolean;
  stateful: boolean;
  /** Reads `body[instanceId]`. */
  requiresUserInput: boolean;
  /** The fields `body[instanceId]` may hold; any other is refused before evaluation. Absent: none for a plugin without user input, unchecked otherwise. */
  inputFields?: readonly string[];
  /** Needs the claimer's session. */
  requiresSession: boolean;
  /** Cannot be made optional by `satisfyMethod` (numUses). */
  mandatory?: boolean;
  /** Usable on an on-demand claim (default: not stateful, no user input, no session). */
  onDemand?: boolean;
  /**
   * Its answer IS a claim number (a custom plugin with the ClaimNumbers preset): a claim must name
   * it in `assignMethod`, else the number would be dropped, and may hold only one such instance.
   */
  answersClaimNumber?: boolean;
  /** May be named by `assignMethod`. Return a problem text when this instance cannot assign. */
  canAssignClaimNumbers?: (params: ValidatedParams) => string | null;
  /** Checks and normalises params at create and update; throws a 400 naming the problem. */
  validate(
    publicParams: unknown,
    privateParams: unknown,
    ctx: ValidateContext,
  ): Promise<ValidatedParams> | ValidatedParams;
  evaluate(ctx: EvaluateContext<Pub, Priv>): Promise<PluginResult>;
  /** State keys `publicState` needs (all of the instance's keys when absent). */
  publicStateKeys?: string[];
  /** Public state for the claim document, from the stored entries it needs. */
  publicState?(entries: StoredStateEntry[], params: ValidatedParams, opts: RenderStateOptions): JsonObject;
  /** Private state (privateStatesToFetch), from all stored entries of the instance. */
  privateState?(entries: StoredStateEntry[]): JsonObject;
  /** Explicit state given on update (`newState`), as stored entries; throws a 400 when malformed. */
  stateFromDocument?(newState: unknown, path: string): StoredStateEntry[];
  /**
   * Execution-time work that must not run inside the committing transaction (a custom plugin's
   * call when its simulation was skipped). The queue runs it before the batch's transaction and
   * hands its value to `evaluate` as `ctx.replay`; a crash in between may run it again.
   */
  prepareExecution?(ctx: EvaluateContext<Pub, Priv>): Promise<unknown>;
  /** The status webhook this instance wants once the attempt resolved (custom plugins with receiveStatusWebhook). */
  statusWebhook?(ctx: EvaluateContext<Pub, Priv>, status: 'success' | 'failure'): Promise<StatusWebhook | null>;
}

/** Where plugins that are not core plugins come from (plugin documents: custom and hosted plugins). */
export interface PluginSource {
  /** The plugin for this id and version, or undefined when this source does not know it. */
  resolve(
    pluginId: string,
    version: string,
    env: { db: DB | Tx; app: Pick<AppContext, 'keyring' | 'pluginDocumentCache'> },
  ): Promise<AnyClaimPlugin | undefined>;
}

/** Any plugin, whatever its param types (the registry holds these). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyClaimPlugin = ClaimPlugin<any, any>;
