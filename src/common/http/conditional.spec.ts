import { createHash } from 'node:crypto';
import {
  ifMatchPasses,
  ifNoneMatchMatches,
  jsonEtag,
  parseEntityTags,
  partsEtag,
  strongEtag,
} from './conditional';

const A = '"abc"';
const B = '"def"';

describe('parseEntityTags', () => {
  it.each([
    [undefined, null],
    ['', null],
    ['   ', null],
    ['*', '*'],
    [' * ', '*'],
    [A, [{ weak: false, opaque: A }]],
    [`W/${A}`, [{ weak: true, opaque: A }]],
    [
      `${A}, W/${B}`,
      [
        { weak: false, opaque: A },
        { weak: true, opaque: B },
      ],
    ],
    [
      `${A},${B}`,
      [
        { weak: false, opaque: A },
        { weak: false, opaque: B },
      ],
    ],
    [
      '"a,b", "c"',
      [
        { weak: false, opaque: '"a,b"' },
        { weak: false, opaque: '"c"' },
      ],
    ],
    ['abc', []],
    [`abc, ${A}`, [{ weak: false, opaque: A }]],
    ['"unterminated', []],
    [
      [A, B],
      [
        { weak: false, opaque: A },
        { weak: false, opaque: B },
      ],
    ],
  ] as const)('%j → %j', (header, expected) => {
    expect(parseEntityTags(header as string | string[] | undefined)).toEqual(expected);
  });
});

describe('ifNoneMatchMatches (weak comparison, RFC 9110 §13.1.2)', () => {
  it.each([
    [undefined, A, false],
    ['', A, false],
    [A, A, true],
    [B, A, false],
    [`W/${A}`, A, true],
    [A, `W/${A}`, true],
    [`${B}, ${A}`, A, true],
    [`${B} ,W/${A}`, A, true],
    ['*', A, true],
    ['"ab"', A, false],
    ['abc', A, false],
  ] as const)('If-None-Match %j against %s → %s', (header, etag, expected) => {
    expect(ifNoneMatchMatches(header, etag)).toBe(expected);
  });
});

describe('ifMatchPasses (strong comparison, RFC 9110 §13.1.1)', () => {
  it.each([
    [undefined, A, true],
    [undefined, null, true],
    ['', A, true],
    [A, A, true],
    [B, A, false],
    [`${B}, ${A}`, A, true],
    [`W/${A}`, A, false],
    [A, `W/${A}`, false],
    ['*', A, true],
    ['*', null, false],
    [A, null, false],
    ['abc', A, false],
    ['"unterminated', A, false],
  ] as const)('If-Match %j against %j → %s', (header, etag, expected) => {
    expect(ifMatchPasses(header, etag)).toBe(expected);
  });
});

describe('strongEtag, jsonEtag, partsEtag', () => {
  it('is the quoted base64url of the first 128 bits of the SHA-256 of the bytes', () => {
    const body = '{"a":"é"}';
    const expected = createHash('sha256')
      .update(Buffer.from(body, 'utf8'))
      .digest()
      .subarray(0, 16);
    expect(strongEtag(body)).toBe(`"${expected.toString('base64url')}"`);
    expect(strongEtag(Buffer.from(body, 'utf8'))).toBe(strongEtag(body));
    expect(strongEtag(body)).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
  });

  it('jsonEtag hashes what res.json sends (JSON.stringify)', () => {
    const value = { b: 1, a: [null, 'x'] };
    expect(jsonEtag(value)).toBe(strongEtag(JSON.stringify(value)));
    expect(jsonEtag({ a: [null, 'x'], b: 1 })).not.toBe(jsonEtag(value));
  });

  it('one part: the tag of its bytes', () => {
    expect(partsEtag(['{"a":1}'])).toBe(strongEtag('{"a":1}'));
    expect(partsEtag([Buffer.from('{"a":1}')])).toBe(strongEtag('{"a":1}'));
  });

  it('several parts: the same parts the same tag, any changed byte another one', () => {
    const snapshot = Buffer.from('{"nodes":[1,2,3]}');
    const parts = ['{"id":"r1","environment_snapshot":', snapshot, '}'];
    const tag = partsEtag(parts);
    expect(partsEtag(['{"id":"r1","environment_snapshot":', Buffer.from(snapshot), '}'])).toBe(tag);
    expect(partsEtag(['{"id":"r2","environment_snapshot":', snapshot, '}'])).not.toBe(tag);
    expect(
      partsEtag(['{"id":"r1","environment_snapshot":', Buffer.from('{"nodes":[1,2,4]}'), '}']),
    ).not.toBe(tag);
    // Text moved from one part to the next is another encoding (no ambiguity between parts).
    expect(partsEtag(['{"id":"r1","environment_snapshot', ':', snapshot, '}'])).not.toBe(tag);
    // A text part is not confused with a byte part of the same bytes.
    expect(partsEtag(['{"id":"r1","environment_snapshot":', snapshot.toString(), '}'])).not.toBe(
      tag,
    );
  });
});
