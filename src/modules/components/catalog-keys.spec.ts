import {
  EMPTY_KEY_SLUG,
  firstFreeKey,
  keyCandidates,
  KEY_MAX_LENGTH,
  slugifyKey,
} from './catalog-keys';

describe('slugifyKey', () => {
  it.each([
    ['Checkout', 'checkout'],
    ['WEB', 'web'],
    ['My Key!', 'my-key'],
    ['!!!', EMPTY_KEY_SLUG],
    ['', EMPTY_KEY_SLUG],
    ['  Payments   API  ', 'payments-api'],
    ['a__b--c', 'a-b-c'],
    ['Über Cart', 'ber-cart'],
    ['-lead-trail-', 'lead-trail'],
    ['v2.1 Release', 'v2-1-release'],
  ])('%j → %j', (source, expected) => {
    expect(slugifyKey(source)).toBe(expected);
  });

  it('cuts to 100 characters without a trailing dash', () => {
    expect(slugifyKey('a'.repeat(150))).toHaveLength(KEY_MAX_LENGTH);
    const cut = slugifyKey(`${'a'.repeat(99)} b`);
    expect(cut).toBe('a'.repeat(99));
  });
});

describe('keyCandidates', () => {
  it('tries base, base-2 … base-1000', () => {
    const c = keyCandidates('checkout');
    expect(c).toHaveLength(1000);
    expect(c.slice(0, 3)).toEqual(['checkout', 'checkout-2', 'checkout-3']);
    expect(c[999]).toBe('checkout-1000');
    expect(new Set(c).size).toBe(1000);
  });

  it('keeps suffixed keys within 100 characters', () => {
    const base = 'x'.repeat(100);
    for (const key of keyCandidates(base)) expect(key.length).toBeLessThanOrEqual(KEY_MAX_LENGTH);
    expect(keyCandidates(base)[1]).toBe(`${'x'.repeat(98)}-2`);
  });
});

describe('firstFreeKey', () => {
  it.each([
    [[], 'checkout'],
    [['checkout'], 'checkout-2'],
    [['checkout', 'checkout-2'], 'checkout-3'],
    [['checkout-2'], 'checkout'],
    [['checkout', 'checkout-3'], 'checkout-2'],
  ])('taken %j → %j', (taken, expected) => {
    expect(firstFreeKey('checkout', new Set(taken))).toBe(expected);
  });

  it('is null when every candidate is taken', () => {
    expect(firstFreeKey('a', new Set(keyCandidates('a')))).toBeNull();
  });
});
