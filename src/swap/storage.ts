// Imported pool state in the database. `platform import-pools` (its own process) replaces the
// imported set in one transaction and bumps a revision; each running service polls the revision
// and reloads when it moves.
import { chunks, type DB } from '../db/index.ts';
import { formatDec, parseDec } from './dec.ts';
import { parsePool, parsePairTakerFees, type Pool, type TakerFees } from './pools.ts';

export interface SwapPoolTable {
  pool_id: string;
  pool_json: string;
  updated_at: number;
}

export interface SwapImportStateTable {
  id: string;
  revision: number;
  taker_fees_json: string;
  updated_at: number;
}

export interface SwapTables {
  swap_pools: SwapPoolTable;
  swap_import_state: SwapImportStateTable;
}

// Its tables join the database's type (db/schema.ts).
declare module '../db/schema.ts' {
  interface Database extends SwapTables {}
}

const STATE_ID = 'current';

function feesToJson(fees: TakerFees): string {
  return JSON.stringify({
    default_taker_fee: formatDec(fees.defaultFee),
    denom_pair_taker_fees: [...fees.pairs].map(([k, v]) => {
      const [tokenIn, tokenOut] = k.split('\n');
      return { token_in_denom: tokenIn, token_out_denom: tokenOut, taker_fee: formatDec(v) };
    }),
  });
}

/** Replaces the imported pools and fees; returns the new revision. */
export async function replaceImportedPools(db: DB, pools: Pool[], fees: TakerFees, now: number): Promise<number> {
  return db.transaction().execute(async (tx) => {
    await tx.deleteFrom('swap_pools').execute();
    for (const part of chunks(pools)) {
      const rows = part.map((p) => ({ pool_id: p.id, pool_json: JSON.stringify(p.source), updated_at: now }));
      await tx.insertInto('swap_pools').values(rows).execute();
    }
    await tx
      .insertInto('swap_import_state')
      .values({ id: STATE_ID, revision: 1, taker_fees_json: feesToJson(fees), updated_at: now })
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          revision: eb('swap_import_state.revision', '+', 1),
          taker_fees_json: feesToJson(fees),
          updated_at: now,
        })),
      )
      .execute();
    const row = await tx
      .selectFrom('swap_import_state')
      .select('revision')
      .where('id', '=', STATE_ID)
      .executeTakeFirstOrThrow();
    return Number(row.revision);
  });
}

/** The current import revision (0 when nothing was ever imported). */
export async function importRevision(db: DB): Promise<number> {
  const row = await db.selectFrom('swap_import_state').select('revision').where('id', '=', STATE_ID).executeTakeFirst();
  return row ? Number(row.revision) : 0;
}

/** Loads the imported set (read in one transaction so pools and fees belong to one import). */
export async function loadImportedPools(db: DB): Promise<{ revision: number; pools: Pool[]; takerFees: TakerFees }> {
  return db.transaction().execute(async (tx) => {
    const state = await tx.selectFrom('swap_import_state').selectAll().where('id', '=', STATE_ID).executeTakeFirst();
    if (!state) return { revision: 0, pools: [], takerFees: { defaultFee: 0n, pairs: new Map() } };
    const rows = await tx.selectFrom('swap_pools').select(['pool_id', 'pool_json']).execute();
    const pools: Pool[] = [];
    for (const r of rows) {
      const p = parsePool(JSON.parse(r.pool_json), `pool ${r.pool_id}`);
      if (p) pools.push(p);
    }
    const fees = JSON.parse(state.taker_fees_json) as { default_taker_fee: string; denom_pair_taker_fees: unknown };
    const defaultFee = parseDec(fees.default_taker_fee) ?? 0n;
    return {
      revision: Number(state.revision),
      pools,
      takerFees: { defaultFee, pairs: parsePairTakerFees(fees.denom_pair_taker_fees) },
    };
  });
}
