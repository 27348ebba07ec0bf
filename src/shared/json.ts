// A JSON object as parsed from a request or a stored column: keys to values not yet checked.
export type JsonObject = Record<string, unknown>;
