import { PassThrough, type Readable, Transform, type Writable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Request } from 'express';
import { AppException } from '../errors/app-exception';

/**
 * Content codings a request body may carry (RFC 9110 §8.4.1), exactly one per request: `gzip`,
 * `deflate` (the zlib format) or `br`. No `Content-Encoding` (or `identity`) is an unencoded body.
 * Anything else — `compress`, `zstd`, `x-gzip`, a list of codings such as `identity, gzip` or
 * `gzip, br` — is refused with 415 `unsupported_content_encoding`. Size limits (MAX_JSON_BYTES,
 * MAX_UPLOAD_BYTES) apply to the decoded body, so a small compressed body cannot inflate past them.
 */
export const CONTENT_CODINGS = ['gzip', 'deflate', 'br'] as const;

export type ContentCoding = (typeof CONTENT_CODINGS)[number];

/**
 * The coding of a request body: null for an unencoded body, the coding when it is one of
 * CONTENT_CODINGS (case-insensitive), else the header's value as sent (`unsupported`).
 */
export function requestContentCoding(
  req: Pick<Request, 'headers'>,
): { coding: ContentCoding | null } | { unsupported: string } {
  const raw = req.headers['content-encoding'];
  const value = (Array.isArray(raw) ? raw.join(', ') : (raw ?? '')).trim().toLowerCase();
  if (value === '' || value === 'identity') return { coding: null };
  if ((CONTENT_CODINGS as readonly string[]).includes(value)) {
    return { coding: value as ContentCoding };
  }
  return { unsupported: value };
}

/** 415 for a Content-Encoding outside CONTENT_CODINGS. */
export function unsupportedContentEncoding(value: string): AppException {
  const shown = value.length > 64 ? `${value.slice(0, 64)}…` : value;
  return new AppException(
    'unsupported_content_encoding',
    `Content-Encoding "${shown}" is not supported; send one of ${CONTENT_CODINGS.join(', ')} or an unencoded body`,
  );
}

/** 400 for a body that its declared coding cannot decode (not compressed, truncated, corrupt). */
export function invalidContentEncoding(coding: string, cause?: unknown): AppException {
  const reason =
    cause instanceof Error && cause.message !== '' ? `: ${cause.message}` : '';
  return new AppException(
    'invalid_content_encoding',
    `The request body is not valid ${coding} data as its Content-Encoding says${reason}`,
  );
}

/**
 * True for a failure of body-parser's decompression stream: body-parser and raw-body tag each of
 * their own errors with a `type` (entity.too.large, entity.parse.failed, request.aborted…); zlib's
 * errors carry a numeric `errno` and none.
 */
export function isDecodingError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { type?: unknown; errno?: unknown };
  return e.type === undefined && typeof e.errno === 'number';
}

function decompressor(coding: ContentCoding | null): Transform {
  switch (coding) {
    case null:
      return new PassThrough();
    case 'gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
  }
}

/**
 * A decoder for the body of a request with a Content-Encoding, for readers that do not decode it
 * themselves (the multipart upload): pipe the request into `input`, read the decoded bytes from
 * `output`. `output` fails (is destroyed) with 400 `invalid_content_encoding` when the body does not
 * decode (not compressed, truncated, corrupt), or with 413 `payload_too_large` as soon as more than
 * `maxBytes` decoded bytes came out; the decompressor is then discarded, so a small compressed body
 * never inflates past the limit in memory. With `coding` null (no Content-Encoding) it only counts:
 * a body sent without a Content-Length (chunked) is held to the same limit.
 */
export function createBodyDecoder(
  coding: ContentCoding | null,
  maxBytes: number,
): { input: Writable; output: Readable } {
  const inflate = decompressor(coding);
  let size = 0;
  const output = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size <= maxBytes) return callback(null, chunk);
      callback(
        new AppException(
          'payload_too_large',
          `The decoded request body is larger than the limit of ${maxBytes} bytes`,
        ),
      );
    },
  });
  // A failed output unpipes itself (stream.pipe); the decompressor is then discarded.
  output.once('error', () => inflate.destroy());
  inflate.once('error', (error: Error) =>
    output.destroy(invalidContentEncoding(coding ?? 'identity', error)),
  );
  inflate.pipe(output);
  return { input: inflate, output };
}
