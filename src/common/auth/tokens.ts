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
 */
let cachedKey: { secret: string; key: KeyObject } | null = null;

function keyFor(secret: string): KeyObject {
  if (cachedKey?.secret !== secret) {
    cachedKey = { secret, key: createSecretKey(Buffer.from(secret, 'utf8')) };
  }
  return cachedKey.key;
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
    keyFor(secret),
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
  let payload: unknown;
  try {
    payload = jwt.verify(token, keyFor(secret), {
      algorithms: ['HS256'],
      clockTolerance: CLOCK_SKEW_SECONDS,
      // `exp` is checked below without tolerance: an expired token is expired at once.
      ignoreExpiration: true,
    });
  } catch {
    return invalid;
  }
  if (typeof payload !== 'object' || payload === null) return invalid;
  const { sub, ver, exp, iat } = payload as Record<string, unknown>;
  if (!isUuid(sub) || !Number.isSafeInteger(ver) || typeof exp !== 'number') return invalid;
  const nowSeconds = Date.now() / 1000;
  if (iat !== undefined && (typeof iat !== 'number' || iat > nowSeconds + CLOCK_SKEW_SECONDS)) {
    return invalid;
  }
  if (exp <= nowSeconds) return { ok: false, reason: 'token_expired' };
  return { ok: true, claims: { sub, ver: ver as number }, expiresAt: new Date(exp * 1000) };
}
