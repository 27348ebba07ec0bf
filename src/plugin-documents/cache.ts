// Plugin documents as the claim engine reads them, cached per deployment (AppContext's
// pluginDocumentCache, like the claim cache). Every write bumps the document's last_updated, so after a short trust
// window one small query confirms an entry; writes in this process drop it at once, and other
// processes' writes are seen within TRUST_MS.
import type { AppContext } from '../context.ts';
import type { DB, Tx } from '../db/index.ts';
import type { PluginVersion } from './model.ts';
import { versionFromRow, type PluginDocTable } from './storage.ts';

export const TRUST_MS = 1000;
const CACHE_MAX = 1000;

export interface ResolvedDocument {
  doc: Omit<PluginDocTable, 'plugin_secret_enc'>;
  approvedUsers: string[];
  secret: string;
  versions: Map<number, PluginVersion>;
}

/** An entry of AppContext.pluginDocumentCache. */
export interface CachedDocument {
  value: ResolvedDocument;
  checkedAt: number;
}

type Deployment = Pick<AppContext, 'keyring' | 'pluginDocumentCache'>;

export function forgetPlugin(app: Pick<AppContext, 'pluginDocumentCache'>, pluginId: string): void {
  app.pluginDocumentCache.delete(pluginId);
}

/** The live document with its versions and decrypted secret, or null. */
export async function resolveDocument(
  db: DB | Tx,
  app: Deployment,
  pluginId: string,
): Promise<ResolvedDocument | null> {
  const cache = app.pluginDocumentCache;
  const hit = cache.get(pluginId);
  if (hit && performance.now() - hit.checkedAt <= TRUST_MS) return hit.value;
  const row = await db
    .selectFrom('plugin_docs')
    .selectAll()
    .where('plugin_id', '=', pluginId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) {
    cache.delete(pluginId);
    return null;
  }
  if (hit && hit.value.doc.last_updated === row.last_updated) {
    hit.checkedAt = performance.now();
    return hit.value;
  }
  const versions = await db.selectFrom('plugin_versions').selectAll().where('plugin_id', '=', pluginId).execute();
  const { plugin_secret_enc, ...doc } = row;
  const value: ResolvedDocument = {
    doc,
    approvedUsers: JSON.parse(row.approved_users) as string[],
    secret: app.keyring.decrypt(plugin_secret_enc),
    versions: new Map(versions.map((v) => [v.version, versionFromRow(v)])),
  };
  cache.delete(pluginId);
  cache.set(pluginId, { value, checkedAt: performance.now() });
  if (cache.size > CACHE_MAX) cache.delete(cache.keys().next().value as string);
  return value;
}
