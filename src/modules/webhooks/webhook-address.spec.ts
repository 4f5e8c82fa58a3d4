import { blockedAddressKind, ipv6Bytes } from './webhook-address';

describe('blockedAddressKind', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['localhost', 'invalid'],
    ['not an address', 'invalid'],
  ])('refuses %s (%s)', (address, kind) => {
    expect(blockedAddressKind(address)).toBe(kind);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.0',
    '100.128.0.1',
    '192.169.0.1',
    '169.253.255.255',
    '2606:4700:4700::1111',
    '2001:db8::1',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::',
  ])('accepts the public address %s', (address) => {
    expect(blockedAddressKind(address)).toBeNull();
  });
});

describe('ipv6Bytes', () => {
  it.each([
    ['::1', [...new Array<number>(15).fill(0), 1]],
    ['::ffff:1.2.3.4', [...new Array<number>(10).fill(0), 0xff, 0xff, 1, 2, 3, 4]],
    ['fe80::1:2', [0xfe, 0x80, ...new Array<number>(10).fill(0), 0, 1, 0, 2]],
  ])('%s', (address, bytes) => {
    expect(ipv6Bytes(address)).toEqual(bytes);
  });
});
