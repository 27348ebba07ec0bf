// Plugin document storage: table shapes (composed into src/db/schema.ts) and the queries the
// routes, the custom plugin runtime and the webhook tools share. The plugin secret is stored
// encrypted with the keyring (it must be recovered to sign calls).
import type { Generated } from 'kysely';
import type { DB, Tx } from '../db/index.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { PluginMetadata, PluginRecord, PluginVersion, VersionConfig } from './model.ts';

export interface PluginDocTable {
  plugin_id: string;
  created_by: string;
  managed_by: string;
  locale: string;
  /** JSON PluginMetadata. */
  metadata: string;
  /** Lowercased metadata.name, for substring search. */
  name_search: string;
  to_publish: number;
  review_completed: number;
  /** JSON string[] of canonical addresses. */
  approved_users: string;
  plugin_secret_enc: string;
  created_at: number;
  last_updated: number;
  deleted_at: number | null;
}

export interface PluginVersionTable {
  plugin_id: string;
  version: number;
  finalized: number;
  /** JSON VersionConfig. */
  config: string;
  created_at: number;
  last_updated: number;
}

export interface PluginErrorTable {
  seq: Generated<number>;
  plugin_id: string;
  timestamp: number;
  error: string;
  claim_id: string;
  claim_attempt_id: string;
  instance_id: string;
}

export interface PluginDocumentTables {
  plugin_docs: PluginDocTable;
  plugin_versions: PluginVersionTable;
  plugin_errors: PluginErrorTable;
}

// Its tables join the database's type (db/schema.ts).
declare module '../db/schema.ts' {
  interface Database extends PluginDocumentTables {}
}

type Db = DB | Tx;

/** The plugin's secret (decrypted), or null for an unknown or deleted plugin. */
export async function readPluginSecret(db: Db, keyring: Keyring, pluginId: string): Promise<string | null> {
  const row = await db
    .selectFrom('plugin_docs')
    .select('plugin_secret_enc')
    .where('plugin_id', '=', pluginId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row ? keyring.decrypt(row.plugin_secret_enc) : null;
}

/** Whether `address` (canonical) is the creator or manager of a live plugin document. */
export async function isPluginOwner(db: Db, pluginId: string, address: string): Promise<boolean> {
  const row = await db
    .selectFrom('plugin_docs')
    .select(['created_by', 'managed_by'])
    .where('plugin_id', '=', pluginId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return !!row && (row.created_by === address || row.managed_by === address);
}

export function versionFromRow(r: PluginVersionTable): PluginVersion {
  return {
    version: r.version,
    finalized: r.finalized === 1,
    createdAt: r.created_at,
    lastUpdated: r.last_updated,
    ...(JSON.parse(r.config) as VersionConfig),
  };
}

export function recordFromRows(doc: PluginDocTable, versions: PluginVersionTable[]): PluginRecord {
  return {
    pluginId: doc.plugin_id,
    createdBy: doc.created_by,
    managedBy: doc.managed_by,
    locale: doc.locale,
    metadata: JSON.parse(doc.metadata) as PluginMetadata,
    toPublish: doc.to_publish === 1,
    reviewCompleted: doc.review_completed === 1,
    approvedUsers: JSON.parse(doc.approved_users) as string[],
    createdAt: doc.created_at,
    lastUpdated: doc.last_updated,
    versions: versions.sort((a, b) => a.version - b.version).map(versionFromRow),
  };
}

/** A live plugin document with its versions, or null. */
export async function loadPlugin(
  db: Db,
  pluginId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<PluginRecord | null> {
  let q = db.selectFrom('plugin_docs').selectAll().where('plugin_id', '=', pluginId).where('deleted_at', 'is', null);
  if (opts.forUpdate) q = q.forUpdate();
  const doc = await q.executeTakeFirst();
  if (!doc) return null;
  const versions = await db.selectFrom('plugin_versions').selectAll().where('plugin_id', '=', pluginId).execute();
  return recordFromRows(doc, versions);
}

/** Several live documents at once (fetch route), in no particular order. */
export async function loadPlugins(db: Db, pluginIds: string[]): Promise<PluginRecord[]> {
  if (!pluginIds.length) return [];
  const docs = await db
    .selectFrom('plugin_docs')
    .selectAll()
    .where('plugin_id', 'in', pluginIds)
    .where('deleted_at', 'is', null)
    .execute();
  if (!docs.length) return [];
  const versions = await db
    .selectFrom('plugin_versions')
    .selectAll()
    .where(
      'plugin_id',
      'in',
      docs.map((d) => d.plugin_id),
    )
    .execute();
  return docs.map((d) =>
    recordFromRows(
      d,
      versions.filter((v) => v.plugin_id === d.plugin_id),
    ),
  );
}

export interface PluginErrorContext {
  claimId: string;
  claimAttemptId: string;
  instanceId: string;
}

export async function recordPluginError(
  db: Db,
  pluginId: string,
  error: string,
  context: PluginErrorContext,
  timestamp: number,
): Promise<void> {
  await db
    .insertInto('plugin_errors')
    .values({
      plugin_id: pluginId,
      timestamp,
      error,
      claim_id: context.claimId,
      claim_attempt_id: context.claimAttemptId,
      instance_id: context.instanceId,
    })
    .execute();
}
