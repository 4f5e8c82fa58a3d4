import { AppException } from '../errors/app-exception';
import { CURSOR_MAX_LENGTH, CursorCodec, cursorScope } from './cursor';
import { keysetAfter, keysetColumns, keysetOrderBy, KeysetOrder, KeysetPaging } from './keyset';

const SECRET = 'a test secret of at least thirty-two bytes!!';
const codec = new CursorCodec(SECRET);
const SCOPE = cursorScope('test-runs', { projectId: 'p', sortBy: 'name', sortOrder: 'asc' });
const VALUES = ['2026-02-01 00:00:00.123456+00', '019a1f7e-5c3b-7d2a-9e41-6b8f2c0d4a17'];

/** The code of the problem `fn` throws, or 'ok' with the values it returned. */
function outcome(fn: () => string[]): string | string[] {
  try {
    return fn();
  } catch (e) {
    if (e instanceof AppException) return e.code;
    throw e;
  }
}

describe('CursorCodec', () => {
  const good = codec.encode(SCOPE, VALUES);
  const [payload, tag] = good.split('.');
  const flip = (s: string, i: number) =>
    s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  const forged = (values: unknown) =>
    `${Buffer.from(JSON.stringify(values)).toString('base64url')}.${tag}`;

  it('round-trips the key values of a row in its scope', () => {
    expect(codec.decode(SCOPE, good, 2)).toEqual(VALUES);
    // Opaque and URL-safe: base64url payload, a dot, a 128-bit tag.
    expect(good).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
  });

  // The longest text sort key of any list is a test case title of 500 characters (the run-case
  // list sorts by the same titles; names are at most 255).
  it.each([
    ['control characters (6 bytes each as JSON)', '\u0001'.repeat(500)],
    ['astral characters (4 bytes each)', '😀'.repeat(500)],
    ['quotes and backslashes', '"\\'.repeat(250)],
  ])('the cursor of the longest sort key it can be handed, %s, is accepted back', (_label, key) => {
    const cursor = codec.encode(SCOPE, [key.toLowerCase(), VALUES[1]]);
    expect(cursor.length).toBeLessThanOrEqual(CURSOR_MAX_LENGTH);
    expect(codec.decode(SCOPE, cursor, 2)).toEqual([key.toLowerCase(), VALUES[1]]);
  });

  it.each<[string, string, string, number]>([
    ['empty', '', SCOPE, 2],
    ['no tag', payload, SCOPE, 2],
    ['empty tag', `${payload}.`, SCOPE, 2],
    ['empty payload', `.${tag}`, SCOPE, 2],
    ['two dots', `${good}.${tag}`, SCOPE, 2],
    ['altered payload', `${flip(payload, 5)}.${tag}`, SCOPE, 2],
    ['altered tag', `${payload}.${flip(tag, 3)}`, SCOPE, 2],
    ['truncated tag', good.slice(0, -1), SCOPE, 2],
    ['tag too long', `${good}A`, SCOPE, 2],
    ['not base64url', `${payload}.${tag.slice(0, -1)}+`, SCOPE, 2],
    ['forged values with a copied tag', forged(['9999', VALUES[1]]), SCOPE, 2],
    [
      'another list',
      good,
      cursorScope('test-cases', { projectId: 'p', sortBy: 'name', sortOrder: 'asc' }),
      2,
    ],
    [
      'another filter',
      good,
      cursorScope('test-runs', { projectId: 'q', sortBy: 'name', sortOrder: 'asc' }),
      2,
    ],
    [
      'another sort',
      good,
      cursorScope('test-runs', { projectId: 'p', sortBy: 'name', sortOrder: 'desc' }),
      2,
    ],
    ['another key count', good, SCOPE, 3],
  ])('%s → invalid_cursor', (_name, cursor, scope, count) => {
    expect(outcome(() => codec.decode(scope, cursor, count))).toBe('invalid_cursor');
  });

  it('another secret (another deployment) → invalid_cursor', () => {
    const other = new CursorCodec(`${SECRET}?`);
    expect(outcome(() => other.decode(SCOPE, good, 2))).toBe('invalid_cursor');
  });

  it.each<[string, unknown]>([
    ['not an array', { a: 1 }],
    ['numbers', [1, 2]],
    ['null', null],
  ])('a payload tagged correctly but malformed (%s) → invalid_cursor', (_name, values) => {
    // Tagged with the real key: only a holder of AUTH_SECRET could make one, still refused.
    const text = Buffer.from(JSON.stringify(values)).toString('base64url');
    const c = codec.encode(SCOPE, []).replace(/^[^.]*/, text);
    expect(outcome(() => codec.decode(SCOPE, c, 2))).toBe('invalid_cursor');
  });
});

