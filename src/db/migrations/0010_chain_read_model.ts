// The chain read model (issue 12): what the block-following indexer keeps of the chain, and its
// cursor. Documents are the chain's own JSON (amounts and ranges stay decimal strings); the
// columns beside them are only what the views filter and sort by.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // One row: the last indexed height, the chain head last seen (lag) and the indexing lease.
  await db.schema
    .createTable('chain_index_state')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('height', 'bigint', (c) => c.notNull())
    .addColumn('block_time', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('chain_height', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('holder', 'text')
    .addColumn('lease_expires_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('chain_collections')
    .addColumn('collection_id', 'text', (c) => c.primaryKey())
    .addColumn('doc_json', 'text', (c) => c.notNull())
    .addColumn('manager', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_block', 'bigint', (c) => c.notNull())
    .addColumn('created_time', 'bigint', (c) => c.notNull())
    .addColumn('updated_block', 'bigint', (c) => c.notNull())
    .addColumn('update_history', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('chain_collections_manager')
    .on('chain_collections')
    .columns(['manager', 'created_block', 'collection_id'])
    .execute();
  await db.schema
    .createIndex('chain_collections_created_by')
    .on('chain_collections')
    .columns(['created_by', 'created_block', 'collection_id'])
    .execute();

  // Balance stores ("owner" documents) of touched addresses; `has_balance` = some amount > 0.
  await db.schema
    .createTable('chain_balances')
    .addColumn('collection_id', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('store_json', 'text', (c) => c.notNull())
    .addColumn('has_balance', 'integer', (c) => c.notNull())
    .addColumn('first_block', 'bigint', (c) => c.notNull())
    .addColumn('updated_block', 'bigint', (c) => c.notNull())
    .addColumn('update_history', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('chain_balances_pk', ['collection_id', 'address'])
    .execute();
  await db.schema
    .createIndex('chain_balances_owners')
    .on('chain_balances')
    .columns(['collection_id', 'has_balance', 'first_block', 'address'])
    .execute();
  await db.schema
    .createIndex('chain_balances_collected')
    .on('chain_balances')
    .columns(['address', 'has_balance', 'first_block', 'collection_id'])
    .execute();

  // Transfer activity: one row per transfer leg (`usedApprovalDetails` event), in chain order.
  await db.schema
    .createTable('chain_activity')
    .addColumn('doc_id', 'text', (c) => c.primaryKey())
    .addColumn('collection_id', 'text', (c) => c.notNull())
    .addColumn('block', 'bigint', (c) => c.notNull())
    .addColumn('tx_index', 'integer', (c) => c.notNull())
    .addColumn('leg_index', 'integer', (c) => c.notNull())
    .addColumn('doc_json', 'text', (c) => c.notNull())
    .addUniqueConstraint('chain_activity_position', ['block', 'tx_index', 'leg_index'])
    .execute();
  await db.schema
    .createIndex('chain_activity_collection')
    .on('chain_activity')
    .columns(['collection_id', 'block', 'tx_index', 'leg_index'])
    .execute();
  // Who took part in a leg (sender and recipients), for the per-address views.
  await db.schema
    .createTable('chain_activity_parties')
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('collection_id', 'text', (c) => c.notNull())
    .addColumn('block', 'bigint', (c) => c.notNull())
    .addColumn('tx_index', 'integer', (c) => c.notNull())
    .addColumn('leg_index', 'integer', (c) => c.notNull())
    .addColumn('doc_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('chain_activity_parties_pk', ['address', 'block', 'tx_index', 'leg_index'])
    .execute();
  await db.schema
    .createIndex('chain_activity_parties_collection')
    .on('chain_activity_parties')
    .columns(['address', 'collection_id', 'block', 'tx_index', 'leg_index'])
    .execute();

  await db.schema
    .createTable('chain_amount_trackers')
    .addColumn('collection_id', 'text', (c) => c.notNull())
    .addColumn('doc_id', 'text', (c) => c.notNull())
    .addColumn('approver_address', 'text', (c) => c.notNull())
    .addColumn('approved_address', 'text', (c) => c.notNull())
    .addColumn('doc_json', 'text', (c) => c.notNull())
    .addColumn('updated_block', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('chain_amount_trackers_pk', ['collection_id', 'doc_id'])
    .execute();
  await db.schema
    .createIndex('chain_amount_trackers_order')
    .on('chain_amount_trackers')
    .columns(['collection_id', 'updated_block', 'doc_id'])
    .execute();

  await db.schema
    .createTable('chain_challenge_trackers')
    .addColumn('collection_id', 'text', (c) => c.notNull())
    .addColumn('doc_id', 'text', (c) => c.notNull())
    .addColumn('approver_address', 'text', (c) => c.notNull())
    .addColumn('doc_json', 'text', (c) => c.notNull())
    .addColumn('updated_block', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('chain_challenge_trackers_pk', ['collection_id', 'doc_id'])
    .execute();
  await db.schema
    .createIndex('chain_challenge_trackers_order')
    .on('chain_challenge_trackers')
    .columns(['collection_id', 'updated_block', 'doc_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    'chain_challenge_trackers',
    'chain_amount_trackers',
    'chain_activity_parties',
    'chain_activity',
    'chain_balances',
    'chain_collections',
    'chain_index_state',
  ]) {
    await db.schema.dropTable(t).execute();
  }
}
