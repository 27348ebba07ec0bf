// Plugin documents: create, update (metadata, publishing, approved users, secret rotation,
// appended and edited versions), soft delete, and the reads. Each write is one transaction.
// Only the creator or manager edits; `pluginSecret` goes only to them, and only when asked.
import { sql } from 'kysely';
import type { AppContext } from '../context.ts';
import type { DB, Tx } from '../db/index.ts';
import { egressFor } from '../egress/index.ts';
import { escapeLike } from '../shared/like.ts';
import { findPlugin } from '../plugins/registry.ts';
import { toCanonical } from '../shared/addresses.ts';
import { randomHex } from '../shared/crypto.ts';
import { badRequest, conflict, forbidden, notFound } from '../shared/errors.ts';
import { mapPage, newestFirst, paginate } from '../shared/pagination.ts';
import type { Session } from '../shared/session.ts';
import { forgetPlugin } from './cache.ts';
import { isOwner, type PluginMetadata, type PluginRecord, type PluginVersion, type VersionConfig } from './model.ts';
import type { CreateInput, MetadataInput, UpdateInput, VersionConfigInput } from './schemas.ts';
import { loadPlugin, loadPlugins, recordFromRows, type PluginDocTable } from './storage.ts';
import { validateVersionConfig } from './validation.ts';

export const PLUGIN_SCOPE = 'managePlugins';
export const MAX_VERSIONS = 1000;

/** A fresh plugin secret: 32 random bytes as hex. */
const newSecret = () => randomHex(32);

function metadataOf(m: MetadataInput): PluginMetadata {
  return { ...m, description: m.description ?? '', image: m.image ?? '' };
}

/**
 * The localised id rule: an English document has the bare id; a document in another locale is
 * `<id>-<locale>`, and its English original `<id>` must exist and belong to the same owner. An
 * English id may not end in `-<locale>` (any ending the Locale pattern could be: two letters, or
 * two and two), whether or not `<id>` exists yet: otherwise anyone could take `<id>-es` before
 * the owner of `<id>` creates it, and that owner could never create its Spanish document.
 */
async function checkPluginId(db: DB | Tx, pluginId: string, locale: string, actor: string): Promise<void> {
  if (locale === 'en') {
    if (findPlugin(pluginId)) throw badRequest(`pluginId "${pluginId}" is a core plugin id`);
    const localised = /-([a-z]{2}(?:-[a-z]{2})?)$/i.exec(pluginId);
    if (localised) {
      const suffix = localised[1]!;
      if (suffix.toLowerCase() === 'en')
        throw badRequest(
          `pluginId "${pluginId}" ends in -${suffix}, but English is the base document: its id has no locale suffix ("${pluginId.slice(0, localised.index)}")`,
        );
      throw badRequest(
        `pluginId "${pluginId}" ends in -${suffix}, the form <id>-<locale> of a localised document: give that locale, or choose an English id without a -<locale> ending`,
      );
    }
    return;
  }
  const suffix = `-${locale}`;
  if (!pluginId.endsWith(suffix) || pluginId.length === suffix.length)
    throw badRequest(
      `pluginId of a document in locale ${locale} must be <id>${suffix} (the English document has the bare <id>)`,
    );
  const base = pluginId.slice(0, -suffix.length);
  const original = await loadPlugin(db, base);
  // a localised document translates an English one, not another translation
  if (original?.locale !== 'en')
    throw badRequest(`pluginId "${pluginId}": the English document "${base}" does not exist; create it first`);
  if (!isOwner(original, actor))
    throw forbidden(`Only the creator or manager of plugin ${base} may add its ${locale} document`);
}

async function checkUri(ctx: AppContext, uri: string): Promise<string | null> {
  return egressFor(ctx).checkUrlSyntax(uri);
}

async function validateConfig(ctx: AppContext, input: VersionConfigInput, path: string): Promise<VersionConfig> {
  return validateVersionConfig(input, path, (uri) => checkUri(ctx, uri));
}

