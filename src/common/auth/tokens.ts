import jwt from 'jsonwebtoken';

export interface TokenClaims {
  sub: string;
  ver: number;
}

export type TokenCheck =
  | { ok: true; claims: TokenClaims; expiresAt: Date }
  | { ok: false; reason: 'invalid_token' | 'token_expired' };

/** Signs an HS256 access token carrying the user id and its token version. */
export function signAccessToken(
  claims: TokenClaims,
  secret: string,
  ttlSeconds: number,
): { token: string; expiresAt: Date } {
  const now = Math.floor(Date.now() / 1000);
  const token = jwt.sign({ sub: claims.sub, ver: claims.ver, iat: now, exp: now + ttlSeconds }, secret, {
    algorithm: 'HS256',
    noTimestamp: true,
  });
  return { token, expiresAt: new Date((now + ttlSeconds) * 1000) };
}

/** Verifies signature (HS256 only), expiry and claim shapes. Pure; the caller checks the version. */
export function verifyAccessToken(token: string, secret: string): TokenCheck {
  try {
    const p = jwt.verify(token, secret, { algorithms: ['HS256'] });
    if (typeof p !== 'object' || p === null) return { ok: false, reason: 'invalid_token' };
    const { sub, ver, exp } = p as Record<string, unknown>;
    if (typeof sub !== 'string' || typeof ver !== 'number' || typeof exp !== 'number') {
      return { ok: false, reason: 'invalid_token' };
    }
    return { ok: true, claims: { sub, ver }, expiresAt: new Date(exp * 1000) };
  } catch (err) {
    if (err instanceof jwt.TokenExpiredError) return { ok: false, reason: 'token_expired' };
    return { ok: false, reason: 'invalid_token' };
  }
}
