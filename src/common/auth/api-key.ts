import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** API keys look like `tms_<12 hex id>_<43 base64url secret>`; the id part is the stored prefix. */
export const API_KEY_PREFIX = 'tms_';
const KEY_RE = /^tms_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const id = randomBytes(6).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  const key = `${API_KEY_PREFIX}${id}_${secret}`;
  return { key, prefix: `${API_KEY_PREFIX}${id}`, hash: hashApiKey(key) };
}

/** SHA-256 of the whole key (it carries 256 random bits, so a fast hash is the right tool). */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Returns the stored prefix of a well-formed key, else null. */
export function apiKeyPrefix(key: string): string | null {
  const m = KEY_RE.exec(key);
  return m ? `${API_KEY_PREFIX}${m[1]}` : null;
}

export function looksLikeApiKey(credential: string): boolean {
  return credential.startsWith(API_KEY_PREFIX);
}

/** Constant-time comparison of the presented key against the stored hash. */
export function apiKeyMatches(key: string, storedHash: string): boolean {
  const a = Buffer.from(hashApiKey(key), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
