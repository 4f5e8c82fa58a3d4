import { CACHE_ENTRY_OVERHEAD_BYTES } from '../../common/cache/owned-bytes';
import { SnapshotCache } from './snapshot-cache';

const bytes = (n: number, fill = 'x') => Buffer.from(fill.repeat(n));

describe('SnapshotCache', () => {
  it('returns what was set, and nothing for an unknown revision', () => {
    const c = new SnapshotCache(100, 0);
    c.set('a', bytes(10, 'a'));
    expect(c.get('a')?.toString()).toBe('a'.repeat(10));
    expect(c.get('b')).toBeUndefined();
    expect(c.bytes).toBe(10);
    expect(c.size).toBe(1);
  });

  it('never holds more than its bound: the least recently used go first', () => {
    const c = new SnapshotCache(30, 0);
    c.set('a', bytes(10));
    c.set('b', bytes(10));
    c.set('c', bytes(10));
    expect(c.get('a')).toBeDefined(); // a is now the most recently used
    c.set('d', bytes(10));
    expect(c.bytes).toBe(30);
    expect(c.get('b')).toBeUndefined();
    expect([c.get('a'), c.get('c'), c.get('d')].every((b) => b !== undefined)).toBe(true);
    c.set('e', bytes(25));
    expect(c.bytes).toBeLessThanOrEqual(30);
    expect(c.size).toBe(1);
    expect(c.get('e')).toBeDefined();
  });

  it.each([
    ['larger than the bound', 10, 11],
    ['a bound of 0 keeps nothing', 0, 1],
  ])('does not keep a snapshot %s', (_name, max, size) => {
    const c = new SnapshotCache(max, 0);
    c.set('a', bytes(size));
    expect(c.get('a')).toBeUndefined();
    expect(c.bytes).toBe(0);
  });

  it('replacing an entry counts its bytes once', () => {
    const c = new SnapshotCache(100, 0);
    c.set('a', bytes(40));
    c.set('a', bytes(50));
    expect(c.bytes).toBe(50);
    expect(c.size).toBe(1);
  });

  it('stays within its bound under any sequence of sets', () => {
    const c = new SnapshotCache(1000, 0);
    for (let i = 0; i < 500; i++) {
      c.set(`r${i % 37}`, bytes((i * 7919) % 400));
      expect(c.bytes).toBeLessThanOrEqual(1000);
    }
  });

  describe('with the default entry overhead', () => {
    const tiny = () => Buffer.from('{}');
    it('the snapshot cache holds at most maxBytes / (length + overhead) tiny snapshots, each its own memory', () => {
      const cache = new SnapshotCache(10 * (2 + CACHE_ENTRY_OVERHEAD_BYTES));
      for (let i = 0; i < 1000; i++) cache.set(`r${i}`, tiny());
      expect(cache.size).toBe(10);
      expect(cache.bytes).toBe(10 * (2 + CACHE_ENTRY_OVERHEAD_BYTES));
      const kept = cache.get('r999');
      expect(kept?.toString()).toBe('{}');
      expect(kept?.buffer.byteLength).toBe(2);
    });

    it('a value whose size with the overhead passes the bound is not kept', () => {
      const cache = new SnapshotCache(CACHE_ENTRY_OVERHEAD_BYTES + 1);
      cache.set('a', Buffer.from('ab'));
      expect(cache.size).toBe(0);
      cache.set('b', Buffer.from('a'));
      expect(cache.size).toBe(1);
    });
  });
});
