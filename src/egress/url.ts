// The checks an outbound URL passes before any name is resolved: usable when a URL is saved
// (synchronous, no network) and again at every call, before resolution.
import { carriedAddress, isThisMachine, parseAddress, refusalOfAddress, type Cidr } from './addresses.ts';

export interface UrlRules {
  /** The service's own PUBLIC_URL: its host is never called. */
  publicUrl?: string;
  /** Private ranges opened for tests and local development (EGRESS_ALLOW_PRIVATE_CIDRS). */
  allowed?: readonly Cidr[];
}

/** Names that are local by definition (RFC 6761, RFC 6762, RFC 8375) or never resolve publicly. */
const LOCAL_SUFFIXES = ['localhost', 'local', 'internal', 'localdomain', 'home.arpa', 'invalid', 'onion'];

export interface ParsedTarget {
  url: URL;
  /** Host name without brackets or a trailing dot, lower case. */
  host: string;
  /** Set when the host is an address literal. */
  literal: string | null;
}

/**
 * Parses and checks a URL without resolving it. Returns the reason it is refused, or the parsed
 * target. WHATWG parsing already turns decimal, octal, hex and short IPv4 forms into a dotted
 * quad and refuses zone ids, so the address checks see one canonical form.
 */
export function parseTarget(input: string, rules: UrlRules = {}): ParsedTarget | string {
  if (typeof input !== 'string' || input.trim() === '') return 'the URL is empty';
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return `"${input}" is not a valid absolute URL`;
  }
  if (url.protocol !== 'https:') return `only https URLs may be called (got ${url.protocol.replace(':', '')})`;
  if (url.username !== '' || url.password !== '') return 'URLs with credentials (user:password@) may not be called';
  const bracketed = url.hostname.startsWith('[');
  const host = (bracketed ? url.hostname.slice(1, -1) : url.hostname).toLowerCase().replace(/\.$/, '');
  if (host === '') return 'the URL has no host';
  const allowed = rules.allowed ?? [];
  const literal = bracketed || /^[\d.]+$/.test(host) ? host : null;
  if (literal !== null) {
    const refusal = refusalOfAddress(literal, allowed);
    if (refusal) return `${refusal}; only public addresses may be called`;
  } else {
    if (!host.includes('.') && host !== 'localhost') return `"${host}" is a single-label name, not a public host name`;
    const suffix = LOCAL_SUFFIXES.find((s) => host === s || host.endsWith(`.${s}`));
    // localhost names may be used only where the operator opened the loopback range (tests)
    if (suffix && !(suffix === 'localhost' && refusalOfAddress('127.0.0.1', allowed) === null)) {
      return `"${host}" is a local name (.${suffix}), not a public host name`;
    }
  }
  const own = ownOf(rules);
  if (own) {
    const port = effectivePort(url);
    const self =
      own.port === null
        ? own.host === host
        : own.port === port && (literal !== null ? sameMachine(literal, own) : own.loopback && isLocalhostName(host));
    if (self) return `${host} is this service's own host (PUBLIC_URL); it may not call itself`;
  }
  return { url, host, literal };
}

/**
 * After resolution: the reason a resolved address is the service itself (an opened address of
 * PUBLIC_URL's at its port), or null. Names other than PUBLIC_URL's are judged here, by address.
 */
export function selfAddressRefusal(target: ParsedTarget, address: string, rules: UrlRules): string | null {
  const own = ownOf(rules);
  // own.port is null unless PUBLIC_URL's host is an opened address: then no port matches it
  if (!own || own.port !== effectivePort(target.url) || !sameMachine(address, own)) return null;
  return `${target.host} resolves to ${address}, this service's own address (PUBLIC_URL); it may not call itself`;
}

// a client's rules never change: PUBLIC_URL is parsed once per rules object, not at every call
const ownHosts = new WeakMap<UrlRules, OwnHost | null>();
function ownOf(rules: UrlRules): OwnHost | null {
  let own = ownHosts.get(rules);
  if (own === undefined) ownHosts.set(rules, (own = ownHost(rules.publicUrl, rules.allowed ?? [])));
  return own;
}

const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * Whether an address reaches the machine of an opened PUBLIC_URL address: itself in any form that
 * carries it (IPv4-mapped, NAT64, 6to4), or, when that is loopback, anything that stays on this
 * machine (every loopback address, 0.0.0.0/8 and ::, in those forms too).
 */
function sameMachine(text: string, own: OwnHost): boolean {
  const address = carriedAddress(text);
  if (address === null) return false;
  if (address === own.address) return true;
  return own.loopback && isThisMachine(address);
}

/** The synchronous check for save time: the reason a URL would be refused, or null. */
export function checkUrlSyntax(input: string, rules: UrlRules = {}): string | null {
  const target = parseTarget(input, rules);
  return typeof target === 'string' ? target : null;
}

const effectivePort = (url: URL) => url.port || (url.protocol === 'https:' ? '443' : '80');

interface OwnHost {
  host: string;
  /** Set when the host is an address the operator opened: only this port is the service. */
  port: string | null;
  /** The host as an address (localhost as 127.0.0.1), or null for a name. */
  address: string | null;
  /** The host is a loopback address: every loopback address at `port` reaches the service. */
  loopback: boolean;
}

/**
 * PUBLIC_URL's host. When that host is an address the operator opened (the loopback default of
 * local development and tests), the service and the endpoints it calls share the address, so
 * only the service's port there is the service itself.
 */
function ownHost(publicUrl: string | undefined, allowed: readonly Cidr[]): OwnHost | null {
  if (!publicUrl) return null;
  let url: URL;
  try {
    url = new URL(publicUrl);
  } catch {
    return null;
  }
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
  const address = carriedAddress(host === 'localhost' ? '127.0.0.1' : host);
  // a name is never "opened": refusalOfAddress refuses it as not an address, with or without ranges
  const opened = address !== null && refusalOfAddress(address) !== null && refusalOfAddress(address, allowed) === null;
  return {
    host,
    port: opened ? effectivePort(url) : null,
    address,
    loopback: address !== null && parseAddress(address)?.range() === 'loopback',
  };
}
