import { randomFillSync } from 'node:crypto';

let lastMs = 0;
let seq = 0;

/**
 * Random bytes drawn from the CSPRNG 4 KB at a time (as `crypto.randomUUID` caches its entropy):
 * one `randomBytes(16)` per id cost about 2 µs, most of the JUnit import's id making (400,000 ids
 * for 100,000 testcases).
 */
const entropy = Buffer.allocUnsafe(4096);
let entropyAt = entropy.length;

/** Offset in {@link entropy} of `n` fresh random bytes. */
function randomAt(n: number): number {
  if (entropyAt + n > entropy.length) {
    randomFillSync(entropy);
    entropyAt = 0;
  }
  const at = entropyAt;
  entropyAt += n;
  return at;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * Time-ordered UUID (version 7, RFC 9562): 48-bit millisecond timestamp, then a 12-bit counter for ids
 * made in the same millisecond (keeps them ordered within a process), then random bits.
 */
export function uuidv7(): string {
  let ms = Date.now();
  if (ms <= lastMs) {
    seq++;
    if (seq > 0xfff) {
      lastMs++;
      seq = 0;
    }
    ms = lastMs;
  } else {
    lastMs = ms;
    seq = entropy[randomAt(1)] & 0x7f;
  }
  const r = randomAt(8);
  const e = entropy;
  return (
    HEX[Math.floor(ms / 2 ** 40) & 0xff] +
    HEX[Math.floor(ms / 2 ** 32) & 0xff] +
    HEX[(ms >>> 24) & 0xff] +
    HEX[(ms >>> 16) & 0xff] +
    '-' +
    HEX[(ms >>> 8) & 0xff] +
    HEX[ms & 0xff] +
    '-' +
    HEX[0x70 | ((seq >>> 8) & 0x0f)] +
    HEX[seq & 0xff] +
    '-' +
    HEX[(e[r] & 0x3f) | 0x80] +
    HEX[e[r + 1]] +
    '-' +
    HEX[e[r + 2]] +
    HEX[e[r + 3]] +
    HEX[e[r + 4]] +
    HEX[e[r + 5]] +
    HEX[e[r + 6]] +
    HEX[e[r + 7]]
  );
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `s` is a syntactically valid UUID (any version). Malformed ids are simply "not found". */
export function isUuid(s: unknown): s is string {
  return typeof s === 'string' && UUID_RE.test(s);
}

/**
 * A referenced id as the database spells it: uuids are case-insensitive, so they are lower-cased
 * (duplicates and self references are then found by plain comparison); anything else stays as is
 * and is simply not found.
 */
export function canonicalId(id: string): string {
  return isUuid(id) ? id.toLowerCase() : id;
}