function approvedUsersOf(list: string[] | undefined, path: string): string[] | undefined {
  if (list === undefined) return undefined;
  return [...new Set(list.map((a, i) => toCanonical(a, `${path}[${i}]`)))];
}

export async function createPlugin(ctx: AppContext, session: Session, input: CreateInput): Promise<PluginRecord> {
  const actor = session.platformAddress;
  const locale = input.locale ?? 'en';
  const config = await validateConfig(ctx, input.initialVersion, 'initialVersion');
  const approvedUsers = approvedUsersOf(input.approvedUsers, 'approvedUsers') ?? [];
  const managedBy = input.managedBy !== undefined ? toCanonical(input.managedBy, 'managedBy') : actor;
  const now = ctx.clock.now();
  const metadata = metadataOf(input.metadata);
  await ctx.db.transaction().execute(async (tx) => {
    await checkPluginId(tx, input.pluginId, locale, actor);
    // the insert is the uniqueness check: two creates of one id race only to the primary key
    const inserted = await tx
      .insertInto('plugin_docs')
      .values({
        plugin_id: input.pluginId,
        created_by: actor,
        managed_by: managedBy,
        locale,
        metadata: JSON.stringify(metadata),
        name_search: metadata.name.toLowerCase(),
        to_publish: input.toPublish ? 1 : 0,
        review_completed: 0,
        approved_users: JSON.stringify(approvedUsers),
        plugin_secret_enc: ctx.keyring.encrypt(newSecret()),
        created_at: now,
        last_updated: now,
        deleted_at: null,
      })
      .onConflict((oc) => oc.column('plugin_id').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0)
      throw conflict(`A plugin with pluginId "${input.pluginId}" already exists`);
    await tx
      .insertInto('plugin_versions')
      .values({
        plugin_id: input.pluginId,
        version: 1,
        finalized: input.initialVersion.finalized ? 1 : 0,
        config: JSON.stringify(config),
        created_at: now,
        last_updated: now,
      })
      .execute();
  });
  return (await loadPlugin(ctx.db, input.pluginId))!;
}

async function loadOwned(tx: Tx, ctx: AppContext, pluginId: string, actor: string): Promise<PluginRecord> {
  const plugin = await loadPlugin(tx, pluginId, { forUpdate: ctx.dialect === 'postgres' });
  if (!plugin) throw notFound(`Plugin ${pluginId} not found`);
  if (!isOwner(plugin, actor)) throw forbidden(`Only the creator or manager of plugin ${pluginId} may edit it`);
  return plugin;
}

