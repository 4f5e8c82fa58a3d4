import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { AppException } from '../errors/app-exception';

/**
 * Longest `cursor` a list accepts, in characters; anything longer is refused by validation before
 * it is looked at. It must hold every cursor this service hands out: the longest text sort key a
 * list offers is a test case title of 500 characters, at most 6 bytes each as JSON (a control
 * character is escaped as `\u0001`; others take at most 4), so about 3,100 bytes of key values
 * with the row's id and timestamps, 4,150 characters in base64url with the tag. (1,024 refused the
 * next page of a list sorted by a long non-ASCII name or title.) Still far below Node's 16 KiB
 * header limit for the request line or a `Link` header.
 */
export const CURSOR_MAX_LENGTH = 8192;

/** Bytes of the HMAC-SHA-256 tag a cursor carries (128 bits). */
const TAG_BYTES = 16;

/** The version of the cursor format; bound into the tag, so an old format is simply refused. */
const FORMAT = 'tms-cursor-v1';

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * Canonical text of a list's identity: the list's name and its effective filters and sort (every
 * value that decides which rows the list holds and in which order). Keys are sorted, absent values
 * left out, and repeatable values sorted and deduplicated (`status=a&status=b` lists the same rows
 * as `status=b&status=a`). A cursor is tagged with this text, so it only opens the list it came from.
 */
export function cursorScope(list: string, params: Record<string, unknown>): string {
  const canonical: Record<string, unknown> = {};
  for (const key of Object.keys(params).sort()) {
    const value = params[key];
    if (value === undefined) continue;
    canonical[key] = Array.isArray(value)
      ? [...new Set(value.map((v) => JSON.stringify(v)))].sort()
      : value instanceof Date
        ? value.toISOString()
        : value;
  }
  return `${list}\n${JSON.stringify(canonical)}`;
}

/**
 * Opaque, tamper-checked keyset cursors: `base64url(JSON of the last row's key values)` `.`
 * `base64url(HMAC-SHA-256 tag)`, the tag computed over the format version, the list's scope
 * ({@link cursorScope}) and the payload with a key derived from AUTH_SECRET (HKDF-SHA-256, its own
 * `info`, so the key signs nothing else). A cursor that was forged or altered, or that belongs to
 * another list, another filter set or another sort, fails the tag check: 422 `invalid_cursor`.
 * The values are the text forms PostgreSQL gave of the sort keys, cast back in SQL.
 */
export class CursorCodec {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(
      hkdfSync('sha256', Buffer.from(secret, 'utf8'), 'tms list cursors', FORMAT, 32),
    );
  }

  /** The cursor of the row whose key values (sort keys then id) are `values`, in `scope`. */
  encode(scope: string, values: readonly string[]): string {
    const payload = Buffer.from(JSON.stringify(values), 'utf8').toString('base64url');
    return `${payload}.${this.tag(scope, payload).toString('base64url')}`;
  }

  /**
   * The key values of `cursor` (exactly `count` strings), or 422 `invalid_cursor` when it does not
   * come from this service for this very list (scope), or does not have `count` values.
   */
  decode(scope: string, cursor: string, count: number): string[] {
    const invalid = () =>
      new AppException(
        'invalid_cursor',
        'The cursor is not one this list handed out (altered, forged, or from another list, filter ' +
          'set or sort); start again with an empty cursor',
        { 'query.cursor': ['is not a valid cursor for this list'] },
      );
    const dot = cursor.indexOf('.');
    if (dot <= 0 || dot !== cursor.lastIndexOf('.')) throw invalid();
    const payload = cursor.slice(0, dot);
    const tagText = cursor.slice(dot + 1);
    if (!BASE64URL.test(payload) || !BASE64URL.test(tagText)) throw invalid();
    const given = Buffer.from(tagText, 'base64url');
    const expected = this.tag(scope, payload);
    // Re-encoding rules out a second spelling of the same tag bytes (non-canonical base64 tails).
    if (
      given.length !== expected.length ||
      given.toString('base64url') !== tagText ||
      !timingSafeEqual(given, expected)
    ) {
      throw invalid();
    }
    let values: unknown;
    try {
      values = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalid();
    }
    if (
      !Array.isArray(values) ||
      values.length !== count ||
      !values.every((v): v is string => typeof v === 'string')
    ) {
      throw invalid();
    }
    return values;
  }

  private tag(scope: string, payload: string): Buffer {
    return createHmac('sha256', this.key)
      .update(`${FORMAT}\n${scope}\n${payload}`, 'utf8')
      .digest()
      .subarray(0, TAG_BYTES);
  }
}
