// What a queued attempt carries to its execution.
import type { Keyring } from '../shared/crypto.ts';
import type { AttemptSession } from '../plugins/types.ts';

/** What a queued attempt carries to its execution (stored encrypted: inputs hold passwords and codes). */
export interface AttemptPayload {
  inputs: Record<string, unknown>;
  expectedVersion: number;
  specificInstanceIds?: string[];
  session: AttemptSession | null;
  /** The claimer's locale when not `en` (custom plugin calls carry it). */
  locale?: string;
  replay: Record<string, unknown>;
}

/**
 * Inputs (passwords, codes) and replayed plugin results that carry data (a custom plugin's claim
 * token) are encrypted; a payload without them (at most bare pass markers) is not secret.
 */
export function encodePayload(keyring: Keyring, p: AttemptPayload): string {
  const json = JSON.stringify(p);
  const secret =
    Object.keys(p.inputs).length > 0 || Object.values(p.replay).some((v) => typeof v === 'object' && v !== null);
  return secret ? keyring.encrypt(json) : `j:${json}`;
}

export function decodePayload(keyring: Keyring, stored: string): AttemptPayload {
  return JSON.parse(stored.startsWith('j:') ? stored.slice(2) : keyring.decrypt(stored)) as AttemptPayload;
}
