// Linked wallets (issue 35): the pending link requests (one nonce each, single use, short-lived)
// and the links of further addresses to an account. A link row is never deleted: unlinking stamps
// `unlinked_at`, so a claim can read the links as they stood when it was created. A partial unique
// index keeps an address in at most one live link. The hosted must-own-badges and min-badge
// documents gain their `combineLinkedWallets` form field (en and es).
import { sql, type Kysely } from 'kysely';

const FIELD = {
  key: 'combineLinkedWallets',
  type: 'boolean',
  label: ['Combine linked wallets', 'Combinar billeteras vinculadas'],
  helper: [
    "Count the holdings of every wallet linked to the claimer's account together (links made before the claim was created).",
    'Suma lo que tienen todas las billeteras vinculadas a la cuenta de quien reclama (vínculos hechos antes de crear el reclamo).',
  ],
} as const;
const PLUGINS = ['must-own-badges', 'min-badge'];

async function editSchemas(db: Kysely<any>, edit: (fields: Array<{ key: string }>, locale: 0 | 1) => void) {
  for (const base of PLUGINS) {
    for (const [pluginId, i] of [
      [base, 0],
      [`${base}-es`, 1],
    ] as const) {
      const row = await db
        .selectFrom('plugin_versions')
        .select(['config', 'version'])
        .where('plugin_id', '=', pluginId)
        .where('version', '=', 1)
        .executeTakeFirst();
      if (!row) continue;
      const config = JSON.parse(row.config as string) as { publicParamsSchema: Array<{ key: string }> };
      edit(config.publicParamsSchema, i);
      await db
        .updateTable('plugin_versions')
        .set({ config: JSON.stringify(config) })
        .where('plugin_id', '=', pluginId)
        .where('version', '=', 1)
        .execute();
    }
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('linked_wallet_requests')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('account_address', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('platform_address', 'text', (c) => c.notNull())
    .addColumn('chain', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('issued_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('linked_wallet_requests_account')
    .on('linked_wallet_requests')
    .columns(['account', 'expires_at'])
    .execute();

  await db.schema
    .createTable('linked_wallets')
    .addColumn('link_id', 'text', (c) => c.primaryKey())
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('platform_address', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('chain', 'text', (c) => c.notNull())
    .addColumn('linked_at', 'bigint', (c) => c.notNull())
    .addColumn('unlinked_at', 'bigint')
    .execute();
  // one live link per address, whichever account holds it
  await db.schema
    .createIndex('linked_wallets_live_address')
    .on('linked_wallets')
    .column('platform_address')
    .unique()
    .where(sql.ref('unlinked_at'), 'is', null)
    .execute();
  await db.schema
    .createIndex('linked_wallets_account')
    .on('linked_wallets')
    .columns(['account', 'linked_at'])
    .execute();
  await db.schema
    .createIndex('linked_wallets_address')
    .on('linked_wallets')
    .columns(['platform_address', 'linked_at'])
    .execute();

  await editSchemas(db, (fields, i) => {
    if (fields.some((f) => f.key === FIELD.key)) return;
    fields.push({ key: FIELD.key, label: FIELD.label[i], type: FIELD.type, helper: FIELD.helper[i] } as {
      key: string;
    });
  });
}

export async function down(db: Kysely<any>): Promise<void> {
  await editSchemas(db, (fields) => {
    const at = fields.findIndex((f) => f.key === FIELD.key);
    if (at >= 0) fields.splice(at, 1);
  });
  await db.schema.dropTable('linked_wallets').execute();
  await db.schema.dropTable('linked_wallet_requests').execute();
}
