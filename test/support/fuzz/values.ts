import fc from 'fast-check';

/**
 * The known-nasty values the generated requests are made of. Lists are ordered from the plainest to
 * the most exotic, so that fast-check's shrinking (towards the first entry) ends on the simplest
 * value that still fails.
 */

/** A path or query fragment already percent-encoded as it must go on the wire (`%ZZ`, `%ED%A0%80`). */
export class Raw {
  constructor(readonly encoded: string) {}
  toString(): string {
    return `raw(${this.encoded.length > 60 ? `${this.encoded.slice(0, 60)}… ${this.encoded.length} chars` : this.encoded})`;
  }
}

/**
 * Percent-encodes a string for a path segment or a query value. Lone surrogates have no UTF-8 form
 * (encodeURIComponent throws): they are sent as their WTF-8 bytes (`\ud800` → `%ED%A0%80`), which is
 * what a client that does not check its strings puts on the wire.
 */
export function encodeComponent(value: string | Raw): string {
  if (value instanceof Raw) return value.encoded;
  let out = '';
  for (const ch of value) {
    const cp = ch.codePointAt(0) as number;
    if (cp >= 0xd800 && cp <= 0xdfff) {
      const bytes = [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
      out += bytes.map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

const HUGE = 'x'.repeat(100_000);
const DEEP_ARRAY = (levels: number): unknown => {
  let v: unknown = 'leaf';
  for (let i = 0; i < levels; i += 1) v = [v];
  return v;
};
const DEEP_OBJECT = (levels: number): unknown => {
  let v: unknown = 'leaf';
  for (let i = 0; i < levels; i += 1) v = { a: v };
  return v;
};

/** Strings that are wrong for almost any field. */
export const JUNK_STRINGS: string[] = [
  '',
  ' ',
  ' \t\n ',
  'null',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e999',
  '-1',
  '0x1F',
  'true',
  'not-a-uuid',
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '{0190d1c2-7c3a-7b4e-8f00-000000000000}',
  '0190d1c27c3a7b4e8f00000000000000',
  '2024-13-45T25:61:61Z',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  '275760-09-13T00:00:00.001Z',
  'a@x.io',
  'a\ud800@x.io',
  '\ud800',
  '\udfff',
  'x\u0000y',
  '\u202e\u0301\ufeff',
  '日本語🎉 Ünïcødé',
  '𝕏'.repeat(500),
  "'; DROP TABLE users; --",
  '%_\\',
  '$ne',
  '__proto__',
  '../../etc/passwd',
  '<testsuite><testcase/></testsuite>',
  'x'.repeat(256),
  'x'.repeat(10_001),
  HUGE,
];

/** JSON values of every wrong type and shape. */
export const JUNK_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  -0.0001,
  2147483648,
  -2147483649,
  9007199254740993,
  1e308,
  -1e308,
  ...JUNK_STRINGS,
  [],
  [null],
  [''],
  [1, 'a', null, {}],
  {},
  { $ne: null },
  JSON.parse('{"__proto__":{"polluted":true}}') as unknown,
  { constructor: { prototype: { polluted: true } } },
  Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i])),
  Array(10_000).fill('a'),
  Array(10_000).fill('0190d1c2-7c3a-7b4e-8f00-000000000000'),
  Array(10_000).fill({ a: 1 }),
  Array(100_000).fill(0),
  DEEP_ARRAY(20),
  DEEP_OBJECT(63),
  DEEP_ARRAY(65),
  DEEP_OBJECT(1000),
  'x'.repeat(1_000_000),
];

/** Any junk JSON value; the structured ones rebuilt per use, so no request mutates another's. */
export const junkValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...JUNK_VALUES) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** Strings a client may plausibly send: mostly short and printable, sometimes any Unicode. */
export const plainString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 }) },
);

/** Path segments that are no id: shapes of wrong ids, and broken percent-encoding. */
export const JUNK_SEGMENTS: Array<string | Raw> = [
  'not-a-uuid',
  '0',
  '-1',
  '1.5',
  '1e3',
  '2147483648',
  '99999999999999999999999999',
  'null',
  'undefined',
  'NaN',
  'true',
  ' ',
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '0190d1c27c3a7b4e8f00000000000000',
  '{0190d1c2-7c3a-7b4e-8f00-000000000000}',
  "'; DROP TABLE users; --",
  '日本語🎉',
  '\ud800',
  '\udfff',
  'a\u0000b',
  'x'.repeat(4000),
  new Raw('%'),
  new Raw('%ZZ'),
  new Raw('%FF'),
  new Raw('%C0%AF'),
  new Raw('%00'),
  new Raw('%2F'),
  new Raw('%2e%2e'),
  new Raw('..'),
  new Raw('.'),
  new Raw(';a=b'),
];

/** Query values of every wrong shape (the parameter's own type is tried separately). */
export const JUNK_QUERY: Array<string | Raw> = [
  '',
  ' ',
  'null',
  'NaN',
  '-1',
  '0',
  '1.5',
  '1e309',
  '99999999999999999999',
  'true',
  'yes',
  'abc',
  '[]',
  '{}',
  ',,,',
  'a,b,c',
  'not-a-uuid',
  '00000000-0000-0000-0000-000000000000',
  '%_',
  '日本語🎉',
  '\ud800',
  'a\u0000b',
  'x'.repeat(6000),
  new Raw('%'),
  new Raw('%ZZ'),
  new Raw('%FF'),
  new Raw('%ED%A0%80'),
  new Raw('%00'),
  new Raw('a&b'),
  new Raw('a=b=c'),
];

/** Parameter names no operation documents. */
export const EXTRA_QUERY_NAMES = ['x', '__proto__', 'constructor', 'page[]', 'project_id[0]', '', 'sort_by.x'];

/** Small upload bodies: nothing, junk, near-miss reports. */
export const UPLOAD_FILES: Array<[string, string | Buffer]> = [
  ['empty', ''],
  ['text', 'hello'],
  ['junit', '<testsuite name="s"><testcase name="a" classname="c"/></testsuite>'],
  ['junit with failure', '<testsuites><testsuite name="s"><testcase name="a"><failure message="m">x</failure></testcase></testsuite></testsuites>'],
  ['truncated xml', '<testsuite name="s"><testcase name="a"'],
  ['xml no root', '<?xml version="1.0"?>'],
  ['doctype', '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><testsuite name="&a;"/>'],
  ['external entity', '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><testsuite name="&e;"/>'],
  ['bad attributes', '<testsuite tests="-1" time="NaN" timestamp="yesterday"><testcase name="" time="1e999"/></testsuite>'],
  ['surrogate name', '<testsuite><testcase name="&#xD800;" classname="\ud800"/></testsuite>'],
  ['json', '{"cases":[]}'],
  ['json junk cases', '{"cases":[null,1,"a",{"name":null,"status":"??"}]}'],
  ['json wrong root', '[1,2,3]'],
  ['json truncated', '{"cases":[{"name":"a"'],
  ['utf-16 bom', Buffer.from([0xff, 0xfe, 0x3c, 0x00, 0x61, 0x00])],
  ['invalid utf-8', Buffer.from([0x3c, 0x61, 0xff, 0xfe, 0xc0, 0xaf, 0x3e])],
  ['nul bytes', Buffer.alloc(64)],
];
