import { isUuid, uuidv7 } from './ids';

describe('uuidv7', () => {
  it('produces valid, version 7, strictly increasing ids', () => {
    const ids = Array.from({ length: 5000 }, () => uuidv7());
    for (const id of ids) {
      expect(isUuid(id)).toBe(true);
      expect(id[14]).toBe('7');
      expect(['8', '9', 'a', 'b']).toContain(id[19]);
    }
    const sorted = [...ids].sort();
    expect(sorted).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('encodes the current millisecond and fresh random bits, across refills of the entropy pool', () => {
    const before = Date.now();
    // 16 random bytes per id: 20,000 ids draw the 4 KB pool about 80 times.
    const ids = Array.from({ length: 20_000 }, () => uuidv7());
    const after = Date.now();
    expect(new Set(ids).size).toBe(ids.length);
    const tails = new Set(ids.map((id) => id.slice(19)));
    expect(tails.size).toBe(ids.length); // the random part alone never repeats
    for (const id of [ids[0], ids[ids.length - 1]]) {
      const ms = parseInt(id.replace(/-/g, '').slice(0, 12), 16);
      expect(ms).toBeGreaterThanOrEqual(before);
      // Ids within one millisecond count up a 32-bit sequence: they never borrow a later millisecond here.
      expect(ms).toBeLessThanOrEqual(after + 1);
    }
    // Every hex digit of the purely random bytes (the last five) occurs: no constant or zeroed byte.
    for (let pos = 26; pos < 36; pos++) {
      expect(new Set(ids.map((id) => id[pos])).size).toBe(16);
    }
  });

  it.each([
    ['not-a-uuid', false],
    ['', false],
    [42, false],
    ['0190f3b2-7c1d-7abc-8def-0123456789ab', true],
  ])('isUuid(%p) is %p', (v, ok) => {
    expect(isUuid(v)).toBe(ok);
  });
});
