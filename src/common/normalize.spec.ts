import { blankToNull, caseKey, cutText, normalizeStringList, ownText } from './normalize';
import { isWellFormedText } from './validation/well-formed';

describe('normalizeStringList', () => {
  it.each<[string, string[], string[]]>([
    ['empty list', [], []],
    ['reference example (tags)', [' K8s', 'k8s', '', ' ', 'Prod'], ['K8s', 'Prod']],
    ['reference example (endpoints)', ['/a', '/A', ' /a '], ['/a']],
    ['trims surrounding whitespace', ['  smoke  ', '\tnightly\n'], ['smoke', 'nightly']],
    ['drops empty and blank entries', ['', '   ', '\t', 'x'], ['x']],
    ['keeps the first spelling of case variants', ['Prod', 'PROD', 'prod'], ['Prod']],
    ['keeps the original order', ['b', 'a', 'c', 'A'], ['b', 'a', 'c']],
    ['never lower-cases', ['MixedCase'], ['MixedCase']],
    ['keeps inner whitespace', ['load test', 'load  test'], ['load test', 'load  test']],
    ['de-duplicates after trimming', ['x ', ' x', 'X'], ['x']],
    ['non-ASCII case folding', ['Über', 'über', 'ÜBER'], ['Über']],
    ['a final capital sigma as PostgreSQL lower-cases it', ['ΟΔΟΣ', 'οδοσ'], ['ΟΔΟΣ']],
    ['capital I with a dot as PostgreSQL lower-cases it', ['İstanbul', 'istanbul'], ['İstanbul']],
  ])('%s', (_name, input, expected) => {
    expect(normalizeStringList(input)).toEqual(expected);
  });

  it('does not modify its input', () => {
    const input = [' a ', 'A'];
    normalizeStringList(input);
    expect(input).toEqual([' a ', 'A']);
  });
});

describe('caseKey (Unicode simple lower-case mapping, code point by code point)', () => {
  it.each<[string, string]>([
    ['ABC', 'abc'],
    ['ΟΔΟΣ', 'οδοσ'],
    ['İstanbul', 'istanbul'],
    ['Straße', 'straße'],
    ['😀A', '😀a'],
  ])('%s → %s', (text, key) => {
    expect(caseKey(text)).toBe(key);
  });
});

describe('blankToNull', () => {
  it.each<[string, string | null | undefined, string | null]>([
    ['undefined', undefined, null],
    ['null', null, null],
    ['empty', '', null],
    ['blank', ' \t\n ', null],
    ['text', 'abc', 'abc'],
    ['text with spaces around, trimmed', '  a b  ', 'a b'],
  ])('%s', (_name, input, expected) => {
    expect(blankToNull(input)).toBe(expected);
  });
});

describe('cutText', () => {
  it.each<[string, number, string]>([
    ['abc', 5, 'abc'],
    ['abc', 3, 'abc'],
    ['abc', 2, 'ab'],
    ['a\u{1F600}b', 2, 'a'], // the cut would split the emoji: one unit fewer
    ['a\u{1F600}b', 3, 'a\u{1F600}'],
    ['\u{1F600}\u{1F600}', 1, ''],
    ['', 0, ''],
  ])('%j cut at %i → %j', (text, max, expected) => {
    expect(cutText(text, max)).toBe(expected);
  });

  it('never leaves a lone surrogate', () => {
    const text = 'x\u{1F600}'.repeat(50);
    for (let max = 0; max <= text.length; max++) {
      expect(isWellFormedText(cutText(text, max))).toBe(true);
    }
  });
});

describe('ownText', () => {
  const long = 'a long text of a report, \u{1F600} and a lone \uD800 surrogate';
  it.each<[string, string]>([
    ['', ''],
    ['short', 'short'],
    ['twelve chars', 'twelve chars'],
    ['thirteen char', 'thirteen char'],
    [long, long],
    ['slice of a longer text'.slice(3, 20), 'ce of a longer te'],
  ])('%j → an equal string %j', (text, expected) => {
    expect(ownText(text)).toBe(expected);
    expect(ownText(text)).toHaveLength(text.length);
  });
});