export async function updatePlugin(ctx: AppContext, session: Session, input: UpdateInput): Promise<PluginRecord> {
  const actor = session.platformAddress;
  const now = ctx.clock.now();
  try {
    await ctx.db.transaction().execute(async (tx) => {
      const plugin = await loadOwned(tx, ctx, input.pluginId, actor);
      if (input.locale !== undefined && input.locale !== plugin.locale)
        throw badRequest(
          `locale of plugin ${input.pluginId} is ${plugin.locale}; it cannot change (a localised document has its own id)`,
        );
      // strictly increasing: the engine's cache confirms entries by last_updated
      const changes: Partial<PluginDocTable> = { last_updated: Math.max(now, plugin.lastUpdated + 1) };
      if (input.metadata) {
        const metadata = metadataOf(input.metadata);
        changes.metadata = JSON.stringify(metadata);
        changes.name_search = metadata.name.toLowerCase();
      }
      if (input.toPublish !== undefined) changes.to_publish = input.toPublish ? 1 : 0;
      if (input.approvedUsers !== undefined)
        changes.approved_users = JSON.stringify(approvedUsersOf(input.approvedUsers, 'approvedUsers'));
      if (input.rotatePluginSecret) changes.plugin_secret_enc = ctx.keyring.encrypt(newSecret());
      if (input.managedBy !== undefined) {
        const managedBy = toCanonical(input.managedBy, 'managedBy');
        if (managedBy !== plugin.managedBy && plugin.createdBy !== actor)
          throw forbidden(`Only the creator of plugin ${input.pluginId} may change managedBy`);
        changes.managed_by = managedBy;
      }

      // versionCreate first: a versionUpdates entry may edit (e.g. finalize) the version it appends
      const versions = [...plugin.versions];
      if (input.versionCreate) {
        const config = await validateConfig(ctx, input.versionCreate, 'versionCreate');
        const last = versions.reduce((m, v) => Math.max(m, v.version), 0);
        if (last >= MAX_VERSIONS) throw badRequest(`plugin ${input.pluginId} already has ${MAX_VERSIONS} versions`);
        const finalized = input.versionCreate.finalized === true;
        await tx
          .insertInto('plugin_versions')
          .values({
            plugin_id: input.pluginId,
            version: last + 1,
            finalized: finalized ? 1 : 0,
            config: JSON.stringify(config),
            created_at: now,
            last_updated: now,
          })
          .execute();
        versions.push({ ...config, version: last + 1, finalized, createdAt: now, lastUpdated: now });
      }
      for (const [i, u] of (input.versionUpdates ?? []).entries()) {
        const path = `versionUpdates[${i}]`;
        const n = Number(u.version);
        const existing = versions.find((v) => v.version === n);
        if (!existing) throw notFound(`${path}: plugin ${input.pluginId} has no version ${n}`);
        if (existing.finalized)
          throw badRequest(
            `${path}: version ${n} of plugin ${input.pluginId} is finalized; its config cannot change (append a new version with versionCreate)`,
          );
        const { version: _v, finalized: _f, createdAt: _c, lastUpdated: _l, ...current } = existing;
        const merged = { ...current, ...u.config } as VersionConfigInput;
        const config = await validateConfig(ctx, merged, `${path}.config`);
        await tx
          .updateTable('plugin_versions')
          .set({ config: JSON.stringify(config), finalized: u.config.finalized ? 1 : 0, last_updated: now })
          .where('plugin_id', '=', input.pluginId)
          .where('version', '=', n)
          .where('finalized', '=', 0)
          .execute();
        // a later entry for the same version merges into this one (and sees it finalized)
        versions[versions.indexOf(existing)] = {
          ...config,
          version: n,
          finalized: u.config.finalized === true,
          createdAt: existing.createdAt,
          lastUpdated: now,
        };
      }
      await tx.updateTable('plugin_docs').set(changes).where('plugin_id', '=', input.pluginId).execute();
    });
  } finally {
    forgetPlugin(ctx, input.pluginId);
  }
  return (await loadPlugin(ctx.db, input.pluginId))!;
}

export async function deletePlugin(ctx: AppContext, session: Session, pluginId: string): Promise<void> {
  try {
    await ctx.db.transaction().execute(async (tx) => {
      await loadOwned(tx, ctx, pluginId, session.platformAddress);
      await tx
        .updateTable('plugin_docs')
        .set({ deleted_at: ctx.clock.now() })
        .where('plugin_id', '=', pluginId)
        .execute();
    });
  } finally {
    forgetPlugin(ctx, pluginId);
  }
}

/** Operator review (CLI): marks the plugin reviewed, so published (with toPublish) for everyone. */
export async function setReviewCompleted(
  ctx: AppContext,
  pluginId: string,
  reviewCompleted: boolean,
): Promise<PluginRecord> {
  await ctx.db.transaction().execute(async (tx) => {
    const p = await loadPlugin(tx, pluginId, { forUpdate: ctx.dialect === 'postgres' });
    if (!p) throw notFound(`Plugin ${pluginId} not found`);
    await tx
      .updateTable('plugin_docs')
      .set({ review_completed: reviewCompleted ? 1 : 0, last_updated: Math.max(ctx.clock.now(), p.lastUpdated + 1) })
      .where('plugin_id', '=', pluginId)
      .execute();
  });
  forgetPlugin(ctx, pluginId);
  return (await loadPlugin(ctx.db, pluginId))!;
}

// ---- reads ----

