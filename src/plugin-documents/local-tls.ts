// A local certificate authority and a server certificate for a custom plugin endpoint on the same
// machine (`platform plugin-endpoint-cert`), made with node:crypto alone: no openssl needed.
// node:crypto makes keys and signatures but not certificates, so this file writes the X.509 DER
// itself (RFC 5280), only what a TLS server certificate needs: ECDSA P-256 keys, SHA-256
// signatures, basic constraints, key usage, extended key usage (server auth), subject alternative
// names (IP addresses and DNS names), and key identifiers. The CA's private key is used once, to sign,
// and never written anywhere: that CA can vouch for this one endpoint and nothing else.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

// ---- DER ---------------------------------------------------------------------------------------

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const tlv = (tag: number, ...content: Buffer[]): Buffer => {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
};
const seq = (...items: Buffer[]) => tlv(0x30, ...items);
const set = (...items: Buffer[]) => tlv(0x31, ...items);
const octets = (b: Buffer) => tlv(0x04, b);
const bitString = (b: Buffer) => tlv(0x03, Buffer.from([0]), b);
const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));
const explicit = (n: number, inner: Buffer) => tlv(0xa0 + n, inner);

/** A non-negative INTEGER from big-endian bytes (a leading 0 keeps it positive). */
function integer(bytes: Buffer): Buffer {
  let b = bytes;
  while (b.length > 1 && b[0] === 0 && b[1]! < 0x80) b = b.subarray(1);
  return tlv(0x02, b[0]! >= 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const chunk = [p & 0x7f];
    for (let v = p >> 7; v > 0; v >>= 7) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime until 2049, GeneralizedTime after (RFC 5280 §4.1.2.5). */
function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14); // YYYYMMDDHHMMSS
  return d.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`, 'ascii'))
    : tlv(0x18, Buffer.from(`${iso}Z`, 'ascii'));
}

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  subjectAltName: '2.5.29.17',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
};

const name = (cn: string) => seq(set(seq(oid(OID.commonName), utf8(cn))));
const extension = (id: string, critical: boolean, value: Buffer) =>
  seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));

/** The key usage BIT STRING: digitalSignature is bit 0, keyCertSign bit 5, cRLSign bit 6. */
function keyUsage(bits: number[]): Buffer {
  let byte = 0;
  for (const b of bits) byte |= 0x80 >> b;
  let unused = 0;
  while (unused < 7 && !(byte & (1 << unused))) unused++;
  return tlv(0x03, Buffer.from([unused, byte]));
}

function altNames(hosts: string[]): Buffer {
  return seq(
    ...hosts.map((h) => {
      const v = isIP(h);
      if (v === 4) return tlv(0x87, Buffer.from(h.split('.').map(Number)));
      if (v === 6) return tlv(0x87, ipv6Bytes(h));
      return tlv(0x82, Buffer.from(h, 'ascii'));
    }),
  );
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail] = address.split('::') as [string, string | undefined];
  const groups = (s: string | undefined) => (s ? s.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const h = groups(head);
  const t = groups(tail);
  const all = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill(0), ...t];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

const keyId = (spki: Buffer) => createHash('sha256').update(spki).digest().subarray(0, 20);

interface Issued {
  der: Buffer;
  pem: string;
}

function certificate(opts: {
  subject: string;
  issuer: string;
  subjectKey: KeyObject;
  issuerKey: KeyObject;
  issuerSpki: Buffer;
  notBefore: Date;
  notAfter: Date;
  extensions: Buffer[];
}): Issued {
  const spki = opts.subjectKey.export({ type: 'spki', format: 'der' });
  const algorithm = seq(oid(OID.ecdsaWithSha256));
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))), // v3
    integer(Buffer.concat([Buffer.from([0x01]), randomBytes(15)])),
    algorithm,
    name(opts.issuer),
    seq(time(opts.notBefore), time(opts.notAfter)),
    name(opts.subject),
    spki,
    tlv(
      0xa3,
      seq(
        ...opts.extensions,
        extension(OID.subjectKeyIdentifier, false, octets(keyId(spki))),
        extension(OID.authorityKeyIdentifier, false, seq(tlv(0x80, keyId(opts.issuerSpki)))),
      ),
    ),
  );
  const der = seq(tbs, algorithm, bitString(sign('sha256', tbs, opts.issuerKey)));
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n');
  return { der, pem: `-----BEGIN CERTIFICATE-----\n${b64.replace(/\n$/, '')}\n-----END CERTIFICATE-----\n` };
}

export interface LocalTls {
  /** The CA certificate (PEM): trust it for outbound calls with EGRESS_EXTRA_CA_FILE. */
  caPem: string;
  /** The endpoint's certificate (PEM), for the names in `hosts`. */
  certPem: string;
  /** The endpoint's private key (PKCS#8 PEM). */
  keyPem: string;
  notAfter: Date;
}

/** A fresh CA and a server certificate it signed for `hosts` (IP addresses and DNS names). */
export function createLocalTls(hosts: string[], days: number, now = new Date()): LocalTls {
  const ec = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ca = ec();
  const server = ec();
  const caSpki = ca.publicKey.export({ type: 'spki', format: 'der' });
  const notBefore = new Date(now.getTime() - 60_000); // a minute of clock skew
  const notAfter = new Date(now.getTime() + days * 86_400_000);
  const caCert = certificate({
    subject: `platform local plugin CA ${now.toISOString().slice(0, 10)}`,
    issuer: `platform local plugin CA ${now.toISOString().slice(0, 10)}`,
    subjectKey: ca.publicKey,
    issuerKey: ca.privateKey,
    issuerSpki: caSpki,
    notBefore,
    notAfter,
    extensions: [
      extension(OID.basicConstraints, true, seq(bool(true), integer(Buffer.from([0])))), // CA, no sub-CAs
      extension(OID.keyUsage, true, keyUsage([5, 6])),
    ],
  });
  const leaf = certificate({
    subject: hosts[0]!,
    issuer: `platform local plugin CA ${now.toISOString().slice(0, 10)}`,
    subjectKey: server.publicKey,
    issuerKey: ca.privateKey,
    issuerSpki: caSpki,
    notBefore,
    notAfter,
    extensions: [
      extension(OID.basicConstraints, true, seq()),
      extension(OID.keyUsage, true, keyUsage([0])),
      extension(OID.extKeyUsage, false, seq(oid(OID.serverAuth))),
      extension(OID.subjectAltName, false, altNames(hosts)),
    ],
  });
  return {
    caPem: caCert.pem,
    certPem: leaf.pem,
    keyPem: server.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    notAfter,
  };
}
