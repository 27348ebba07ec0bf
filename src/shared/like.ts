// SQL LIKE patterns built from user text: the text is matched literally, never as a pattern.

/** Escapes `\`, `%` and `_` (with `\`): use with `escape '\\'` after the LIKE. */
export const escapeLike = (v: string): string => v.replace(/[\\%_]/g, (c) => `\\${c}`);
