// Which IP addresses an outbound call may reach: only public unicast ones. ipaddr.js names the
// well-known ranges; the explicit table below does not depend on its version and adds what it
// calls plain "unicast" (IPv4-compatible IPv6, the 6to4 relay, deprecated site-local, …). IPv6
// forms that carry an IPv4 address (mapped, NAT64, 6to4) are judged by the address they carry.
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Address, number];

const cidr = (text: string): Cidr => ipaddr.parseCIDR(text);

/** Non-public IPv4 ranges, each with the words a refusal uses. */
const V4_DENIED: Array<[Cidr, string]> = [
  [cidr('0.0.0.0/8'), 'an unspecified ("this network") address'],
  [cidr('10.0.0.0/8'), 'a private address (RFC 1918)'],
  [cidr('100.64.0.0/10'), 'a carrier-grade NAT address (RFC 6598)'],
  [cidr('127.0.0.0/8'), 'a loopback address'],
  [cidr('169.254.0.0/16'), 'a link-local address (this range holds the 169.254.169.254 cloud metadata service)'],
  [cidr('172.16.0.0/12'), 'a private address (RFC 1918)'],
  [cidr('192.0.0.0/24'), 'an IETF protocol assignment address (RFC 6890)'],
  [cidr('192.0.2.0/24'), 'a documentation address (RFC 5737)'],
  [cidr('192.88.99.0/24'), 'a 6to4 relay anycast address (RFC 7526)'],
  [cidr('192.168.0.0/16'), 'a private address (RFC 1918)'],
  [cidr('198.18.0.0/15'), 'a benchmarking address (RFC 2544)'],
  [cidr('198.51.100.0/24'), 'a documentation address (RFC 5737)'],
  [cidr('203.0.113.0/24'), 'a documentation address (RFC 5737)'],
  [cidr('224.0.0.0/4'), 'a multicast address'],
  [cidr('255.255.255.255/32'), 'the broadcast address'],
  [cidr('240.0.0.0/4'), 'a reserved address'],
];

/** Non-public IPv6 ranges inside or beside global unicast; anything outside 2000::/3 is refused too. */
const V6_DENIED: Array<[Cidr, string]> = [
  [cidr('::/128'), 'the unspecified address'],
  [cidr('::1/128'), 'a loopback address'],
  [cidr('::/96'), 'an IPv4-compatible IPv6 address (deprecated, RFC 4291)'],
  [cidr('64:ff9b:1::/48'), 'a local-use NAT64 address (RFC 8215)'],
  [cidr('100::/64'), 'a discard-only address (RFC 6666)'],
  // 2001::/23 holds Teredo (2001::/32, a tunnel to an arbitrary IPv4 host), benchmarking and ORCHID
  [cidr('2001::/23'), 'an IETF protocol assignment address (Teredo, benchmarking, ORCHID; RFC 6890)'],
  [cidr('2001:db8::/32'), 'a documentation address (RFC 3849)'],
  [cidr('3fff::/20'), 'a documentation address (RFC 9637)'],
  [cidr('5f00::/16'), 'a segment-routing address (RFC 9602)'],
  [cidr('fc00::/7'), 'a unique local address (RFC 4193)'],
  [cidr('fe80::/10'), 'a link-local address'],
  [cidr('fec0::/10'), 'a site-local address (deprecated)'],
  [cidr('ff00::/8'), 'a multicast address'],
];

const GLOBAL_UNICAST_V6 = cidr('2000::/3');
const NAT64 = cidr('64:ff9b::/96');
const SIX_TO_FOUR = cidr('2002::/16');

/** ipaddr.js range names that are public. */
const PUBLIC_RANGES = new Set(['unicast']);

function inRange(address: Address, [base, bits]: Cidr): boolean {
  return address.kind() === base.kind() && address.match(base, bits);
}

/** Parses an address literal (no brackets, no zone id); null when it is not one. */
export function parseAddress(text: string): Address | null {
  if (!ipaddr.isValid(text) || text.includes('%')) return null;
  // ipaddr.js accepts non-canonical IPv4 ("0x7f.1", "127.1"); only the dotted quad counts as an
  // address here, the rest never reaches us because URLs normalise them first.
  if (!text.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(text)) return null;
  return ipaddr.parse(text);
}

