import fc from 'fast-check';
import { JsonBody, jsonPartsLength, type JsonPart } from './json-body';

/** The bytes the parts spell, joined the plain way. */
const joined = (parts: readonly JsonPart[]): Buffer =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));

describe('JsonBody.toBuffer', () => {
  it.each<[string, JsonPart[]]>([
    ['one text part', ['{"a":1}']],
    ['text and bytes', ['{"run":{"x":"é€😀"},"snapshot":', Buffer.from('{"n":[1,2]}'), '}']],
    ['empty parts', ['', Buffer.alloc(0), '{}', '']],
    ['no parts', []],
    ['a lone surrogate, as UTF-8 encodes it', ['"\ud800"']],
  ])('joins %s into their UTF-8 bytes', (_name, parts) => {
    const bytes = new JsonBody(parts).toBuffer();
    expect(bytes.equals(joined(parts))).toBe(true);
    expect(bytes.length).toBe(jsonPartsLength(parts));
  });

  it('joins any mix of text and byte parts into exactly their bytes', () => {
    const part = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)),
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 8 }), (parts) => {
        expect(new JsonBody(parts).toBuffer().equals(joined(parts))).toBe(true);
      }),
    );
  });

  it('joins once: the same buffer every time', () => {
    const snapshot = Buffer.from('{"s":1}');
    const body = new JsonBody(['{"x":', snapshot, '}']);
    const first = body.toBuffer();
    expect(body.toBuffer()).toBe(first);
    expect(first.toString('utf8')).toBe('{"x":{"s":1}}');
  });
});
