// The egress rules against a corpus of hostile URLs: each is refused with a reason that names
// what is wrong, and public targets pass. Names resolve through an injected resolver, so nothing
// here leaves the machine (no connection is made at all: checkUrl stops before connecting).
// test-run: once (no database: pure code; scripts/test.mjs)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Egress, EgressError, checkUrlSyntax } from '../../src/egress/index.ts';

const PUBLIC_V4 = '93.184.216.34';
const PUBLIC_V6 = '2606:4700:4700::1111';

/** Test DNS: each name has fixed answers; a list of lists answers them in turn (rebinding). */
function resolver(table: Record<string, string[] | string[][]>) {
  const calls: string[] = [];
  const turns = new Map<string, number>();
  const resolve = async (host: string) => {
    calls.push(host);
    const entry = table[host];
    if (!entry) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    if (Array.isArray(entry[0])) {
      const turn = turns.get(host) ?? 0;
      turns.set(host, turn + 1);
      const answers = entry as string[][];
      return answers[Math.min(turn, answers.length - 1)]!;
    }
    return entry as string[];
  };
  return { resolve, calls };
}

const dns = resolver({
  'plugin.example.com': [PUBLIC_V4],
  'v6plugin.example.com': [PUBLIC_V6],
  'internal.example.com': ['10.1.2.3'],
  'evil.example.com': ['127.0.0.1'],
  'mixed.example.com': [PUBLIC_V4, '10.0.0.5'],
  'mixed6.example.com': [PUBLIC_V6, 'fd00::5'],
  'loop6.example.com': ['::1'],
  'metadata.example.com': ['169.254.169.254'],
  'nat64meta.example.com': ['64:ff9b::a9fe:a9fe'],
  'mapped.example.com': ['::ffff:192.168.0.1'],
  'cgnat.example.com': ['100.100.100.100'],
  '127.0.0.1.nip.io': ['127.0.0.1'],
  'zero.example.com': ['0.0.0.0'],
  // answers that are not one canonical address (a custom resolver, a broken one) are refused
  'zoned.example.com': [`${PUBLIC_V6}%eth0`],
  'short.example.com': ['8.8.8'],
  'garbage.example.com': ['not-an-address'],
});

const egress = new Egress({ publicUrl: 'https://platform.example.com', resolve: dns.resolve });

