import { freeFormIssues, isFreeFormKey } from './free-form';

describe('free-form object keys', () => {
  it.each([
    'a',
    'cpu',
    'cpu_cores',
    'cpu-cores',
    'app.kubernetes.io/name',
    'ext:payments',
    '@type',
    '__proto__',
    'constructor',
    'os version',
    'ключ',
    'café',
    'é', // e + combining acute accent
    '日本',
    '0',
    'x'.repeat(100),
  ])('accepts %j', (key) => {
    expect(isFreeFormKey(key)).toBe(true);
  });

  it.each([
    '',
    '$ne',
    '$where',
    ' a',
    'a ',
    '.a',
    '-a',
    ':a',
    '/a',
    'a"b',
    "a'b",
    'a[0]',
    'a{b}',
    'a\u0000b',
    'a\nb',
    'a\tb',
    'a\u200bb', // zero-width space (format character)
    'a=1',
    'a;b',
    'x'.repeat(101),
    '\u0301', // a combining mark cannot start a key
  ])('refuses %j', (key) => {
    expect(isFreeFormKey(key)).toBe(false);
  });

  it('checks keys at every level, arrays included, and names the object holding the key', () => {
    const value = { ok: { deep: [{ $ne: null }] }, 'a b': 1 };
    expect(freeFormIssues(value, 'meta')).toEqual([
      {
        path: 'meta.ok.deep.0',
        message: expect.stringContaining('deep[0] has a key that is not allowed ("$ne")'),
      },
    ]);
  });

  it('bounds the number of keys of each object', () => {
    const wide = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`k${i}`, i]));
    expect(freeFormIssues({ wide }, 'extra', 3)).toEqual([
      { path: 'extra.wide', message: 'wide has 4 keys; at most 3 are allowed' },
    ]);
    expect(freeFormIssues({ wide }, 'extra', 4)).toEqual([]);
  });

  it('shortens a long key in the message and stops at the limit', () => {
    const value = Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [`$${i}${'y'.repeat(60)}`, i]),
    );
    const issues = freeFormIssues(value, 'meta', 200, 5);
    expect(issues).toHaveLength(5);
    expect(issues[0].message.length).toBeLessThan(250);
  });

  it('ignores scalars and survives hostile nesting without recursion', () => {
    expect(freeFormIssues('x', 'meta')).toEqual([]);
    let deep: unknown = { $bad: 1 };
    for (let i = 0; i < 100_000; i += 1) deep = { a: deep };
    expect(freeFormIssues(deep, 'meta')).toHaveLength(1);
  });
});
