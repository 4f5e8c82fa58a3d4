import { isIP } from 'node:net';

/**
 * Which destination addresses a webhook may never reach unless WEBHOOK_ALLOW_PRIVATE=true (SSRF
 * protection, issue #20). Pure: no DNS, no sockets.
 *
 * Refused IPv4 ranges: 0.0.0.0/8 (unspecified, "this network"), 10.0.0.0/8, 100.64.0.0/10 (shared
 * carrier-grade NAT), 127.0.0.0/8 (loopback), 169.254.0.0/16 (link-local, cloud metadata),
 * 172.16.0.0/12, 192.0.0.0/24 (IETF protocol assignments), 192.168.0.0/16, 198.18.0.0/15
 * (benchmarking), 224.0.0.0/4 (multicast) and 240.0.0.0/4 (reserved, broadcast).
 * Refused IPv6 ranges: ::/128 (unspecified), ::1/128 (loopback), fc00::/7 (unique local),
 * fe80::/10 (link-local), fec0::/10 (site-local), ff00::/8 (multicast); an IPv6 address that embeds
 * an IPv4 address (IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96, NAT64 64:ff9b::/96, 6to4
 * 2002::/16) is judged by that IPv4 address.
 */
const BLOCKED_V4: ReadonlyArray<readonly [string, number, string]> = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'private'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'private'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'private'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

function v4ToInt(address: string): number {
  return address.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

function v4Kind(address: string): string | null {
  const n = v4ToInt(address);
  for (const [base, bits, kind] of BLOCKED_V4) {
    const size = 2 ** (32 - bits);
    const start = v4ToInt(base);
    if (n >= start && n < start + size) return kind;
  }
  return null;
}

/** The 16 bytes of an IPv6 address (zone id removed; a trailing dotted IPv4 part accepted). */
export function ipv6Bytes(address: string): number[] {
  let text = address.replace(/%.*$/, '');
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    tail.push(...dotted[1].split('.').map(Number));
    text = text.slice(0, -dotted[1].length) + '0:0';
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const groups = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  const zeros = rest === undefined ? 0 : 8 - left.length - right.length;
  const all = [...left, ...new Array<number>(zeros).fill(0), ...right];
  const bytes = all.flatMap((g) => [g >> 8, g & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

function v6Kind(address: string): string | null {
  const b = ipv6Bytes(address);
  const zeroUntil = (n: number) => b.slice(0, n).every((x) => x === 0);
  const v4 = (offset: number) => b.slice(offset, offset + 4).join('.');
  if (zeroUntil(16)) return 'unspecified';
  if (zeroUntil(15) && b[15] === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d).
  if (zeroUntil(10) && ((b[10] === 0xff && b[11] === 0xff) || (b[10] === 0 && b[11] === 0))) {
    return v4Kind(v4(12));
  }
  // NAT64 (64:ff9b::a.b.c.d).
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && b.slice(4, 12).every((x) => x === 0)) {
    return v4Kind(v4(12));
  }
  // 6to4 (2002:aabb:ccdd::).
  if (b[0] === 0x20 && b[1] === 0x02) return v4Kind(v4(2));
  if ((b[0] & 0xfe) === 0xfc) return 'private';
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0x80) return 'link-local';
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0xc0) return 'private';
  if (b[0] === 0xff) return 'multicast';
  return null;
}

/**
 * Why a webhook may not be delivered to `address` (`loopback`, `private`, `link-local`,
 * `multicast`, `unspecified`, `reserved`), or `null` when it is a public address. Anything that is
 * not an IP address is refused as `invalid`.
 */
export function blockedAddressKind(address: string): string | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(bare.replace(/%.*$/, ''));
  if (family === 4) return v4Kind(bare);
  if (family === 6) return v6Kind(bare);
  return 'invalid';
}
