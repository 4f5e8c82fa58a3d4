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

  it.each([
    ['not-a-uuid', false],
    ['', false],
    [42, false],
    ['0190f3b2-7c1d-7abc-8def-0123456789ab', true],
  ])('isUuid(%p) is %p', (v, ok) => {
    expect(isUuid(v)).toBe(ok);
  });
});
