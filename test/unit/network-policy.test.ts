import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import {
  classifyAddress,
  formatIp,
  isAddressAllowed,
  isHostAllowListed,
  isRefusedHostname,
  parseAllowedHosts,
  parseIPv4,
  parseIp,
} from '../../core/network-policy.js';
import { EgressPolicy } from '../../platform/egress/egress-policy.js';

const kind = (address: string) => {
  const verdict = classifyAddress(address);
  return verdict.allowed ? 'allowed' : verdict.kind;
};

describe('IPv4', () => {
  it('refuses loopback, private, CGNAT, link-local, unspecified, multicast, metadata and reserved ranges', () => {
    expect(kind('127.0.0.1')).toBe('loopback');
    expect(kind('127.255.255.254')).toBe('loopback');
    expect(kind('10.1.2.3')).toBe('private');
    expect(kind('172.16.0.1')).toBe('private');
    expect(kind('172.31.255.255')).toBe('private');
    expect(kind('192.168.1.1')).toBe('private');
    expect(kind('100.64.0.1')).toBe('carrier-grade NAT');
    expect(kind('100.127.255.255')).toBe('carrier-grade NAT');
    expect(kind('169.254.1.1')).toBe('link-local');
    expect(kind('169.254.169.254')).toBe('metadata');
    expect(kind('0.0.0.0')).toBe('unspecified');
    expect(kind('0.1.2.3')).toBe('unspecified');
    expect(kind('224.0.0.1')).toBe('multicast');
    expect(kind('239.255.255.250')).toBe('multicast');
    expect(kind('255.255.255.255')).toBe('reserved');
    expect(kind('240.0.0.1')).toBe('reserved');
    expect(kind('192.0.2.10')).toBe('reserved');
    expect(kind('198.18.0.1')).toBe('reserved');
  });

  it('allows public addresses, including the neighbours of refused ranges', () => {
    for (const address of [
      '93.184.216.34',
      '8.8.8.8',
      '1.1.1.1',
      '172.15.255.255',
      '172.32.0.0',
      '100.63.255.255',
      '100.128.0.0',
      '11.0.0.1',
    ]) {
      expect(kind(address), address).toBe('allowed');
    }
  });

  it('reads decimal, hex, octal and short forms the way URL parsers and inet_aton do', () => {
    expect([...parseIPv4('2130706433')!]).toEqual([127, 0, 0, 1]);
    expect([...parseIPv4('0x7f.1')!]).toEqual([127, 0, 0, 1]);
    expect([...parseIPv4('0x7f000001')!]).toEqual([127, 0, 0, 1]);
    expect([...parseIPv4('0177.0.0.1')!]).toEqual([127, 0, 0, 1]);
    expect([...parseIPv4('127.1')!]).toEqual([127, 0, 0, 1]);
    expect([...parseIPv4('10.0.258')!]).toEqual([10, 0, 1, 2]);
    expect([...parseIPv4('0xA9.0xFE.0xA9.0xFE')!]).toEqual([169, 254, 169, 254]);
    expect([...parseIPv4('127.0.0.1.')!]).toEqual([127, 0, 0, 1]);
    for (const form of ['2130706433', '0x7f.1', '0177.0.0.1', '127.1', '0x7F.0.0.1']) expect(kind(form), form).toBe('loopback');
    expect(kind('0xa9fea9fe')).toBe('metadata');
    expect(kind('3232235777')).toBe('private'); // 192.168.1.1
    // Not numbers: host names, or invalid.
    expect(parseIPv4('example.com')).toBeUndefined();
    expect(parseIPv4('1.2.3.4.5')).toBeUndefined();
    expect(parseIPv4('256.0.0.1')).toBeUndefined();
    expect(parseIPv4('4294967296')).toBeUndefined();
    expect(parseIPv4('09.1.1.1')).toBeUndefined();
    expect(parseIPv4('1..1')).toBeUndefined();
  });
});

