import { createHmac } from 'node:crypto';
import {
  decryptSecret,
  encryptSecret,
  generateWebhookSecret,
  secretEncryptionKey,
  signingKey,
  signWebhook,
} from './webhook-secret';

const AUTH = 'an-auth-secret-of-at-least-32-bytes-long!!';

describe('webhook secrets', () => {
  it('are whsec_ + base64 of 32 random bytes, different each time', () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(signingKey(a)).toHaveLength(32);
    expect(a).not.toBe(b);
  });

  it('sign "{id}.{timestamp}.{body}" with the decoded key (Standard Webhooks)', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const expected = createHmac('sha256', Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'))
      .update('msg_1.1700000000.{"a":1}')
      .digest('base64');
    expect(signWebhook(secret, 'msg_1', 1700000000, '{"a":1}')).toBe(`v1,${expected}`);
  });

  it('matches the Standard Webhooks reference vector', () => {
    // From the Standard Webhooks specification's reference implementations' tests.
    expect(
      signWebhook(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('are stored encrypted: round trip, and neither another key nor another id decrypts', () => {
    const key = secretEncryptionKey(AUTH);
    const secret = generateWebhookSecret();
    const stored = encryptSecret(key, 'webhook-1', secret);
    expect(stored.toString('latin1')).not.toContain(secret.slice(6));
    expect(decryptSecret(key, 'webhook-1', stored)).toBe(secret);
    expect(() => decryptSecret(key, 'webhook-2', stored)).toThrow();
    expect(() => decryptSecret(secretEncryptionKey(AUTH + 'x'), 'webhook-1', stored)).toThrow();
    expect(encryptSecret(key, 'webhook-1', secret).equals(stored)).toBe(false);
  });
});
