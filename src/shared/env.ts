// Reading configuration from environment variables: the error every bad value raises and the
// parsers of the common shapes. Each capability reads its own variables with these (its
// `<capability>/config.ts`); `config.ts` assembles the whole configuration at start.

/** The environment read (process.env, or a test's own). */
export type Env = Record<string, string | undefined>;

/** A bad configuration value: stops the process with a message naming the variable. */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`Invalid configuration: ${variable} ${message}`);
    this.variable = variable;
  }
}

/** The trimmed value; null when unset or blank. */
export function str(env: Env, name: string): string | null {
  const v = env[name];
  return v === undefined || v.trim() === '' ? null : v.trim();
}

export function int(env: Env, name: string, def: number, min: number, max: number): number {
  const v = str(env, name);
  if (v === null) return def;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max} (got "${v}")`);
  }
  return Number(v);
}

export function bool(env: Env, name: string, def: boolean): boolean {
  const v = str(env, name);
  if (v === null) return def;
  if (/^(1|true|yes|on)$/i.test(v)) return true;
  if (/^(0|false|no|off)$/i.test(v)) return false;
  throw new ConfigError(name, `must be true or false (got "${v}")`);
}

/** A URL with one of `protocols` (`'https:'`), without trailing slashes; null when unset. */
export function url(env: Env, name: string, protocols: string[]): string | null {
  const v = str(env, name);
  if (v === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(v);
  } catch {
    throw new ConfigError(name, `must be a URL (got "${v}")`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(
      name,
      `must use ${protocols.map((p) => p.replace(':', '')).join(' or ')} (got "${parsed.protocol.replace(':', '')}")`,
    );
  }
  return v.replace(/\/+$/, '');
}
