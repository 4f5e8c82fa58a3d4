import { copyField, copyRow } from './copy-text';

describe('COPY text format', () => {
  it.each([
    [null, '\\N'],
    [undefined, '\\N'],
    ['plain', 'plain'],
    ['', ''],
    ['a\tb', 'a\\tb'],
    ['line\nnext\r', 'line\\nnext\\r'],
    ['back\\slash', 'back\\\\slash'],
    ['\\N', '\\\\N'],
    [42, '42'],
    [-1.5, '-1.5'],
    [true, 't'],
    [false, 'f'],
    [new Date('2026-11-24T21:00:00.123Z'), '2026-11-24T21:00:00.123Z'],
    [[], '{}'],
    [['a', 'b c'], '{"a","b c"}'],
    [['say "hi"', 'back\\slash'], '{"say \\\\"hi\\\\"","back\\\\\\\\slash"}'],
    [['NULL'], '{"NULL"}'],
    ['{"json": "te\\"xt"}', '{"json": "te\\\\"xt"}'],
  ])('%j → %s', (value, expected) => {
    expect(copyField(value)).toBe(expected);
  });

  it('refuses numbers the text format cannot carry', () => {
    expect(() => copyField(Number.NaN)).toThrow(RangeError);
    expect(() => copyField(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });

  it('joins fields with tabs and ends the line', () => {
    expect(copyRow(['a', null, 1, ['x']])).toBe('a\t\\N\t1\t{"x"}\n');
  });
});