/** An address literal in one spelling (an IPv4-mapped IPv6 address as its IPv4), or null. */
export function canonicalAddress(text: string): string | null {
  const address = parseAddress(text);
  if (!address) return null;
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress())
    return (address as ipaddr.IPv6).toIPv4Address().toString();
  return address.toString();
}

/**
 * The IPv4 address an IPv6 form carries (IPv4-mapped, NAT64, 6to4), else the address itself, in
 * one spelling; null when the text is not an address. The service's self-check compares these:
 * where such a form reaches anything, it reaches the IPv4 host it carries.
 */
export function carriedAddress(text: string): string | null {
  const address = parseAddress(text);
  if (!address) return null;
  if (address.kind() === 'ipv4') return address.toString();
  return (embeddedV4(address as ipaddr.IPv6)?.address ?? address).toString();
}

/**
 * Whether a connection to the address stays on this machine: loopback (127.0.0.0/8, ::1) or "this
 * host" (0.0.0.0/8, ::), which the kernel connects to loopback. Forms carrying IPv4 are unwrapped.
 */
export function isThisMachine(text: string): boolean {
  const carried = carriedAddress(text);
  const range = carried === null ? null : parseAddress(carried)!.range();
  return range === 'loopback' || range === 'unspecified';
}

/**
 * Why an address may not be called, or null when it is public. `allowed` lists ranges the
 * operator opened for tests and local development (EGRESS_ALLOW_PRIVATE_CIDRS).
 */
export function refusalOfAddress(text: string, allowed: readonly Cidr[] = []): string | null {
  const address = parseAddress(text);
  if (!address) return `"${text}" is not an IP address`;
  if (allowed.some((range) => inRange(address, range))) return null;
  if (address.kind() === 'ipv4') return refusalOfV4(address as ipaddr.IPv4, text);
  const v6 = address as ipaddr.IPv6;
  const embedded = embeddedV4(v6);
  if (embedded) {
    const inner = allowed.some((range) => inRange(embedded.address, range))
      ? null
      : refusalOfV4(embedded.address, embedded.address.toString());
    return inner === null
      ? null
      : `${text} is ${embedded.form} carrying ${embedded.address.toString()}, which ${inner.replace(/^\S+ is /, 'is ')}`;
  }
  for (const [range, words] of V6_DENIED) if (inRange(v6, range)) return `${text} is ${words}`;
  if (!inRange(v6, GLOBAL_UNICAST_V6)) return `${text} is a reserved address (outside global unicast 2000::/3)`;
  const name = v6.range();
  if (!PUBLIC_RANGES.has(name)) return `${text} is not a public address (${name})`;
  return null;
}

function refusalOfV4(address: ipaddr.IPv4, text: string): string | null {
  for (const [range, words] of V4_DENIED) if (inRange(address, range)) return `${text} is ${words}`;
  const name = address.range();
  if (!PUBLIC_RANGES.has(name)) return `${text} is not a public address (${name})`;
  return null;
}

/** The IPv4 address inside an IPv4-mapped, NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address. */
function embeddedV4(address: ipaddr.IPv6): { address: ipaddr.IPv4; form: string } | null {
  const parts = address.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  if (address.isIPv4MappedAddress()) return { address: address.toIPv4Address(), form: 'an IPv4-mapped IPv6 address' };
  if (inRange(address, NAT64)) return { address: v4(parts[6]!, parts[7]!), form: 'a NAT64 address' };
  if (inRange(address, SIX_TO_FOUR)) return { address: v4(parts[1]!, parts[2]!), form: 'a 6to4 address' };
  return null;
}

/** Parses EGRESS_ALLOW_PRIVATE_CIDRS entries; throws naming the bad entry. */
export function parseCidrList(list: readonly string[]): Cidr[] {
  return list.map((entry) => {
    try {
      return ipaddr.parseCIDR(entry);
    } catch {
      throw new Error(`"${entry}" is not a CIDR range (like 127.0.0.1/32 or ::1/128)`);
    }
  });
}

export type { Cidr };
