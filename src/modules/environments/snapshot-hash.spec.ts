import fc from 'fast-check';
import {
  canonicalJson,
  compareCodePoints,
  JsonFloat,
  sameCanonicalJson,
  SNAPSHOT_HASH_PREFIX,
  snapshotHash,
} from './snapshot-hash';

/**
 * Expected strings below were produced by CPython 3.11
 * `json.dumps(v, sort_keys=True, separators=(',', ':'), ensure_ascii=True)`, the reference
 * implementation of the canonical form.
 */
describe('canonicalJson', () => {
  describe('scalars', () => {
    it.each<[string, unknown, string]>([
      ['null', null, 'null'],
      ['true', true, 'true'],
      ['false', false, 'false'],
      ['zero', 0, '0'],
      ['negative zero (an integer in JSON)', -0, '0'],
      ['negative integer', -1, '-1'],
      ['integer', 42, '42'],
      ['2^53', 2 ** 53, '9007199254740992'],
      ['1e20 is still an integer', 1e20, '100000000000000000000'],
      ['1e21 is a float, as Python parses JSON.stringify output', 1e21, '1e+21'],
      ['float 1.5', 1.5, '1.5'],
      ['float -2.25', -2.25, '-2.25'],
      ['float 0.1', 0.1, '0.1'],
      ['float 0.1 + 0.2', 0.1 + 0.2, '0.30000000000000004'],
      ['float 1e-5 (JS would print 0.00001)', 0.00001, '1e-05'],
      ['float 2.5e-5', 0.000025, '2.5e-05'],
      ['float 1.5e-7 (JS would print 1.5e-7)', 1.5e-7, '1.5e-07'],
      ['float 0.0001 stays positional', 0.0001, '0.0001'],
      ['float 0.001234', 0.001234, '0.001234'],
      ['float 123456789.125', 123456789.125, '123456789.125'],
      ['smallest subnormal', 5e-324, '5e-324'],
      ['largest double', 1.7976931348623157e308, '1.7976931348623157e+308'],
      ['negative small float', -1e-10, '-1e-10'],
    ])('%s', (_name, input, expected) => {
      expect(canonicalJson(input)).toBe(expected);
    });
  });

  describe('JsonFloat keeps Python float formatting', () => {
    it.each<[number, string]>([
      [1, '1.0'],
      [100, '100.0'],
      [1e16, '1e+16'],
      [1e22, '1e+22'],
      [-0, '-0.0'],
      [9999999999999998, '9999999999999998.0'],
      [0.5, '0.5'],
      [2.5e-5, '2.5e-05'],
    ])('%p → %s', (input, expected) => {
      expect(canonicalJson(new JsonFloat(input))).toBe(expected);
    });

    it('serialises as a plain number through JSON.stringify', () => {
      expect(JSON.stringify({ n: new JsonFloat(1) })).toBe('{"n":1}');
    });
  });

  describe('strings', () => {
    it.each<[string, string, string]>([
      ['empty', '', '""'],
      ['plain ASCII', 'plain', '"plain"'],
      ['quote and backslash', 'say "hi" \\ back', '"say \\"hi\\" \\\\ back"'],
      ['slash is not escaped', 'a/b', '"a/b"'],
      [
        'short control escapes',
        'line\nbreak\ttab\rcr\bbs\fff',
        '"line\\nbreak\\ttab\\rcr\\bbs\\fff"',
      ],
      ['other control characters', '\u0000\u0001\u001f', '"\\u0000\\u0001\\u001f"'],
      ['DEL is escaped', '\u007f', '"\\u007f"'],
      ['BMP non-ASCII, lower-case hex', 'Café ☕', '"Caf\\u00e9 \\u2615"'],
      ['astral character as a surrogate pair', '😀', '"\\ud83d\\ude00"'],
      ['lone surrogate', '\ud800', '"\\ud800"'],
      ['Latin-1 and BMP edges', '\u0080\u00ff\u0100\uffff', '"\\u0080\\u00ff\\u0100\\uffff"'],
    ])('%s', (_name, input, expected) => {
      expect(canonicalJson(input)).toBe(expected);
    });

    it('output is pure ASCII', () => {
      expect(canonicalJson({ ключ: 'значение 🚀' })).toMatch(/^[\x20-\x7e]*$/);
    });
  });

  describe('containers', () => {
    it.each<[string, unknown, string]>([
      ['empty array', [], '[]'],
      ['empty object', {}, '{}'],
      ['nested empties', [[], {}], '[[],{}]'],
      [
        'keys sorted by code point',
        { b: 1, a: 2, A: 3, _: 4, aa: 5 },
        '{"A":3,"_":4,"a":2,"aa":5,"b":1}',
      ],
      [
        'keys sorted recursively, array order kept',
        { z: { y: [3, { d: 1, c: 2 }], x: null } },
        '{"z":{"x":null,"y":[3,{"c":2,"d":1}]}}',
      ],
      [
        'astral keys sort after U+FF01 (code point, not UTF-16 order)',
        { '\uff01': 1, '😀': 2, é: 3 },
        '{"\\u00e9":3,"\\uff01":1,"\\ud83d\\ude00":2}',
      ],
      [
        'a lone surrogate key is its own code point (below U+E000)',
        { '\ue000': 2, '😀': 3, '\ud800': 1, '\ud800x': 4 },
        '{"\\ud800":1,"\\ud800x":4,"\\ue000":2,"\\ud83d\\ude00":3}',
      ],
      ['empty and blank keys', { ' ': 2, '': 1 }, '{"":1," ":2}'],
    ])('%s', (_name, input, expected) => {
      expect(canonicalJson(input)).toBe(expected);
    });

    it('is independent of key insertion order', () => {
      expect(canonicalJson({ a: 1, b: { c: 1, d: 2 } })).toBe(
        canonicalJson({ b: { d: 2, c: 1 }, a: 1 }),
      );
    });

    it('keeps an own "__proto__" key like any other key', () => {
      const value: unknown = JSON.parse('{"__proto__":{"x":1},"a":1}');
      expect(canonicalJson(value)).toBe('{"__proto__":{"x":1},"a":1}');
    });

    it('handles very deep nesting without overflowing the stack', () => {
      const depth = 100_000;
      const text = '['.repeat(depth) + ']'.repeat(depth);
      expect(canonicalJson(JSON.parse(text))).toBe(text);
    });

    it('allows the same object twice when it is not circular', () => {
      const shared = { a: 1 };
      expect(canonicalJson([shared, { shared }])).toBe('[{"a":1},{"shared":{"a":1}}]');
    });
  });

  describe('JavaScript-only values', () => {
    it('drops undefined object members and writes undefined array items as null', () => {
      expect(canonicalJson({ a: undefined, b: [undefined, 1] })).toBe('{"b":[null,1]}');
    });

    it('leaves out members whose toJSON() gives undefined, as JSON.stringify does', () => {
      const hidden = { toJSON: (): undefined => undefined };
      expect(canonicalJson({ a: hidden, b: [hidden] })).toBe('{"b":[null]}');
      expect(canonicalJson({ a: hidden, b: [hidden] })).toBe(
        JSON.stringify({ a: hidden, b: [hidden] }),
      );
    });

    it('uses toJSON (e.g. Date)', () => {
      expect(canonicalJson({ at: new Date('2026-05-01T10:00:00.000Z') })).toBe(
        '{"at":"2026-05-01T10:00:00.000Z"}',
      );
    });

    it.each<[string, () => unknown]>([
      ['top-level undefined', () => undefined],
      ['NaN', () => ({ n: NaN })],
      ['Infinity', () => [Infinity]],
      ['-Infinity float', () => new JsonFloat(-Infinity)],
      ['bigint', () => ({ n: BigInt(1) })],
      ['function', () => ({ f: () => 1 })],
      ['symbol', () => [Symbol('s')]],
      [
        'circular structure',
        () => {
          const a: Record<string, unknown> = {};
          a.self = a;
          return a;
        },
      ],
    ])('rejects %s', (_name, make) => {
      expect(() => canonicalJson(make())).toThrow(TypeError);
    });
  });
});