describe('IPv6', () => {
  it('refuses loopback, unspecified, unique-local, link-local, multicast and metadata', () => {
    expect(kind('::1')).toBe('loopback');
    expect(kind('[::1]')).toBe('loopback');
    expect(kind('0:0:0:0:0:0:0:1')).toBe('loopback');
    expect(kind('::')).toBe('unspecified');
    expect(kind('fc00::1')).toBe('private');
    expect(kind('fd12:3456:789a::1')).toBe('private');
    expect(kind('fe80::1')).toBe('link-local');
    expect(kind('fe80::1%eth0')).toBe('link-local');
    expect(kind('febf::1')).toBe('link-local');
    expect(kind('ff02::1')).toBe('multicast');
    expect(kind('fd00:ec2::254')).toBe('metadata');
    expect(kind('2001:db8::1')).toBe('reserved');
    expect(kind('100::1')).toBe('reserved');
  });

  it('judges IPv4 carried in IPv6 (mapped, compatible, NAT64, 6to4) as that IPv4 address', () => {
    expect(kind('::ffff:127.0.0.1')).toBe('loopback');
    expect(kind('::ffff:7f00:1')).toBe('loopback');
    expect(kind('[::ffff:169.254.169.254]')).toBe('metadata');
    expect(kind('::ffff:10.0.0.1')).toBe('private');
    expect(kind('::127.0.0.1')).toBe('loopback');
    expect(kind('64:ff9b::10.0.0.1')).toBe('private');
    expect(kind('2002:c0a8:0101::1')).toBe('private'); // 6to4 of 192.168.1.1
    expect(kind('::ffff:93.184.216.34')).toBe('allowed');
    expect(kind('64:ff9b::8.8.8.8')).toBe('allowed');
  });

  it('allows global unicast and parses the forms', () => {
    expect(kind('2606:4700:4700::1111')).toBe('allowed');
    expect(kind('2a00:1450:4001:80e::200e')).toBe('allowed');
    expect(formatIp(parseIp('0:0::1')!)).toBe('::1');
    expect(formatIp(parseIp('2001:0db8:0000:0000:0001:0000:0000:0001')!)).toBe('2001:db8::1:0:0:1');
    expect(formatIp(parseIp('::ffff:127.0.0.1')!)).toBe('::ffff:7f00:1');
    expect(parseIp('1:2:3:4:5:6:7:8:9')).toBeUndefined();
    expect(parseIp('1::2::3')).toBeUndefined();
    expect(parseIp('::ffff:0x7f.1')).toBeUndefined();
    expect(parseIp('12345::')).toBeUndefined();
  });

  it('refuses what is not an address at all', () => {
    expect(isAddressAllowed('not-an-ip')).toBe(false);
    expect(isAddressAllowed('')).toBe(false);
  });
});

describe('host names and the allow-list', () => {
  it('refuses metadata host names before any lookup', () => {
    expect(isRefusedHostname('metadata.google.internal')).toBe(true);
    expect(isRefusedHostname('METADATA.google.internal.')).toBe(true);
    expect(isRefusedHostname('example.com')).toBe(false);
  });

  it('parses hosts and host:port, IPv6 in brackets, and rejects junk', () => {
    expect(parseAllowedHosts('')).toEqual([]);
    expect(parseAllowedHosts(' intranet.local , 127.0.0.1:8080,[::1]:9000, [fd00::1] ,::1')).toEqual([
      { host: 'intranet.local' },
      { host: '127.0.0.1', port: 8080 },
      { host: '::1', port: 9000 },
      { host: 'fd00::1' },
      { host: '::1' },
    ]);
    expect(() => parseAllowedHosts('http://example.com')).toThrow(/hostnames or host:port/);
    expect(() => parseAllowedHosts('example.com:99999')).toThrow(/example.com:99999/);
    expect(() => parseAllowedHosts('exa mple.com')).toThrow();
  });

  it('matches the host as written, with or without a port', () => {
    const allowed = parseAllowedHosts('intranet.local,127.0.0.1:8080,[::1]:9000');
    expect(isHostAllowListed(allowed, 'INTRANET.local', 443)).toBe(true);
    expect(isHostAllowListed(allowed, '127.0.0.1', 8080)).toBe(true);
    expect(isHostAllowListed(allowed, '127.0.0.1', 8081)).toBe(false);
    expect(isHostAllowListed(allowed, 'localhost', 8080)).toBe(false);
    expect(isHostAllowListed(allowed, '[0:0::1]', 9000)).toBe(true);
    expect(isHostAllowListed(allowed, '2130706433', 8080)).toBe(true); // the same address as 127.0.0.1
    expect(isHostAllowListed([], '127.0.0.1', 8080)).toBe(false);
  });

  it('is read from BROWSER_ALLOWED_HOSTS, empty by default, and a bad entry names the variable', () => {
    expect(loadConfig({}).BROWSER_ALLOWED_HOSTS).toEqual([]);
    expect(loadConfig({ BROWSER_ALLOWED_HOSTS: 'a.example,10.0.0.2:81' }).BROWSER_ALLOWED_HOSTS).toEqual([
      { host: 'a.example' },
      { host: '10.0.0.2', port: 81 },
    ]);
    expect(() => loadConfig({ BROWSER_ALLOWED_HOSTS: 'ftp://x' })).toThrow(/BROWSER_ALLOWED_HOSTS/);
  });
});

