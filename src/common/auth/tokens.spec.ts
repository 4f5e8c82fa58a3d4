import jwt from 'jsonwebtoken';
import { signAccessToken, verifyAccessToken } from './tokens';

const secret = 's'.repeat(40);

describe('access tokens', () => {
  it('round-trips the claims', () => {
    const { token, expiresAt } = signAccessToken({ sub: 'u1', ver: 3 }, secret, 60);
    const r = verifyAccessToken(token, secret);
    expect(r).toEqual({ ok: true, claims: { sub: 'u1', ver: 3 }, expiresAt });
  });

  it('lives at least the configured lifetime (exp rounded up to a whole second)', () => {
    const before = Date.now();
    const { expiresAt } = signAccessToken({ sub: 'u1', ver: 0 }, secret, 1);
    expect(expiresAt.getTime()).toBeGreaterThanOrEqual(before + 1000);
    expect(expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 2000);
    expect(expiresAt.getTime() % 1000).toBe(0);
  });

  it('produces tokens a standard JWT library verifies', () => {
    const { token } = signAccessToken({ sub: 'u9', ver: 1 }, secret, 60);
    expect(jwt.verify(token, secret, { algorithms: ['HS256'] })).toMatchObject({
      sub: 'u9',
      ver: 1,
    });
  });

  it('accepts tokens from a standard JWT library', () => {
    const token = jwt.sign({ sub: 'u8', ver: 2, exp: Math.floor(Date.now() / 1000) + 60 }, secret, {
      algorithm: 'HS256',
    });
    expect(verifyAccessToken(token, secret)).toMatchObject({
      ok: true,
      claims: { sub: 'u8', ver: 2 },
    });
  });

  it('rejects a tampered payload', () => {
    const { token } = signAccessToken({ sub: 'u1', ver: 0 }, secret, 60);
    const [h, , s] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ sub: 'admin', ver: 0, exp: 9999999999 })).toString(
      'base64url',
    );
    expect(verifyAccessToken(`${h}.${forged}.${s}`, secret)).toEqual({
      ok: false,
      reason: 'invalid_token',
    });
  });

  it.each([
    [
      'another secret',
      () => signAccessToken({ sub: 'u', ver: 0 }, 'x'.repeat(40), 60).token,
      'invalid_token',
    ],
    [
      'expired',
      () => jwt.sign({ sub: 'u', ver: 0, exp: Math.floor(Date.now() / 1000) - 10 }, secret),
      'token_expired',
    ],
    [
      'alg none',
      () => jwt.sign({ sub: 'u', ver: 0, exp: 9999999999 }, '', { algorithm: 'none' }),
      'invalid_token',
    ],
    [
      'HS512',
      () => jwt.sign({ sub: 'u', ver: 0, exp: 9999999999 }, secret, { algorithm: 'HS512' }),
      'invalid_token',
    ],
    ['missing ver', () => jwt.sign({ sub: 'u', exp: 9999999999 }, secret), 'invalid_token'],
    ['garbage', () => 'not.a.token', 'invalid_token'],
  ])('rejects a token signed with %s', (_label, make, reason) => {
    expect(verifyAccessToken(make(), secret)).toEqual({ ok: false, reason });
  });
});
