import { CACHE_ENTRY_OVERHEAD_BYTES } from '../../common/cache/owned-bytes';
import { ProjectGraphCache } from './graph-cache';

describe('ProjectGraphCache', () => {
  it('answers a value only for the version it was stored with', () => {
    const cache = new ProjectGraphCache(100, 0);
    cache.set('response', 'p1', '7', 'seven', 10);
    expect(cache.get('response', 'p1', '7')).toBe('seven');
    expect(cache.get('response', 'p1', '8')).toBeUndefined();
    expect(cache.get('response', 'p1', '6')).toBeUndefined();
    expect(cache.get('topology', 'p1', '7')).toBeUndefined();
    expect(cache.get('response', 'p2', '7')).toBeUndefined();
  });

  it('keeps one version per (kind, project): the latest stored wins', () => {
    const cache = new ProjectGraphCache(100, 0);
    cache.set('response', 'p1', '7', 'seven', 10);
    cache.set('topology', 'p1', '7', 'index', 10);
    cache.set('response', 'p1', '9', 'nine', 30);
    expect(cache.get('response', 'p1', '7')).toBeUndefined();
    expect(cache.get('response', 'p1', '9')).toBe('nine');
    expect(cache.get('topology', 'p1', '7')).toBe('index');
    // an older version stored later replaces it too (its writer rolled back, or a slow reader)
    cache.set('response', 'p1', '8', 'eight', 5);
    expect(cache.get('response', 'p1', '9')).toBeUndefined();
    expect(cache.get('response', 'p1', '8')).toBe('eight');
    expect(cache.size).toBe(2);
    expect(cache.bytes).toBe(15);
  });

  it.each<[string, number, Array<[string, number]>, string[], string[]]>([
    [
      'evicts the least recently stored first',
      30,
      [
        ['a', 10],
        ['b', 10],
        ['c', 10],
        ['d', 10],
      ],
      ['b', 'c', 'd'],
      ['a'],
    ],
    [
      'evicts as many as needed for a large value',
      30,
      [
        ['a', 10],
        ['b', 10],
        ['c', 25],
      ],
      ['c'],
      ['a', 'b'],
    ],
    ['keeps a value of exactly the bound', 30, [['a', 30]], ['a'], []],
    [
      'does not keep a value larger than the bound',
      30,
      [
        ['a', 10],
        ['b', 31],
      ],
      ['a'],
      ['b'],
    ],
    [
      'keeps nothing with a bound of 0',
      0,
      [
        ['a', 0],
        ['b', 1],
      ],
      [],
      ['a', 'b'],
    ],
  ])('%s', (_name, bound, stores, kept, gone) => {
    const cache = new ProjectGraphCache(bound, 0);
    for (const [project, bytes] of stores) cache.set('response', project, '1', project, bytes);
    for (const project of kept) expect(cache.get('response', project, '1')).toBe(project);
    for (const project of gone) expect(cache.get('response', project, '1')).toBeUndefined();
    expect(cache.bytes).toBeLessThanOrEqual(bound);
  });

  it('a read makes an entry the most recently used', () => {
    const cache = new ProjectGraphCache(30, 0);
    cache.set('response', 'a', '1', 'a', 10);
    cache.set('response', 'b', '1', 'b', 10);
    cache.set('response', 'c', '1', 'c', 10);
    expect(cache.get('response', 'a', '1')).toBe('a');
    cache.set('response', 'd', '1', 'd', 10);
    expect(cache.get('response', 'b', '1')).toBeUndefined();
    expect(cache.get('response', 'a', '1')).toBe('a');
    expect(cache.bytes).toBe(30);
  });

  it('counts each entry with its overhead by default: tiny graphs cannot pile up', () => {
    const cache = new ProjectGraphCache(5 * (3 + CACHE_ENTRY_OVERHEAD_BYTES));
    for (let i = 0; i < 100; i++) cache.set('response', `p${i}`, '1', 'abc', 3);
    expect(cache.size).toBe(5);
    expect(cache.bytes).toBe(5 * (3 + CACHE_ENTRY_OVERHEAD_BYTES));
  });
});