export interface PluginDocument {
  _docId: string;
  pluginId: string;
  createdBy: string;
  managedBy: string;
  metadata: PluginMetadata;
  locale: string;
  toPublish: boolean;
  reviewCompleted: boolean;
  approvedUsers?: string[];
  pluginSecret?: string;
  lastUpdated: string;
  createdAt: string;
  versions: Array<
    Omit<PluginVersion, 'version' | 'createdAt' | 'lastUpdated'> & {
      version: string;
      createdAt: string;
      lastUpdated: string;
    }
  >;
}

/** Hosted plugins store their URI as `{base_url}/…`: shown with this deployment's PUBLIC_URL. */
function withBaseUrl(ctx: AppContext, v: PluginVersion): PluginVersion {
  const uri = v.verificationCall?.uri;
  if (!uri?.startsWith('{base_url}')) return v;
  return {
    ...v,
    verificationCall: { ...v.verificationCall!, uri: ctx.config.publicUrl + uri.slice('{base_url}'.length) },
  };
}

export async function renderPlugin(
  ctx: AppContext,
  p: PluginRecord,
  reader: string | null,
  returnSensitiveData = false,
): Promise<PluginDocument> {
  const owner = isOwner(p, reader);
  const doc: PluginDocument = {
    _docId: p.pluginId,
    pluginId: p.pluginId,
    createdBy: p.createdBy,
    managedBy: p.managedBy,
    metadata: p.metadata,
    locale: p.locale,
    toPublish: p.toPublish,
    reviewCompleted: p.reviewCompleted,
    ...(owner ? { approvedUsers: p.approvedUsers } : {}),
    lastUpdated: String(p.lastUpdated),
    createdAt: String(p.createdAt),
    versions: p.versions.map((v) => ({
      ...withBaseUrl(ctx, v),
      version: String(v.version),
      createdAt: String(v.createdAt),
      lastUpdated: String(v.lastUpdated),
    })),
  };
  if (owner && returnSensitiveData) {
    const row = await ctx.db
      .selectFrom('plugin_docs')
      .select('plugin_secret_enc')
      .where('plugin_id', '=', p.pluginId)
      .executeTakeFirstOrThrow();
    doc.pluginSecret = ctx.keyring.decrypt(row.plugin_secret_enc);
  }
  return doc;
}

export async function getPlugin(ctx: AppContext, pluginId: string, session: Session | null): Promise<PluginDocument> {
  const p = await loadPlugin(ctx.db, pluginId);
  const reader = session?.platformAddress ?? null;
  if (!p) throw notFound(`Plugin ${pluginId} not found`);
  return renderPlugin(ctx, p, reader);
}

/**
 * Documents by id, in the order asked (unknown ids left out). `returnSensitiveData` adds
 * pluginSecret to the documents the session's user creates or manages, and only for a session
 * holding managePlugins: the route refuses the flag to any other (its entry in
 * src/shared/access.ts), and this check keeps the secret from any other caller as well.
 */
export async function fetchPlugins(
  ctx: AppContext,
  pluginIds: string[],
  returnSensitiveData: boolean,
  session: Session | null,
): Promise<PluginDocument[]> {
  const reader = session?.platformAddress ?? null;
  const sensitive = returnSensitiveData && session?.scopes.includes(PLUGIN_SCOPE);
  const found = await loadPlugins(ctx.db, [...new Set(pluginIds)]);
  const byId = new Map(found.map((p) => [p.pluginId, p]));
  const out: PluginDocument[] = [];
  for (const id of pluginIds) {
    const p = byId.get(id);
    if (p) out.push(await renderPlugin(ctx, p, reader, sensitive));
  }
  return out;
}

/**
 * Search: published plugins (`toPublish` and reviewed by the operator) of one locale whose name contains `searchValue`
 * (case-insensitive literal substring), newest first; with `pluginsForSignedInUser`, the
 * caller's own plugins instead, published or not.
 */
