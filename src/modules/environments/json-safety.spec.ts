import { jsonSafetyIssues, MAX_JSON_DEPTH } from './json-safety';

describe('jsonSafetyIssues', () => {
  it.each<[string, unknown]>([
    ['plain object', { a: 1, b: [true, null, 'x'], c: { d: 1.5 } }],
    ['non-ASCII text and a surrogate pair', { name: 'Café ☕ 😀' }],
    ['big but finite numbers', [1e308, -1e308, 5e-324]],
    ['nesting at the limit', nest(MAX_JSON_DEPTH)],
    ['empty containers', [{}, []]],
  ])('accepts %s', (_name, value) => {
    expect(jsonSafetyIssues(value, 'meta')).toEqual([]);
  });

  it.each<[string, unknown, string, string]>([
    ['NUL in a string', { a: 'x\u0000y' }, 'meta.a', 'a must not contain NUL characters'],
    ['NUL in a key', { 'k\u0000': 1 }, 'meta.k\u0000', 'key must not contain NUL characters'],
    [
      'lone high surrogate',
      { list: ['ok', '\ud800'] },
      'meta.list.1',
      'list[1] must not contain unpaired UTF-16 surrogates',
    ],
    [
      'lone low surrogate',
      { s: 'a\udc00' },
      'meta.s',
      's must not contain unpaired UTF-16 surrogates',
    ],
    ['overflowed number', { n: Infinity }, 'meta.n', 'n is out of range'],
    ['negative overflow', [-Infinity], 'meta.0', 'meta[0] is out of range'],
    ['NaN', { n: NaN }, 'meta.n', 'n is out of range'],
  ])('rejects %s', (_name, value, path, message) => {
    expect(jsonSafetyIssues(value, 'meta')).toEqual([{ path, message }]);
  });

  it('rejects nesting deeper than the limit without overflowing the stack', () => {
    const issues = jsonSafetyIssues(nest(100_000), 'extra');
    expect(issues).toHaveLength(1);
    expect(issues[0].message).toContain(`nested more than ${MAX_JSON_DEPTH} levels deep`);
    expect(issues[0].path.split('.')).toHaveLength(MAX_JSON_DEPTH + 1);
  });

  it('checks top-level strings and stops after the limit', () => {
    expect(jsonSafetyIssues('a\u0000', 'name')).toEqual([
      { path: 'name', message: 'name must not contain NUL characters' },
    ]);
    const many = Array.from({ length: 50 }, () => '\u0000');
    expect(jsonSafetyIssues(many, 'tags', 5)).toHaveLength(5);
  });
});

function nest(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i += 1) value = [value];
  return value;
}
