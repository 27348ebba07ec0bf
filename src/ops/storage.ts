// The ops capability's table: the value sealed with SECRET_KEY that secret-key-check.ts opens at
// every start.

export interface SecretKeyCheckTable {
  /** Always 1: the table holds one row. */
  id: number;
  /** A constant sealed with SECRET_KEY. */
  sealed: string;
}

export interface OpsTables {
  secret_key_check: SecretKeyCheckTable;
}

// Its table joins the database's type (db/schema.ts).
declare module '../db/schema.ts' {
  interface Database extends OpsTables {}
}