describe('EgressPolicy (with DNS)', () => {
  const dns: Record<string, string[]> = {
    'public.example': ['93.184.216.34'],
    'sneaky.example': ['93.184.216.34', '10.0.0.7'],
    'loop.example': ['127.0.0.1'],
    'intranet.example': ['10.1.1.1'],
  };
  const lookup = async (host: string) => {
    const addresses = dns[host];
    if (!addresses) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const policy = new EgressPolicy(parseAllowedHosts('intranet.example,127.0.0.1:8080'), lookup);

  it('resolves names and refuses any that reaches a refused address', async () => {
    expect(await policy.resolve('public.example', 443)).toEqual({ ok: true, address: '93.184.216.34', family: 4 });
    expect(await policy.resolve('loop.example', 80)).toEqual({
      ok: false,
      reason: 'loop.example resolves to 127.0.0.1, a loopback address',
    });
    expect(await policy.resolve('sneaky.example', 80)).toMatchObject({ ok: false, reason: expect.stringContaining('10.0.0.7, a private') });
    expect(await policy.resolve('nowhere.example', 80)).toMatchObject({ ok: false, reason: expect.stringContaining('does not resolve') });
    expect(await policy.resolve('metadata.google.internal', 80)).toMatchObject({ ok: false, reason: expect.stringContaining('metadata') });
  });

  it('lets the allow-list through, and only where it says', async () => {
    expect(await policy.resolve('intranet.example', 8443)).toEqual({ ok: true, address: '10.1.1.1', family: 4 });
    expect(await policy.resolve('127.0.0.1', 8080)).toEqual({ ok: true, address: '127.0.0.1', family: 4 });
    expect(await policy.resolve('127.0.0.1', 8081)).toMatchObject({ ok: false });
    expect(await policy.resolve('[::1]', 8080)).toMatchObject({ ok: false, reason: '::1 is a loopback address' });
  });

  it('checks URLs: http and https only, the scheme default port, numeric hosts', async () => {
    expect(await policy.checkUrl('https://public.example/x')).toEqual({ ok: true });
    expect(await policy.checkUrl('file:///etc/passwd')).toMatchObject({
      ok: false,
      reason: expect.stringContaining('only http and https'),
    });
    expect(await policy.checkUrl('ftp://public.example/')).toMatchObject({ ok: false });
    expect(await policy.checkUrl('http://2130706433:8080/')).toEqual({ ok: true }); // 127.0.0.1:8080, allowed
    expect(await policy.checkUrl('http://0x7f.1/')).toMatchObject({ ok: false, reason: '127.0.0.1 is a loopback address' });
    expect(await policy.checkUrl('http://[::ffff:169.254.169.254]/')).toMatchObject({
      ok: false,
      reason: expect.stringContaining('metadata'),
    });
  });
});
