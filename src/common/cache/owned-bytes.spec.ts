import { CACHE_ENTRY_OVERHEAD_BYTES, ownedBytes } from './owned-bytes';
import { VersionedCache } from './versioned-cache';

describe('ownedBytes', () => {
  it("copies a slice of Node's shared pool into a buffer of its own, with the same bytes", () => {
    const pooled = Buffer.from('{"components":[],"dependencies":[]}');
    // Buffer.from of a short string is a slice of an 8 KiB pool block (Buffer.poolSize).
    expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.length);
    const own = ownedBytes(pooled);
    expect(own).not.toBe(pooled);
    expect(own.equals(pooled)).toBe(true);
    expect(own.byteOffset).toBe(0);
    expect(own.buffer.byteLength).toBe(own.length);
  });

  it('returns a buffer that already spans its whole memory as it is', () => {
    const whole = Buffer.alloc(10_000, 1);
    expect(ownedBytes(whole)).toBe(whole);
  });
});

describe('cache bounds count each entry with its overhead', () => {
  it('the versioned cache holds at most maxBytes / (size + overhead) entries', () => {
    const versioned = new VersionedCache<string>(5 * (3 + CACHE_ENTRY_OVERHEAD_BYTES), 1000);
    for (let i = 0; i < 100; i++) versioned.set(`k${i}`, '1', 'abc', 3);
    expect(versioned.size).toBe(5);
    expect(versioned.bytes).toBe(5 * (3 + CACHE_ENTRY_OVERHEAD_BYTES));
  });
});
