import { unexpectedBodyFields } from './roles.guard';

describe('unexpectedBodyFields (a body sent to an operation that takes none)', () => {
  it.each<[string, unknown, Record<string, string[]>]>([
    ['no body', undefined, {}],
    ['null', null, {}],
    ['an empty object', {}, {}],
    ['an empty array', [], {}],
    ['fields', { foo: 1, bar: null }, { foo: ['Unknown field'], bar: ['Unknown field'] }],
    ['a field named like an Object member', { toString: 1 }, { toString: ['Unknown field'] }],
    ['a non-empty array', [1], { body: ['This operation takes no request body'] }],
    ['a scalar', 'x', { body: ['This operation takes no request body'] }],
  ])('%s', (_name, body, expected) => {
    expect({ ...unexpectedBodyFields(body) }).toEqual(expected);
  });

  it('lists at most 100 fields', () => {
    const body = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, i]));
    expect(Object.keys(unexpectedBodyFields(body))).toHaveLength(100);
  });
});
