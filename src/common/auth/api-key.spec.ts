import { apiKeyMatches, apiKeyPrefix, generateApiKey, hashApiKey, looksLikeApiKey } from './api-key';

describe('API keys', () => {
  it('generates a recognisable key whose hash matches and whose prefix is derivable', () => {
    const { key, prefix, hash } = generateApiKey();
    expect(key).toMatch(/^tms_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(looksLikeApiKey(key)).toBe(true);
    expect(apiKeyPrefix(key)).toBe(prefix);
    expect(hash).toBe(hashApiKey(key));
    expect(hash).not.toContain(key.slice(17));
    expect(apiKeyMatches(key, hash)).toBe(true);
    expect(apiKeyMatches(key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A'), hash)).toBe(false);
  });

  it.each(['tms_xyz', 'tms_0123456789ab_short', 'eyJhbGciOi.x.y', ''])('rejects malformed %p', (k) => {
    expect(apiKeyPrefix(k)).toBeNull();
  });
});
