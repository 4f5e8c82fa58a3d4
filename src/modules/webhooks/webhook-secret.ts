import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/** Prefix of every webhook signing secret (Standard Webhooks). */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** Random bytes of a signing secret. */
export const WEBHOOK_SECRET_BYTES = 32;

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** HKDF salt and info: the key is used for webhook secrets and nothing else. */
const HKDF_SALT = 'tms webhooks';
const HKDF_INFO = 'webhook signing secret encryption v1';

/** A new signing secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(WEBHOOK_SECRET_BYTES).toString('base64');
}

/** The HMAC key of a secret: the base64-decoded part after `whsec_`. */
export function signingKey(secret: string): Buffer {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX)
    ? secret.slice(WEBHOOK_SECRET_PREFIX.length)
    : secret;
  return Buffer.from(encoded, 'base64');
}

/**
 * The Standard Webhooks signature of one message: `v1,` + base64(HMAC-SHA256(key,
 * "{id}.{timestamp}.{body}")).
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', signingKey(secret))
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64');
  return `v1,${mac}`;
}

/** The AES-256 key for stored secrets, derived from AUTH_SECRET with HKDF-SHA256. */
export function secretEncryptionKey(authSecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', authSecret, HKDF_SALT, HKDF_INFO, 32));
}

/**
 * Encrypts a secret for storage: AES-256-GCM, IV ‖ tag ‖ ciphertext; `webhookId` is the associated
 * data, so a ciphertext copied onto another subscription does not decrypt.
 */
export function encryptSecret(key: Buffer, webhookId: string, secret: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(webhookId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
}

/** Decrypts {@link encryptSecret}'s output; throws when the key or the associated data differ. */
export function decryptSecret(key: Buffer, webhookId: string, stored: Buffer): string {
  const iv = stored.subarray(0, IV_BYTES);
  const tag = stored.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(Buffer.from(webhookId, 'utf8'));
  decipher.setAuthTag(tag);
  return Buffer.concat([
    decipher.update(stored.subarray(IV_BYTES + TAG_BYTES)),
    decipher.final(),
  ]).toString('utf8');
}
