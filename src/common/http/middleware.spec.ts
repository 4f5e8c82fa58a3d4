import type { Request } from 'express';
import {
  jsonShapeIssue,
  MAX_JSON_ARRAY_ITEMS,
  MAX_JSON_DEPTH,
  MAX_JSON_OBJECT_KEYS,
  MAX_JSON_VALUES,
  routeLabel,
} from './middleware';
import { registerRoutes } from './route-table';

/** An object with `n` keys. */
const wide = (n: number): Record<string, number> =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

/** `depth` levels of arrays: [[[…]]]. */
const nested = (depth: number): unknown =>
  JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as unknown;

describe('jsonShapeIssue', () => {
  it.each<[string, unknown]>([
    ['null', null],
    ['a scalar', 'text'],
    ['an empty object', {}],
    ['a small body', { a: 1, b: [1, 2], c: { d: [{ e: 'x' }] } }],
    ['the largest finite numbers', JSON.parse('{"a":1.7976931348623157e308,"b":[-1e308,5e-324]}')],
    ['nesting at the limit', nested(MAX_JSON_DEPTH)],
    ['an array at the limit', { rows: new Array(MAX_JSON_ARRAY_ITEMS).fill(0) }],
    ['an object at the key limit', { values: wide(MAX_JSON_OBJECT_KEYS) }],
    [
      'many arrays at the limit, under the value count',
      {
        a: new Array(MAX_JSON_ARRAY_ITEMS).fill([1, 2]),
        b: new Array(MAX_JSON_ARRAY_ITEMS).fill('x'),
      },
    ],
  ])('accepts %s', (_label, value) => {
    expect(jsonShapeIssue(value)).toBeNull();
  });

  it.each<[string, unknown, string, RegExp]>([
    [
      'nesting one past the limit',
      nested(MAX_JSON_DEPTH + 1),
      'body',
      /nesting must not be deeper than 64 levels/,
    ],
    [
      '200,000 levels (no recursion)',
      nested(200_000),
      'body',
      /nesting must not be deeper than 64 levels/,
    ],
    [
      'a top-level array one past the limit',
      new Array(MAX_JSON_ARRAY_ITEMS + 1).fill(0),
      'body',
      /^body must not hold more than 10000 items \(it holds 10001\)$/,
    ],
    [
      'a nested array past the limit, named by its path',
      { rows: [{ values: {} }, { tags: new Array(100_000).fill(0) }] },
      'rows.1.tags',
      /^rows\.1\.tags must not hold more than 10000 items \(it holds 100000\)$/,
    ],
    [
      'too many values spread over arrays under the limit',
      { a: Array.from({ length: 200 }, () => new Array(MAX_JSON_ARRAY_ITEMS).fill(0)) },
      'body',
      new RegExp(`must not hold more than ${MAX_JSON_VALUES} values`),
    ],
    [
      'too many values spread over objects under the key limit',
      { a: Array.from({ length: 1_002 }, () => wide(MAX_JSON_OBJECT_KEYS - 1)) },
      'body',
      new RegExp(`must not hold more than ${MAX_JSON_VALUES} values`),
    ],
    [
      'an object one key past the limit',
      wide(MAX_JSON_OBJECT_KEYS + 1),
      'body',
      /^body must not have more than 1000 keys \(it has 1001\)$/,
    ],
    [
      'a nested object past the limit, named by its path (the public login: 40,000 keys took 1.7 s)',
      { rows: [{ values: {} }, { values: wide(40_000) }] },
      'rows.1.values',
      /^rows\.1\.values must not have more than 1000 keys \(it has 40000\)$/,
    ],
    [
      'a number that overflowed while parsing',
      JSON.parse('{"rows":[{"values":{"x":1e999}}]}') as unknown,
      'rows.0.values.x',
      /^rows\.0\.values\.x is a number out of range \(beyond ±1\.8e308\)$/,
    ],
    [
      'a negative one in a list',
      JSON.parse('{"a":[1,-1e999]}') as unknown,
      'a.1',
      /^a\.1 is a number out of range/,
    ],
  ])('refuses %s (on %s)', (_label, value, path, message) => {
    const issue = jsonShapeIssue(value);
    expect(issue?.path).toBe(path);
    expect(issue?.message).toMatch(message);
  });
});

describe('routeLabel', () => {
  beforeAll(() => registerRoutes({ '/api/v1/projects/{id}': { get: {} } }));

  it.each([
    ['/api/v1/projects/abc?x=1', '/api/v1/projects/:id'],
    // Absolute form (as proxies send it) and another letter case: the template Express routes them to.
    ['http://127.0.0.1:8080/api/v1/projects/abc?x=1', '/api/v1/projects/:id'],
    ['/api/v1/Projects/abc', '/api/v1/projects/:id'],
    ['/api/v1/nothing', 'unmatched'],
  ])('labels %p as %p before routing', (originalUrl, label) => {
    expect(routeLabel({ originalUrl, url: originalUrl } as Request)).toBe(label);
  });
});
