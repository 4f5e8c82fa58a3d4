/**
 * Pure rules of the `Idempotency-Key` header (IETF httpapi draft, applied like Stripe): what a key
 * may be, and the fingerprint that tells a repeat of a request from another request under the same
 * key.
 */
import { createHash, type Hash } from 'node:crypto';

/** The request header carrying the key. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** The response header set on a replayed answer. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
/** Longest key accepted, in characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** Field path of key problems in a 422 `validation_error`. */
export const IDEMPOTENCY_KEY_FIELD = 'header.idempotency-key';

const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/**
 * The message explaining why `value` (the header as received) is not a key, or null when it is one:
 * 1 to {@link MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters (U+0020 to U+007E).
 */
export function idempotencyKeyProblem(value: string): string | null {
  if (value.length === 0) return 'must not be empty';
  if (value.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    return `must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters long`;
  }
  if (!PRINTABLE_ASCII.test(value)) return 'must contain only printable ASCII characters';
  return null;
}

/** Version of the fingerprint's layout: a change of layout must not match fingerprints stored before. */
const FINGERPRINT_VERSION = 'v1';
/** What a multipart boundary is replaced with in the hashed bytes. */
const BOUNDARY_MARK = Buffer.from('\u0000boundary\u0000', 'latin1');

/** The `boundary` parameter of a multipart Content-Type, or null. */
export function multipartBoundary(contentType: string | undefined): string | null {
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  if (match === null) return null;
  return match[1] ?? match[2] ?? null;
}

/** The query string of a request URL ('' when none). */
export function queryOf(url: string): string {
  const at = url.indexOf('?');
  return at < 0 ? '' : url.slice(at + 1);
}

/**
 * The fingerprint of a request whose body was parsed as JSON before routing (or that had none):
 * SHA-256 of the query string and the body's JSON text as parsed and serialised again, so
 * insignificant whitespace does not count, the order of the fields does.
 */
export function jsonFingerprint(query: string, body: unknown): string {
  return createHash('sha256')
    .update(`${FINGERPRINT_VERSION}\njson\n${query}\n`)
    .update(body === undefined ? '' : JSON.stringify(body))
    .digest('hex');
}

/**
 * The fingerprint of a raw (multipart) body, fed chunk by chunk as it is read: SHA-256 of the query
 * string, the media type and the body bytes, with every occurrence of the multipart boundary
 * replaced by a constant, so a client that draws a new boundary for its retry still sends the same
 * request (same files' bytes, same fields, same part headers, in the same order). The boundary may
 * be split across chunks: the last `boundary.length - 1` bytes of a chunk wait for the next one.
 */
export class RawBodyFingerprint {
  private readonly hash: Hash = createHash('sha256');
  private readonly needle: Buffer | null;
  private carry: Buffer = Buffer.alloc(0);

  constructor(query: string, contentType: string | undefined) {
    const boundary = multipartBoundary(contentType);
    this.needle = boundary === null ? null : Buffer.from(boundary, 'latin1');
    const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
    this.hash.update(`${FINGERPRINT_VERSION}\nraw\n${query}\n${mediaType}\n`);
  }

  update(chunk: Buffer): void {
    const needle = this.needle;
    if (needle === null) {
      this.hash.update(chunk);
      return;
    }
    const buf = this.carry.length === 0 ? chunk : Buffer.concat([this.carry, chunk]);
    let start = 0;
    for (;;) {
      const at = buf.indexOf(needle, start);
      if (at < 0) break;
      this.hash.update(buf.subarray(start, at));
      this.hash.update(BOUNDARY_MARK);
      start = at + needle.length;
    }
    const keepFrom = Math.max(start, buf.length - (needle.length - 1));
    this.hash.update(buf.subarray(start, keepFrom));
    this.carry = Buffer.from(buf.subarray(keepFrom));
  }

  /** The fingerprint (hex); call once, after the last chunk. */
  digest(): string {
    this.hash.update(this.carry);
    this.carry = Buffer.alloc(0);
    return this.hash.digest('hex');
  }
}
