// The database as Kysely sees it: one interface per table, grouped by the capability that owns
// it. Portable column conventions (same on SQLite and PostgreSQL):
//   - timestamps are UNIX ms in `bigint` columns (read back as numbers);
//   - booleans are integers 0/1;
//   - JSON documents are `text` holding JSON;
//   - amounts and UintRange bounds that may exceed 2^53 are decimal strings in `text`.
//
// Each capability declares its own tables, next to their row types, by adding them to this interface
// (`declare module '../db/schema.ts' { interface Database extends ClaimTables {} }`): this file
// imports none of them, so no capability's types lead back here through the database handle.
// biome-ignore lint/suspicious/noEmptyInterface: the capabilities fill it in through declaration merging
export interface Database {}