/** [url, what the reason must say] */
const HOSTILE: Array<[string, RegExp]> = [
  // IPv4 literals in every spelling the URL parser accepts
  ['https://127.0.0.1/', /127\.0\.0\.1 is a loopback address/],
  ['https://2130706433/', /127\.0\.0\.1 is a loopback address/],
  ['https://0x7f000001/', /127\.0\.0\.1 is a loopback address/],
  ['https://0x7f.0.0.1/', /127\.0\.0\.1 is a loopback address/],
  ['https://0177.0.0.1/', /127\.0\.0\.1 is a loopback address/],
  ['https://017700000001/', /127\.0\.0\.1 is a loopback address/],
  ['https://127.1/', /127\.0\.0\.1 is a loopback address/],
  ['https://127.0.1/', /127\.0\.0\.1 is a loopback address/],
  ['https://127.0.0.1./', /127\.0\.0\.1 is a loopback address/],
  ['https://127.255.255.254:8443/x', /127\.255\.255\.254 is a loopback address/],
  ['https://%31%32%37.0.0.1/', /127\.0\.0\.1 is a loopback address/],
  ['https://１２７.０.０.１/', /127\.0\.0\.1 is a loopback address/],
  ['https:\\\\127.0.0.1/', /127\.0\.0\.1 is a loopback address/],
  ['https://0/', /0\.0\.0\.0 is an unspecified/],
  ['https://0.0.0.0/', /0\.0\.0\.0 is an unspecified/],
  ['https://10.0.0.1/', /10\.0\.0\.1 is a private address \(RFC 1918\)/],
  ['https://172.16.5.4/', /172\.16\.5\.4 is a private address/],
  ['https://172.31.255.255/', /172\.31\.255\.255 is a private address/],
  ['https://192.168.1.1/', /192\.168\.1\.1 is a private address/],
  ['https://0300.0250.0001.0001/', /192\.168\.1\.1 is a private address/],
  ['https://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local address .*metadata/],
  ['https://2852039166/', /169\.254\.169\.254 is a link-local address/],
  ['https://100.64.0.1/', /100\.64\.0\.1 is a carrier-grade NAT address/],
  ['https://192.0.0.8/', /192\.0\.0\.8 is an IETF protocol assignment/],
  ['https://192.0.2.1/', /192\.0\.2\.1 is a documentation address/],
  ['https://198.51.100.7/', /198\.51\.100\.7 is a documentation address/],
  ['https://203.0.113.9/', /203\.0\.113\.9 is a documentation address/],
  ['https://198.18.0.1/', /198\.18\.0\.1 is a benchmarking address/],
  ['https://192.88.99.1/', /6to4 relay/],
  ['https://224.0.0.1/', /224\.0\.0\.1 is a multicast address/],
  ['https://239.255.255.250/', /multicast/],
  ['https://240.0.0.1/', /240\.0\.0\.1 is a reserved address/],
  ['https://255.255.255.255/', /broadcast/],
  // IPv6 literals, bracketed
  ['https://[::1]/', /::1 is a loopback address/],
  ['https://[0:0:0:0:0:0:0:1]/', /::1 is a loopback address/],
  ['https://[::]/', /:: is the unspecified address/],
  ['https://[::ffff:127.0.0.1]/', /IPv4-mapped IPv6 address carrying 127\.0\.0\.1, which is a loopback address/],
  ['https://[::ffff:a9fe:a9fe]/', /IPv4-mapped IPv6 address carrying 169\.254\.169\.254, which is a link-local/],
  ['https://[::ffff:10.0.0.1]:8443/', /carrying 10\.0\.0\.1, which is a private address/],
  ['https://[::127.0.0.1]/', /IPv4-compatible IPv6 address/],
  ['https://[64:ff9b::10.0.0.1]/', /NAT64 address carrying 10\.0\.0\.1, which is a private address/],
  ['https://[64:ff9b::7f00:1]/', /NAT64 address carrying 127\.0\.0\.1/],
  ['https://[64:ff9b:1::a00:1]/', /local-use NAT64 address/],
  ['https://[2002:7f00:1::]/', /6to4 address carrying 127\.0\.0\.1, which is a loopback address/],
  ['https://[2002:c0a8:101::1]/', /6to4 address carrying 192\.168\.1\.1, which is a private address/],
  ['https://[2002:a9fe:a9fe::1]/', /6to4 address carrying 169\.254\.169\.254/],
  ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', /Teredo/],
  ['https://[fe80::1]/', /fe80::1 is a link-local address/],
  ['https://[fe80::1%25eth0]/', /is not a valid absolute URL/],
  ['https://[fe80::1%eth0]/', /is not a valid absolute URL/],
  ['https://[fc00::1]/', /fc00::1 is a unique local address/],
  ['https://[fd12:3456::1]/', /unique local address/],
  ['https://[fec0::1]/', /site-local address/],
  ['https://[ff02::1]/', /ff02::1 is a multicast address/],
  ['https://[2001:db8::1]/', /2001:db8::1 is a documentation address/],
  ['https://[3fff::1]/', /documentation address/],
  ['https://[100::1]/', /discard-only address/],
  ['https://[4000::1]/', /reserved address \(outside global unicast/],
  ['https://[5f00::1]/', /5f00::1 is a segment-routing address/],
  // special-purpose IPv4 ranges the table leaves to ipaddr.js's names (AS112 and AMT anycast)
  ['https://192.31.196.1/', /192\.31\.196\.1 is not a public address \(as112\)/],
  ['https://192.175.48.6/', /is not a public address \(as112\)/],
  ['https://192.52.193.1/', /192\.52\.193\.1 is not a public address \(amt\)/],
  // localhost and local names, any case, trailing dots
  ['https://localhost/', /"localhost" is a local name/],
  ['https://LOCALHOST./', /"localhost" is a local name/],
  ['https://localhost:443/', /"localhost" is a local name/],
  ['https://api.localhost/', /"api\.localhost" is a local name \(\.localhost\)/],
  ['https://printer.local/', /local name \(\.local\)/],
  ['https://metadata.google.internal/', /local name \(\.internal\)/],
  ['https://router.home.arpa/', /local name \(\.home\.arpa\)/],
  ['https://db.localdomain/', /local name \(\.localdomain\)/],
  ['https://x.invalid/', /local name \(\.invalid\)/],
  ['https://hidden.onion/', /local name \(\.onion\)/],
  ['https://./', /the URL has no host/],
  ['https://intranet/', /"intranet" is a single-label name/],
  ['https://intranet./', /"intranet" is a single-label name/],
  // names whose answers are not public
  ['https://internal.example.com/', /internal\.example\.com resolves to 10\.1\.2\.3 is a private address/],
  ['https://evil.example.com/hook', /evil\.example\.com resolves to 127\.0\.0\.1 is a loopback address/],
  ['https://EVIL.example.com./hook', /evil\.example\.com resolves to 127\.0\.0\.1/],
  ['https://mixed.example.com/', /resolves to 10\.0\.0\.5 is a private address/],
  ['https://mixed6.example.com/', /resolves to fd00::5 is a unique local address/],
  ['https://loop6.example.com/', /resolves to ::1 is a loopback address/],
  ['https://metadata.example.com/', /resolves to 169\.254\.169\.254 is a link-local address/],
  ['https://nat64meta.example.com/', /NAT64 address carrying 169\.254\.169\.254/],
  ['https://mapped.example.com/', /IPv4-mapped IPv6 address carrying 192\.168\.0\.1/],
  ['https://cgnat.example.com/', /carrier-grade NAT/],
  ['https://zero.example.com/', /0\.0\.0\.0 is an unspecified/],
  ['https://127.0.0.1.nip.io/', /resolves to 127\.0\.0\.1 is a loopback address/],
  ['https://zoned.example.com/', /resolves to "2606:4700:4700::1111%eth0" is not an IP address/],
  ['https://short.example.com/', /resolves to "8\.8\.8" is not an IP address/],
  ['https://garbage.example.com/', /resolves to "not-an-address" is not an IP address/],
  // userinfo tricks
  [`https://user:pass@${PUBLIC_V4}/`, /credentials/],
  ['https://plugin.example.com@127.0.0.1/', /credentials/],
  [`https://${PUBLIC_V4}@localhost/`, /credentials/],
  ['https://plugin.example.com:@127.0.0.1/', /127\.0\.0\.1 is a loopback address|credentials/],
  ['https://evil.com%40127.0.0.1/', /is not a valid absolute URL/],
  [`https://:secret@${PUBLIC_V4}/`, /credentials/],
  // other schemes and junk
  [`http://${PUBLIC_V4}/`, /only https URLs may be called \(got http\)/],
  ['HTTP://plugin.example.com/', /only https URLs may be called \(got http\)/],
  [`ftp://${PUBLIC_V4}/`, /only https URLs may be called \(got ftp\)/],
  ['file:///etc/passwd', /only https URLs may be called \(got file\)/],
  ['gopher://127.0.0.1:6379/_INFO', /only https URLs may be called \(got gopher\)/],
  ['javascript:alert(1)', /only https URLs may be called \(got javascript\)/],
  ['data:text/plain,hi', /only https URLs may be called \(got data\)/],
  ['', /the URL is empty/],
  ['  \t', /the URL is empty/],
  ['not a url', /is not a valid absolute URL/],
  ['//plugin.example.com/hook', /is not a valid absolute URL/],
  // the service itself
  ['https://platform.example.com/api/v0/claims', /this service's own host \(PUBLIC_URL\)/],
  ['https://PLATFORM.example.com.:8443/x', /this service's own host/],
];

describe('egress: hostile URL corpus', () => {
  test(`the corpus holds at least 50 URLs (${HOSTILE.length})`, () => {
    assert.ok(HOSTILE.length >= 50);
  });

  for (const [url, reason] of HOSTILE) {
    test(`refuses ${JSON.stringify(url)}`, async () => {
      await assert.rejects(egress.checkUrl(url), (err: unknown) => {
        assert.ok(err instanceof EgressError, String(err));
        assert.equal(err.kind, 'refused');
        assert.match(err.reason, reason);
        return true;
      });
      // a refusal that needs no DNS is already given by the synchronous save-time check
      const syntax = egress.checkUrlSyntax(url);
      if (!/\.example\.com|\.nip\.io/.test(url) || /@|platform\.example/i.test(url))
        assert.match(syntax ?? '(passed)', reason);
    });
  }

  test('public targets pass, pinned to the address that was checked', async () => {
    assert.deepEqual(await addressOf('https://plugin.example.com/hook'), PUBLIC_V4);
    assert.deepEqual(await addressOf('https://PLUGIN.example.com./hook?x=1'), PUBLIC_V4);
    assert.deepEqual(await addressOf(`https://${PUBLIC_V4}:8443/`), PUBLIC_V4);
    assert.deepEqual(await addressOf('https://v6plugin.example.com/'), PUBLIC_V6);
    assert.deepEqual(await addressOf(`https://[${PUBLIC_V6}]/`), PUBLIC_V6);
    // NAT64 and mapped forms of a public IPv4 address are public (IPv6-only networks use them)
    assert.deepEqual(await addressOf('https://[64:ff9b::5db8:d822]/'), '64:ff9b::5db8:d822');
    assert.equal(checkUrlSyntax('https://plugin.example.com/hook'), null);
    // the module's own check, without an Egress or any rules, refuses the same
    assert.match(checkUrlSyntax('https://127.0.0.1/') ?? '(passed)', /127\.0\.0\.1 is a loopback address/);
    assert.match(checkUrlSyntax(42 as never) ?? '(passed)', /the URL is empty/);
  });

  test("PUBLIC_URL: the service's own host is refused, on any port; on an opened address only its own port", async () => {
    const own = (publicUrl: string, url: string, allowPrivateCidrs: string[] = []) =>
      new Egress({ publicUrl, allowPrivateCidrs, resolve: dns.resolve }).checkUrlSyntax(url);
    const self = /this service's own host \(PUBLIC_URL\); it may not call itself/;
    // a public host is the service on every port
    assert.match(own(`https://${PUBLIC_V4}`, `https://${PUBLIC_V4}:8443/x`) ?? '(passed)', self);
    assert.match(own(`https://[${PUBLIC_V6}]:3000`, `https://[${PUBLIC_V6}]/x`) ?? '(passed)', self);
    assert.match(own('https://platform.example.com.', 'https://platform.example.com/x') ?? '(passed)', self);
    assert.equal(own('https://platform.example.com', 'https://plugin.example.com/x'), null);
    assert.match(
      own('https://platform.example.com', 'https://platform.example.com:8443/x', ['127.0.0.1/32']) ?? '(passed)',
      self,
    );
    // an address the operator opened (local development, tests) is shared with the endpoints it
    // serves: only the service's own port is refused, 443 / 80 when PUBLIC_URL names none
    const loop = ['127.0.0.1/32'];
    assert.match(own('http://127.0.0.1:3000', 'https://127.0.0.1:3000/x', loop) ?? '(passed)', self);
    assert.equal(own('http://127.0.0.1:3000', 'https://127.0.0.1:8443/x', loop), null);
    assert.match(own('https://127.0.0.1', 'https://127.0.0.1/x', loop) ?? '(passed)', self);
    assert.match(own('https://127.0.0.1', 'https://127.0.0.1:443/x', loop) ?? '(passed)', self);
    assert.equal(own('https://127.0.0.1', 'https://127.0.0.1:80/x', loop), null);
    assert.match(own('http://127.0.0.1', 'https://127.0.0.1:80/x', loop) ?? '(passed)', self);
    assert.equal(own('http://127.0.0.1', 'https://127.0.0.1/x', loop), null);
    assert.match(own('http://127.0.0.1:443', 'https://127.0.0.1/x', loop) ?? '(passed)', self);
    assert.equal(own('http://127.0.0.1:3000', 'https://plugin.example.com:3000/x', loop), null);
    assert.match(own('http://localhost:3000', 'https://localhost:3000/x', loop) ?? '(passed)', self);
    assert.equal(own('http://localhost:3000', 'https://localhost:8443/x', loop), null);
    assert.match(own('http://[::1]:3000', 'https://[::1]:3000/x', ['::1/128']) ?? '(passed)', self);
    assert.equal(own('http://[::1]:3000', 'https://[::1]:8443/x', ['::1/128']), null);
    // on loopback every form of a loopback address at the service's port is the service: another
    // name for it, an IPv4-mapped form, ::1, another address of 127/8
    assert.match(own('http://127.0.0.1:3000', 'https://localhost:3000/x', loop) ?? '(passed)', self);
    assert.match(own('http://127.0.0.1:3000', 'https://api.localhost:3000/x', loop) ?? '(passed)', self);
    assert.match(own('http://127.0.0.1:3000', 'https://[::ffff:127.0.0.1]:3000/x', loop) ?? '(passed)', self);
    assert.match(own('http://127.0.0.1:3000', 'https://[::1]:3000/x', ['127.0.0.1/32', '::1/128']) ?? '(passed)', self);
    assert.match(own('http://localhost:3000', 'https://127.0.0.2:3000/x', ['127.0.0.0/8']) ?? '(passed)', self);
    assert.equal(own('http://127.0.0.1:3000', 'https://localhost:8443/x', loop), null);
    assert.equal(own('http://127.0.0.1:3000', 'https://[::ffff:127.0.0.1]:8443/x', loop), null);
    // an opened address that is not loopback is only itself: not its neighbours, not loopback
    const both = ['10.0.0.0/8', '127.0.0.1/32'];
    assert.match(own('https://10.0.0.5:3000', 'https://[::ffff:10.0.0.5]:3000/x', both) ?? '(passed)', self);
    assert.equal(own('https://10.0.0.5:3000', 'https://10.0.0.6:3000/x', both), null);
    assert.equal(own('https://10.0.0.5:3000', 'https://127.0.0.1:3000/x', both), null);
    assert.equal(own('https://10.0.0.5:3000', 'https://localhost:3000/x', both), null);
    assert.equal(own('http://127.0.0.1:3000', 'https://10.0.0.5:3000/x', both), null);
    // the same holds for an opened private range; unopened, the address is refused anyway
    assert.match(own('https://10.0.0.5:3000', 'https://10.0.0.5:3000/x', ['10.0.0.0/8']) ?? '(passed)', self);
    assert.equal(own('https://10.0.0.5:3000', 'https://10.0.0.5:8443/x', ['10.0.0.0/8']), null);
    assert.match(
      own('https://10.0.0.5:3000', 'https://10.0.0.5:8443/x') ?? '(passed)',
      /10\.0\.0\.5 is a private address/,
    );
    // a PUBLIC_URL that is not a URL refuses nothing by itself
    assert.equal(own('not a url', 'https://plugin.example.com/x'), null);
  });

  test('on loopback, "this host" (0.0.0.0/8, ::) and the NAT64 / 6to4 forms of loopback are the service too, when opened', async () => {
    const own = (url: string, allowPrivateCidrs: string[]) =>
      new Egress({ publicUrl: 'http://127.0.0.1:3000', allowPrivateCidrs, resolve: dns.resolve }).checkUrlSyntax(url);
    const self = /this service's own host \(PUBLIC_URL\); it may not call itself$/;
    // a connection to 0.0.0.0 (or ::) goes to this machine's loopback
    assert.match(own('https://0.0.0.0:3000/x', ['0.0.0.0/8', '127.0.0.1/32']) ?? '(passed)', self);
    assert.match(own('https://0.1.2.3:3000/x', ['0.0.0.0/8', '127.0.0.1/32']) ?? '(passed)', self);
    assert.match(own('https://[::]:3000/x', ['::/128', '127.0.0.1/32']) ?? '(passed)', self);
    assert.match(own('https://[::ffff:0.0.0.0]:3000/x', ['0.0.0.0/8', '127.0.0.1/32']) ?? '(passed)', self);
    // IPv6 forms carrying a loopback address: NAT64 (RFC 6052) and 6to4 (RFC 3056)
    assert.match(own('https://[64:ff9b::7f00:1]:3000/x', ['127.0.0.0/8']) ?? '(passed)', self);
    assert.match(own('https://[64:ff9b::127.0.0.2]:3000/x', ['127.0.0.0/8']) ?? '(passed)', self);
    assert.match(own('https://[2002:7f00:1::]:3000/x', ['127.0.0.0/8']) ?? '(passed)', self);
    assert.match(own('https://[2002:7f00:2::1]:3000/x', ['127.0.0.0/8']) ?? '(passed)', self);
    // at another port each is an endpoint like any opened address
    assert.equal(own('https://0.0.0.0:8443/x', ['0.0.0.0/8', '127.0.0.1/32']), null);
    assert.equal(own('https://[64:ff9b::7f00:1]:8443/x', ['127.0.0.0/8']), null);
    assert.equal(own('https://[2002:7f00:1::]:8443/x', ['127.0.0.0/8']), null);
    // the same forms of an opened address that is not loopback are that address
    const notLoop = new Egress({ publicUrl: 'https://10.0.0.5:3000', allowPrivateCidrs: ['10.0.0.0/8'] });
    assert.match(notLoop.checkUrlSyntax('https://[64:ff9b::a00:5]:3000/x') ?? '(passed)', self);
    assert.match(notLoop.checkUrlSyntax('https://[2002:a00:5::]:3000/x') ?? '(passed)', self);
    assert.equal(notLoop.checkUrlSyntax('https://[64:ff9b::a00:6]:3000/x'), null);
    // names are judged by the address they resolve to
    const resolved = new Egress({
      publicUrl: 'http://127.0.0.1:3000',
      allowPrivateCidrs: ['0.0.0.0/8', '127.0.0.0/8'],
      resolve: resolver({
        'zero.example.com': ['0.0.0.0'],
        'nat64.example.com': ['64:ff9b::7f00:1'],
        'sixtofour.example.com': ['2002:7f00:1::'],
      }).resolve,
    });
    for (const [name, address] of [
      ['zero.example.com', '0.0.0.0'],
      ['nat64.example.com', '64:ff9b::7f00:1'],
      ['sixtofour.example.com', '2002:7f00:1::'],
    ]) {
      await assert.rejects(resolved.checkUrl(`https://${name}:3000/hook`), (err: unknown) => {
        assert.ok(err instanceof EgressError);
        assert.equal(
          err.reason,
          `${name} resolves to ${address}, this service's own address (PUBLIC_URL); it may not call itself`,
        );
        return true;
      });
      assert.equal((await resolved.checkUrl(`https://${name}:8443/hook`)).address, address);
    }
  });

  test('a name resolving to the service itself (an opened loopback address at its port) is refused at the call', async () => {
    const e = new Egress({
      publicUrl: 'http://127.0.0.1:3000',
      allowPrivateCidrs: ['127.0.0.1/32'],
      resolve: resolver({ 'dev.example.com': ['127.0.0.1'] }).resolve,
    });
    assert.equal(
      e.checkUrlSyntax('https://dev.example.com:3000/hook'),
      null,
      'a name is judged by what it resolves to',
    );
    await assert.rejects(
      e.checkUrl('https://dev.example.com:3000/hook'),
      /dev\.example\.com resolves to 127\.0\.0\.1, this service's own address \(PUBLIC_URL\); it may not call itself/,
    );
    await assert.rejects(e.request({ url: 'https://dev.example.com:3000/hook' }), /this service's own address/);
    assert.equal((await e.checkUrl('https://dev.example.com:8443/hook')).address, '127.0.0.1');
    await e.close();
    // a public PUBLIC_URL host is refused by name before resolution; its address is not judged after
    const pub = new Egress({
      publicUrl: 'https://platform.example.com',
      resolve: resolver({ 'other.example.com': [PUBLIC_V4] }).resolve,
    });
    assert.equal((await pub.checkUrl('https://other.example.com:443/hook')).address, PUBLIC_V4);
    await pub.close();
  });

  test('a name that resolves public, then private (DNS rebinding): the checked answer is the one used', async () => {
    const rebinding = resolver({ 'rebind.example.com': [[PUBLIC_V4], ['127.0.0.1']] });
    const e = new Egress({ resolve: rebinding.resolve });
    const first = await e.checkUrl('https://rebind.example.com/hook');
    assert.equal(first.address, PUBLIC_V4);
    // the next call resolves again and is refused; nothing ever reuses the first answer's name
    await assert.rejects(
      e.checkUrl('https://rebind.example.com/hook'),
      /resolves to 127\.0\.0\.1 is a loopback address/,
    );
    assert.deepEqual(rebinding.calls, ['rebind.example.com', 'rebind.example.com']);
  });

  test('a name that does not resolve fails with the resolver error', async () => {
    await assert.rejects(egress.checkUrl('https://nowhere.example.com/'), (err: unknown) => {
      assert.ok(err instanceof EgressError);
      assert.equal(err.kind, 'network');
      assert.match(err.reason, /nowhere\.example\.com could not be resolved \(ENOTFOUND\)/);
      return true;
    });
  });

  test('EGRESS_ALLOW_PRIVATE_CIDRS opens only the ranges listed', async () => {
    const local = resolver({
      localhost: ['127.0.0.1'],
      'internal.example.com': ['10.1.2.3'],
      'dual.localhost': ['127.0.0.1', '::1'],
      'metadata.example.com': ['169.254.169.254'],
    });
    const e = new Egress({ allowPrivateCidrs: ['127.0.0.1/32', '10.1.0.0/16'], resolve: local.resolve });
    assert.equal((await e.checkUrl('https://127.0.0.1:8443/')).address, '127.0.0.1');
    assert.equal((await e.checkUrl('https://internal.example.com/')).address, '10.1.2.3');
    // a localhost name is usable once its loopback address is opened, and only for opened answers
    assert.equal((await e.checkUrl('https://localhost:8443/')).address, '127.0.0.1');
    await assert.rejects(e.checkUrl('https://dual.localhost/'), /resolves to ::1 is a loopback address/);
    await assert.rejects(e.checkUrl('https://127.0.0.2/'), /loopback/);
    await assert.rejects(e.checkUrl('https://10.2.0.1/'), /private/);
    await assert.rejects(e.checkUrl('https://[::1]/'), /loopback/);
    await assert.rejects(e.checkUrl('https://metadata.example.com/'), /link-local/);
    // opening loopback makes localhost names usable, not the other local names
    await assert.rejects(e.checkUrl('https://printer.local/'), /local name \(\.local\)/);
    // an opened IPv4 range is open in the IPv6 forms that carry it, and only there
    assert.equal((await e.checkUrl('https://[::ffff:127.0.0.1]/')).address, '::ffff:7f00:1');
    assert.equal((await e.checkUrl('https://[64:ff9b::a01:203]/')).address, '64:ff9b::a01:203');
    await assert.rejects(
      e.checkUrl('https://[::ffff:127.0.0.2]/'),
      /carrying 127\.0\.0\.2, which is a loopback address/,
    );
  });

  async function addressOf(url: string) {
    return (await egress.checkUrl(url)).address;
  }
});
