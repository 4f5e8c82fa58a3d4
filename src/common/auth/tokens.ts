import { createSecretKey, KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { isUuid } from '../persistence/ids';

export interface TokenClaims {
  sub: string;
  ver: number;
}

export type TokenCheck =
  | { ok: true; claims: TokenClaims; expiresAt: Date }
  | { ok: false; reason: 'invalid_token' | 'token_expired' };

/**
 * How far a token's `iat` or `nbf` may lie in the future (clocks of instances and clients differ a
 * little). A token issued further ahead than this is refused: it was not made by this service's clock.
 */
export const CLOCK_SKEW_SECONDS = 60;

/**
 * The HMAC key of the configured secret, imported once: `jsonwebtoken` given the secret as a string
 * imports it on every call (≈0.4 ms of CPU per request); given a KeyObject it does not (≈10 µs).
 * Beside it, the claims of the tokens it verified (see {@link VERIFIED_TOKENS_MAX}).
 */
let cachedKey: { secret: string; key: KeyObject; verified: Map<string, VerifiedClaims> } | null =
  null;

function keyFor(secret: string): NonNullable<typeof cachedKey> {
  if (cachedKey?.secret !== secret) {
    cachedKey = { secret, key: createSecretKey(Buffer.from(secret, 'utf8')), verified: new Map() };
  }
  return cachedKey;
}

/** What a token's signature vouches for and the checks below need. */
interface VerifiedClaims {
  sub: string;
  ver: number;
  exp: number;
  iat: unknown;
}

/**
 * Most tokens whose verified claims are kept, per secret (oldest first out; about 300 bytes each).
 * A token is a string signed by the secret, so what its signature and its shape say never changes:
 * an API client sending the same token request after request has it verified (base64, JSON, HMAC)
 * once, about 0.05 ms of a request. Only tokens that verified are kept, so strangers cannot fill the
 * cache; what depends on the clock (`exp`, `iat`) is checked on every use, and revocation (`ver`
 * against the user's) is the caller's, per request, as before.
 */
export const VERIFIED_TOKENS_MAX = 10_000;

/** The token's claims when its signature and shape verify (remembered), else null. */
function verifiedClaims(token: string, secret: string): VerifiedClaims | null {
  const { key, verified } = keyFor(secret);
  const known = verified.get(token);
  if (known !== undefined) return known;
  let payload: unknown;
  try {
    payload = jwt.verify(token, key, {
      algorithms: ['HS256'],
      clockTolerance: CLOCK_SKEW_SECONDS,
      // `exp` is checked by the caller without tolerance: an expired token is expired at once.
      ignoreExpiration: true,
    });
  } catch {
    return null;
  }
  if (typeof payload !== 'object' || payload === null) return null;
  const { sub, ver, exp, iat } = payload as Record<string, unknown>;
  if (!isUuid(sub) || !Number.isSafeInteger(ver) || typeof exp !== 'number') return null;
  // `nbf` passed now (the library checks it) passes at every later time: kept.
  const claims: VerifiedClaims = { sub, ver: ver as number, exp, iat };
  if (verified.size >= VERIFIED_TOKENS_MAX) {
    verified.delete(verified.keys().next().value as string);
  }
  verified.set(token, claims);
  return claims;
}

/** How many tokens' claims are remembered for `secret` (tests). */
export function verifiedTokenCount(secret: string): number {
  return cachedKey?.secret === secret ? cachedKey.verified.size : 0;
}

/** Signs an HS256 access token (JWT) carrying the user id and its token version. */
export function signAccessToken(
  claims: TokenClaims,
  secret: string,
  ttlSeconds: number,
): { token: string; expiresAt: Date } {
  const nowMs = Date.now();
  // `exp` is rounded up to the next whole second, so a token lives at least `ttlSeconds`.
  const exp = Math.ceil(nowMs / 1000) + ttlSeconds;
  const token = jwt.sign(
    { sub: claims.sub, ver: claims.ver, iat: Math.floor(nowMs / 1000), exp },
    keyFor(secret).key,
    { algorithm: 'HS256' },
  );
  return { token, expiresAt: new Date(exp * 1000) };
}

/**
 * Verifies an access token: HS256 only (the library compares signatures in constant time), `exp`
 * in the future, `iat` and `nbf` not beyond {@link CLOCK_SKEW_SECONDS} ahead, `sub` a uuid and `ver` a
 * whole number. Pure; the caller checks the version against the user's.
 */
export function verifyAccessToken(token: string, secret: string): TokenCheck {
  const invalid: TokenCheck = { ok: false, reason: 'invalid_token' };
  const claims = verifiedClaims(token, secret);
  if (claims === null) return invalid;
  const { sub, ver, exp, iat } = claims;
  const nowSeconds = Date.now() / 1000;
  if (iat !== undefined && (typeof iat !== 'number' || iat > nowSeconds + CLOCK_SKEW_SECONDS)) {
    return invalid;
  }
  if (exp <= nowSeconds) return { ok: false, reason: 'token_expired' };
  return { ok: true, claims: { sub, ver }, expiresAt: new Date(exp * 1000) };
}