export async function searchPlugins(
  ctx: AppContext,
  opts: { searchValue?: string; bookmark?: string; locale?: string; mine?: string },
): Promise<{ plugins: PluginDocument[]; bookmark: string; hasMore: boolean }> {
  const locale = opts.locale ?? 'en';
  const needle = (opts.searchValue ?? '').toLowerCase();
  let q = ctx.db.selectFrom('plugin_docs').selectAll().where('deleted_at', 'is', null).where('locale', '=', locale);
  if (opts.mine) q = q.where((eb) => eb.or([eb('created_by', '=', opts.mine!), eb('managed_by', '=', opts.mine!)]));
  else q = q.where('to_publish', '=', 1).where('review_completed', '=', 1);
  if (needle) q = q.where(sql<boolean>`name_search like ${'%' + escapeLike(needle) + '%'} escape '\\'`);
  const page = await paginate({
    query: q,
    keys: newestFirst('plugin_id'),
    bookmark: opts.bookmark,
    keyring: ctx.keyring,
    scope: `plugins/search:${locale}:${needle}:${opts.mine ?? ''}`,
  });
  const versions = page.docs.length
    ? await ctx.db
        .selectFrom('plugin_versions')
        .selectAll()
        .where(
          'plugin_id',
          'in',
          page.docs.map((d) => d.plugin_id),
        )
        .execute()
    : [];
  const docs = await Promise.all(
    page.docs.map((d) =>
      renderPlugin(
        ctx,
        recordFromRows(
          d,
          versions.filter((v) => v.plugin_id === d.plugin_id),
        ),
        opts.mine ?? null,
      ),
    ),
  );
  return { plugins: docs, bookmark: page.bookmark, hasMore: page.hasMore };
}

export interface PluginErrorDoc {
  _docId: string;
  pluginId: string;
  timestamp: number;
  error: string;
  context: { claimId: string; claimAttemptId: string; instanceId: string };
}

/**
 * Error records, newest first: of one plugin (its owner or manager only), or, without
 * `pluginId`, of every live plugin the caller creates or manages (the reference client sends no
 * query at all). A bookmark is bound to the plugin, or to the caller for the list of all.
 */
export async function listPluginErrors(
  ctx: AppContext,
  session: Session,
  pluginId: string | undefined,
  bookmark: string | undefined,
): Promise<{ docs: PluginErrorDoc[]; bookmark: string; hasMore: boolean; total: number }> {
  const actor = session.platformAddress;
  if (pluginId !== undefined) {
    const p = await loadPlugin(ctx.db, pluginId);
    if (!p) throw notFound(`Plugin ${pluginId} not found`);
    if (!isOwner(p, actor)) throw forbidden(`Only the creator or manager of plugin ${pluginId} may read its errors`);
  }
  const filtered = () => {
    const q = ctx.db.selectFrom('plugin_errors as e');
    if (pluginId !== undefined) return q.where('e.plugin_id', '=', pluginId);
    return q.where((eb) =>
      eb.exists(
        eb
          .selectFrom('plugin_docs as d')
          .select('d.plugin_id')
          .whereRef('d.plugin_id', '=', 'e.plugin_id')
          .where('d.deleted_at', 'is', null)
          .where((o) => o.or([o('d.created_by', '=', actor), o('d.managed_by', '=', actor)])),
      ),
    );
  };
  const [page, count] = await Promise.all([
    paginate({
      query: filtered().selectAll('e'),
      keys: [
        { column: 'e.timestamp', direction: 'desc' },
        { column: 'e.seq', direction: 'desc' },
      ],
      bookmark,
      keyring: ctx.keyring,
      scope: pluginId !== undefined ? `plugins/errors:${pluginId}` : `plugins/errors-of:${actor}`,
    }),
    filtered()
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  return {
    ...mapPage(page, (r) => ({
      _docId: `${r.plugin_id}-${r.timestamp}-${r.seq}`,
      pluginId: r.plugin_id,
      timestamp: Number(r.timestamp),
      error: r.error,
      context: { claimId: r.claim_id, claimAttemptId: r.claim_attempt_id, instanceId: r.instance_id },
    })),
    total: Number(count.n),
  };
}