describe('cursorScope: the identity of a list', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>, boolean]>([
    ['key order does not matter', { a: 1, b: 2 }, { b: 2, a: 1 }, true],
    ['absent equals undefined', { a: 1 }, { a: 1, b: undefined }, true],
    ['repeated values in any order', { s: ['x', 'y'] }, { s: ['y', 'x', 'y'] }, true],
    [
      'dates as instants',
      { d: new Date('2026-01-01T00:00:00Z') },
      { d: new Date(Date.UTC(2026, 0, 1)) },
      true,
    ],
    ['another value', { a: 1 }, { a: 2 }, false],
    ['another set of values', { s: ['x'] }, { s: ['x', 'y'] }, false],
    ['a value vs none', { a: 1 }, {}, false],
    ['null vs absent', { a: null }, {}, false],
  ])('%s', (_name, a, b, same) => {
    expect(cursorScope('l', a) === cursorScope('l', b)).toBe(same);
  });

  it('the list name is part of it', () => {
    expect(cursorScope('a', {})).not.toBe(cursorScope('b', {}));
  });
});

describe('keyset SQL', () => {
  const order: KeysetOrder = {
    keys: [
      { sql: 'lower(r.name)', type: 'text' },
      { sql: 'r.id', type: 'uuid' },
    ],
    dir: 'DESC',
  };

  it('orders, selects the keys as text, and compares the row of keys', () => {
    const params: unknown[] = ['project'];
    const add = (v: unknown) => `$${params.push(v)}`;
    expect(keysetOrderBy(order)).toBe('lower(r.name) DESC, r.id DESC');
    expect(keysetColumns(order)).toBe('(lower(r.name))::text AS _k0, (r.id)::text AS _k1');
    expect(keysetAfter(order, ['b', 'id-1'], add)).toBe(
      '(lower(r.name), r.id) < ($2::text, $3::uuid)',
    );
    expect(keysetAfter({ ...order, dir: 'ASC' }, ['b', 'id-1'], add)).toBe(
      '(lower(r.name), r.id) > ($4::text, $5::uuid)',
    );
    expect(params).toEqual(['project', 'b', 'id-1', 'b', 'id-1']);
  });

  it('pages: page size + 1 rows read, the next cursor from the last row kept', () => {
    const first = new KeysetPaging(codec, SCOPE, order, '', 2);
    expect(first.request).toEqual({ order, after: undefined, limit: 3 });
    const rows = [
      { id: 'a', _k0: 'x', _k1: 'a' },
      { id: 'b', _k0: 'y', _k1: 'b' },
      { id: 'c', _k0: 'z', _k1: 'c' },
    ];
    const page = first.page(rows, (r) => r.id);
    expect(page).toMatchObject({ items: ['a', 'b'], page_size: 2, has_next: true });
    const next = new KeysetPaging(codec, SCOPE, order, page.next_cursor as string, 2);
    expect(next.request.after).toEqual(['y', 'b']);
    expect(next.page(rows.slice(0, 2), (r) => r.id)).toEqual({
      items: ['a', 'b'],
      page_size: 2,
      has_next: false,
      next_cursor: null,
    });
  });
});
