import { VersionedCache } from './versioned-cache';

describe('VersionedCache', () => {
  it('answers the entry held for a key, with the version it was stored at', () => {
    const cache = new VersionedCache<string>(100, 10, 0);
    expect(cache.peek('k')).toBeUndefined();
    cache.set('k', '3', 'three', 10);
    expect(cache.peek('k')).toEqual({ version: '3', value: 'three' });
    cache.set('k', '4', 'four', 20);
    expect(cache.peek('k')).toEqual({ version: '4', value: 'four' });
    expect(cache.size).toBe(1);
    expect(cache.bytes).toBe(20);
  });

  it.each([
    // [maxBytes, maxEntries, stores (key, bytes), keys kept]
    [
      100,
      10,
      [
        ['a', 40],
        ['b', 40],
        ['c', 40],
      ],
      ['b', 'c'],
    ],
    [
      100,
      2,
      [
        ['a', 10],
        ['b', 10],
        ['c', 10],
      ],
      ['b', 'c'],
    ],
    [
      100,
      10,
      [
        ['a', 60],
        ['b', 101],
      ],
      ['a'],
    ],
    [0, 10, [['a', 1]], []],
    [100, 0, [['a', 1]], []],
    [100, 10, [['a', 100]], ['a']],
  ] as Array<[number, number, Array<[string, number]>, string[]]>)(
    'bytes %d, entries %d: stores %j keep %j (least recently used go first)',
    (maxBytes, maxEntries, stores, kept) => {
      const cache = new VersionedCache<string>(maxBytes, maxEntries, 0);
      for (const [key, bytes] of stores) cache.set(key, '1', key, bytes);
      const held = stores.map(([key]) => key).filter((key) => cache.peek(key) !== undefined);
      expect(held).toEqual(kept);
      expect(cache.size).toBe(kept.length);
      expect(cache.bytes).toBeLessThanOrEqual(maxBytes);
    },
  );

  it('a read makes an entry recently used', () => {
    const cache = new VersionedCache<string>(100, 2, 0);
    cache.set('a', '1', 'a', 10);
    cache.set('b', '1', 'b', 10);
    cache.peek('a');
    cache.set('c', '1', 'c', 10);
    expect(cache.peek('a')).toBeDefined();
    expect(cache.peek('b')).toBeUndefined();
    expect(cache.bytes).toBe(20);
  });
});