describe('snapshotHash', () => {
  // Reference environments-datasets-cases.md §1.4 test vectors (bare hex there; CONTRACT §8 adds the
  // algorithm prefix).
  const minimal = {
    environment: {
      name: 'Env ok',
      kind: 'custom',
      status: 'active',
      description: null,
      tags: [],
      use_cases: [],
      schema_version: 1,
      meta: {},
      extra: {},
    },
    topology: { load_generators: [], system_under_test: [], supporting_services: [], metadata: {} },
    project_id: 'p1',
  };
  const unicode = {
    ...minimal,
    environment: {
      ...minimal.environment,
      name: 'Café ☕',
      meta: { n: new JsonFloat(1), b: true },
    },
  };

  it.each<[string, unknown, string, string]>([
    [
      'minimal create',
      minimal,
      '{"environment":{"description":null,"extra":{},"kind":"custom","meta":{},"name":"Env ok","schema_version":1,"status":"active","tags":[],"use_cases":[]},"project_id":"p1","topology":{"load_generators":[],"metadata":{},"supporting_services":[],"system_under_test":[]}}',
      'sha256:d859f9975c6d049857a856cdbe040c300529412673b65258f6311b1e33e276b8',
    ],
    [
      'non-ASCII name and float meta',
      unicode,
      '{"environment":{"description":null,"extra":{},"kind":"custom","meta":{"b":true,"n":1.0},"name":"Caf\\u00e9 \\u2615","schema_version":1,"status":"active","tags":[],"use_cases":[]},"project_id":"p1","topology":{"load_generators":[],"metadata":{},"supporting_services":[],"system_under_test":[]}}',
      'sha256:99d4429f5ff716fcffcc133c8aa45b9eccc3532955aeb1cce99fdd26300b89e2',
    ],
  ])('reference vector: %s', (_name, snapshot, canonical, hash) => {
    expect(canonicalJson(snapshot)).toBe(canonical);
    expect(snapshotHash(snapshot)).toBe(hash);
  });

  it('has the sha256 prefix and 64 lower-case hex digits', () => {
    expect(SNAPSHOT_HASH_PREFIX).toBe('sha256:');
    expect(snapshotHash({ any: 'thing' })).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('ignores key order and changes with content', () => {
    expect(snapshotHash({ a: 1, b: 2 })).toBe(snapshotHash({ b: 2, a: 1 }));
    expect(snapshotHash({ a: 1 })).not.toBe(snapshotHash({ a: 2 }));
  });
});

/** Keys that exercise the code point order: astral, lone surrogate, above the surrogates, ASCII. */
const trickyKey = fc.string({
  unit: fc.constantFrom('a', 'b', 'Z', '1', 'é', '\uff01', '\ue000', '😀', '\ud800', '"', '\u007f'),
  maxLength: 4,
});
const jsonData = fc.letrec((tie) => ({
  value: fc.oneof(
    { maxDepth: 4 },
    fc.constantFrom(null, true, false, 0, -0, 1, -1.5, 1e-7, 1e21, 0.1 + 0.2),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string({ unit: trickyKey, maxLength: 3 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(trickyKey, tie('value'), { maxKeys: 5 }),
  ),
})).value;

/** A copy of `value` whose objects list their keys in reverse order. */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).reverse()) {
    Object.defineProperty(out, key, {
      value: reordered((value as Record<string, unknown>)[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

describe('canonicalJson: the recursive writer and the iterative one it hands deep values to', () => {
  // Objects nested `depth` levels, each with its keys out of order: `{"b":1,"a":{…}}`.
  function nested(depth: number): { value: unknown; text: string } {
    let value: unknown = 'end';
    let text = '"end"';
    for (let i = 0; i < depth; i += 1) {
      value = { b: i, a: value };
      text = `{"a":${text},"b":${i}}`;
    }
    return { value, text };
  }
  it.each([1, 64, 511, 512, 513, 600, 5_000])('sorts keys at %i levels', (depth) => {
    const { value, text } = nested(depth);
    expect(canonicalJson(value)).toBe(text);
  });

  it('rejects a circular structure below the recursive depth, and a deep one', () => {
    const shallow: Record<string, unknown> = { a: 1 };
    shallow.self = { again: shallow };
    expect(() => canonicalJson(shallow)).toThrow('circular structure');
    const deep = nested(1_000).value as Record<string, unknown>;
    let inner = deep;
    while (typeof inner.a === 'object') inner = inner.a as Record<string, unknown>;
    inner.a = deep;
    expect(() => canonicalJson(deep)).toThrow('circular structure');
  });

  it('writes the same text whatever the key order, and text that parses back', () => {
    fc.assert(
      fc.property(jsonData, (value) => {
        const text = canonicalJson(value);
        expect(canonicalJson(reordered(value))).toBe(text);
        expect(text).toMatch(/^[\x20-\x7e]*$/);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('orders the keys of every object by code point', () => {
    fc.assert(
      fc.property(fc.dictionary(trickyKey, fc.integer(), { maxKeys: 8 }), (record) => {
        const keys = Object.keys(record).sort(compareCodePoints);
        const expected = `{${keys.map((k) => `${canonicalJson(k)}:${record[k]}`).join(',')}}`;
        expect(canonicalJson(record)).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });
});

describe('sameCanonicalJson', () => {
  it.each<[string, unknown, unknown, boolean]>([
    ['key order', { a: 1, b: [1, { c: 2, d: 3 }] }, { b: [1, { d: 3, c: 2 }], a: 1 }, true],
    ['-0 and 0', { n: -0 }, { n: 0 }, true],
    ['an undefined member is left out', { a: undefined, b: 1 }, { b: 1 }, true],
    ['an undefined array item is null', [undefined, 1], [null, 1], true],
    [
      'toJSON is applied',
      { at: new Date('2026-05-01T10:00:00.000Z') },
      { at: '2026-05-01T10:00:00.000Z' },
      true,
    ],
    ['a float is not an integer', [1], [new JsonFloat(1)], false],
    ['a changed value', { a: { b: 1 } }, { a: { b: 2 } }, false],
    ['array order', [1, 2], [2, 1], false],
    ['array length', [1, 2], [1, 2, 3], false],
    ['an extra key', { a: 1 }, { a: 1, b: 2 }, false],
    ['object and array', {}, [], false],
    ['string and number', '1', 1, false],
    ['null and object', null, {}, false],
  ])('%s', (_name, a, b, same) => {
    expect(sameCanonicalJson(a, b)).toBe(same);
    expect(sameCanonicalJson(b, a)).toBe(same);
    expect(canonicalJson(a) === canonicalJson(b)).toBe(same);
  });

  it('refuses what JSON cannot carry, as canonicalJson does', () => {
    expect(() => sameCanonicalJson({ n: NaN }, { n: NaN })).toThrow(TypeError);
    expect(() => sameCanonicalJson([Infinity], [1])).toThrow(TypeError);
  });

  it('answers exactly whether the canonical texts are equal', () => {
    const pairs = fc.oneof(
      fc.tuple(jsonData, jsonData),
      jsonData.map((v) => [v, reordered(v)] as const),
      jsonData.map((v) => [v, JSON.parse(JSON.stringify([v]) ?? 'null')[0] as unknown] as const),
    );
    fc.assert(
      fc.property(pairs, ([a, b]) => {
        expect(sameCanonicalJson(a, b)).toBe(canonicalJson(a) === canonicalJson(b));
      }),
      { numRuns: 500 },
    );
  });
});
