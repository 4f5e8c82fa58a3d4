import { createHmac } from 'node:crypto';
import jwt from 'jsonwebtoken';
import {
  CLOCK_SKEW_SECONDS,
  signAccessToken,
  VERIFIED_TOKENS_MAX,
  verifiedTokenCount,
  verifyAccessToken,
} from './tokens';

const U1 = '0190a0a0-0000-7000-8000-000000000001';
const U2 = '0190a0a0-0000-7000-8000-000000000002';
const now = () => Math.floor(Date.now() / 1000);

/** An HS256 token with any payload (the library refuses to sign malformed claims). */
function handSigned(payload: object): string {
  const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

const secret = 's'.repeat(40);

describe('access tokens', () => {
  it('round-trips the claims', () => {
    const { token, expiresAt } = signAccessToken({ sub: U1, ver: 3 }, secret, 60);
    const r = verifyAccessToken(token, secret);
    expect(r).toEqual({ ok: true, claims: { sub: U1, ver: 3 }, expiresAt });
  });

  it('lives at least the configured lifetime (exp rounded up to a whole second)', () => {
    const before = Date.now();
    const { expiresAt } = signAccessToken({ sub: U1, ver: 0 }, secret, 1);
    expect(expiresAt.getTime()).toBeGreaterThanOrEqual(before + 1000);
    expect(expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 2000);
    expect(expiresAt.getTime() % 1000).toBe(0);
  });

  it('produces tokens a standard JWT library verifies', () => {
    const { token } = signAccessToken({ sub: U2, ver: 1 }, secret, 60);
    expect(jwt.verify(token, secret, { algorithms: ['HS256'] })).toMatchObject({
      sub: U2,
      ver: 1,
    });
  });

  it('accepts tokens from a standard JWT library', () => {
    const token = jwt.sign({ sub: U2, ver: 2, exp: Math.floor(Date.now() / 1000) + 60 }, secret, {
      algorithm: 'HS256',
    });
    expect(verifyAccessToken(token, secret)).toMatchObject({
      ok: true,
      claims: { sub: U2, ver: 2 },
    });
  });

  it('rejects a tampered payload', () => {
    const { token } = signAccessToken({ sub: U1, ver: 0 }, secret, 60);
    const [h, , s] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ sub: U2, ver: 0, exp: 9999999999 })).toString(
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
      () => signAccessToken({ sub: U1, ver: 0 }, 'x'.repeat(40), 60).token,
      'invalid_token',
    ],
    [
      'expired',
      () => jwt.sign({ sub: U1, ver: 0, exp: Math.floor(Date.now() / 1000) - 10 }, secret),
      'token_expired',
    ],
    [
      'alg none',
      () => jwt.sign({ sub: U1, ver: 0, exp: 9999999999 }, '', { algorithm: 'none' }),
      'invalid_token',
    ],
    [
      'HS512',
      () => jwt.sign({ sub: U1, ver: 0, exp: 9999999999 }, secret, { algorithm: 'HS512' }),
      'invalid_token',
    ],
    ['missing ver', () => jwt.sign({ sub: U1, exp: 9999999999 }, secret), 'invalid_token'],
    ['garbage', () => 'not.a.token', 'invalid_token'],
    [
      'a subject that is no uuid',
      () => jwt.sign({ sub: 'u1', ver: 0, exp: now() + 60 }, secret),
      'invalid_token',
    ],
    [
      'a fractional version',
      () => jwt.sign({ sub: U1, ver: 1.5, exp: now() + 60 }, secret),
      'invalid_token',
    ],
    [
      'iat a year ahead',
      () =>
        jwt.sign({ sub: U1, ver: 0, iat: now() + 365 * 86400, exp: now() + 366 * 86400 }, secret),
      'invalid_token',
    ],
    [
      'iat beyond the clock skew',
      () =>
        jwt.sign(
          { sub: U1, ver: 0, iat: now() + CLOCK_SKEW_SECONDS + 5, exp: now() + 3600 },
          secret,
        ),
      'invalid_token',
    ],
    [
      'nbf beyond the clock skew',
      () =>
        jwt.sign(
          { sub: U1, ver: 0, nbf: now() + CLOCK_SKEW_SECONDS + 5, exp: now() + 3600 },
          secret,
        ),
      'invalid_token',
    ],
    [
      'a non-numeric iat',
      () => handSigned({ sub: U1, ver: 0, iat: 'soon', exp: now() + 3600 }),
      'invalid_token',
    ],
  ])('rejects a token signed with %s', (_label, make, reason) => {
    expect(verifyAccessToken(make(), secret)).toEqual({ ok: false, reason });
  });

  it.each([
    ['iat within the clock skew', { iat: now() + CLOCK_SKEW_SECONDS - 5 }],
    ['nbf within the clock skew', { nbf: now() + CLOCK_SKEW_SECONDS - 5 }],
    ['no iat at all', {}],
  ])('accepts a token with %s', (_label, extra) => {
    const token = jwt.sign({ sub: U1, ver: 0, exp: now() + 3600, ...extra }, secret, {
      noTimestamp: !('iat' in extra),
    });
    expect(verifyAccessToken(token, secret)).toMatchObject({
      ok: true,
      claims: { sub: U1, ver: 0 },
    });
  });

  describe('verified tokens are remembered, the clock is checked on every use', () => {
    afterEach(() => jest.restoreAllMocks());

    it('verifies a token once and answers the same claims from memory', () => {
      const { token, expiresAt } = signAccessToken({ sub: U1, ver: 4 }, secret, 60);
      const before = verifiedTokenCount(secret);
      expect(verifyAccessToken(token, secret)).toEqual({
        ok: true,
        claims: { sub: U1, ver: 4 },
        expiresAt,
      });
      expect(verifiedTokenCount(secret)).toBe(before + 1);
      expect(verifyAccessToken(token, secret)).toEqual({
        ok: true,
        claims: { sub: U1, ver: 4 },
        expiresAt,
      });
      expect(verifiedTokenCount(secret)).toBe(before + 1);
    });

    it('answers a remembered token expired once its exp has passed', () => {
      const { token, expiresAt } = signAccessToken({ sub: U1, ver: 0 }, secret, 60);
      expect(verifyAccessToken(token, secret)).toMatchObject({ ok: true });
      jest.spyOn(Date, 'now').mockReturnValue(expiresAt.getTime());
      expect(verifyAccessToken(token, secret)).toEqual({ ok: false, reason: 'token_expired' });
    });

    it('keeps nothing of a token that does not verify', () => {
      const { token } = signAccessToken({ sub: U1, ver: 0 }, 'x'.repeat(40), 60);
      const before = verifiedTokenCount(secret);
      expect(verifyAccessToken(token, secret)).toMatchObject({ ok: false });
      expect(verifyAccessToken(`${token}x`, secret)).toMatchObject({ ok: false });
      expect(verifiedTokenCount(secret)).toBe(before);
    });

    it('does not carry a token verified with one secret over to another', () => {
      const other = 'y'.repeat(40);
      const { token } = signAccessToken({ sub: U1, ver: 0 }, secret, 60);
      expect(verifyAccessToken(token, secret)).toMatchObject({ ok: true });
      expect(verifyAccessToken(token, other)).toEqual({ ok: false, reason: 'invalid_token' });
      expect(verifyAccessToken(token, secret)).toMatchObject({ ok: true });
    });

    it(`remembers at most ${VERIFIED_TOKENS_MAX} tokens, dropping the oldest`, () => {
      const tokens: string[] = [];
      for (let ver = 0; ver < VERIFIED_TOKENS_MAX + 5; ver++) {
        const { token } = signAccessToken({ sub: U2, ver }, secret, 60);
        tokens.push(token);
        verifyAccessToken(token, secret);
      }
      expect(verifiedTokenCount(secret)).toBe(VERIFIED_TOKENS_MAX);
      // The oldest verifies again (and is remembered anew): still correct after eviction.
      expect(verifyAccessToken(tokens[0], secret)).toMatchObject({ ok: true, claims: { ver: 0 } });
      expect(verifiedTokenCount(secret)).toBe(VERIFIED_TOKENS_MAX);
    });
  });
});
