import { blankToNull, normalizeStringList } from './normalize';

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
  ])('%s', (_name, input, expected) => {
    expect(normalizeStringList(input)).toEqual(expected);
  });

  it('does not modify its input', () => {
    const input = [' a ', 'A'];
    normalizeStringList(input);
    expect(input).toEqual([' a ', 'A']);
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
