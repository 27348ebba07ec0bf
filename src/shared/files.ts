// Files the service keeps at rest (the SQLite database, generated secrets) are for its own user
// only: the data directory is created 700 and the files 600, whatever the umask.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';

/** Creates `dir` (and missing parents) readable by the owner only; an existing directory is left as the operator set it. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/**
 * Makes sure `path` exists with mode 600 before a library opens it: a new file is created so, and
 * an existing one readable by group or others (created by an older version) is tightened.
 */
export function ensurePrivateFile(path: string): void {
  if (!existsSync(path)) {
    closeSync(openSync(path, 'a', 0o600));
    return;
  }
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
}
