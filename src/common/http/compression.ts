import compression from 'compression';
import type { RequestHandler } from 'express';
import { constants } from 'node:zlib';
import { varyAcceptEncoding } from './conditional';

/**
 * Response bodies of at least this many bytes (over 1 KB) are compressed when the client accepts
 * it; smaller ones go out as they are (the coding's framing would eat most of the gain).
 */
export const COMPRESSION_MIN_BYTES = 1025;

/**
 * Brotli quality 4 (of 0–11): on the bench's run list page (50 runs with 200-node snapshots,
 * 3.2 MB) 6.7 KB in 6.8 ms of CPU, where quality 5 takes 12 ms for 5.4 KB and 9 takes 39 ms
 * (bench/compression-levels.ts, bench/README.md).
 */
export const BROTLI_QUALITY = 4;

/**
 * Brotli window of 2^18 bytes (256 KB) instead of the encoder's default 2^22 (4 MB): an encoder's
 * memory follows its window. 32 encoders compressing a run list page at once grew a process by
 * 113 MB with the default window and by 32 MB with this one, at no more CPU, and the allocator
 * keeps what they freed: a minute of browser-like list traffic took the service from 205 to 565
 * MB with the default window, to 249 MB with this one. The 3 MB page comes out 14.7 KB instead of
 * 11.9 KB (bench/README.md, "The brotli window").
 */
export const BROTLI_WINDOW_BITS = 18;

/**
 * gzip level 1 (of 1–9): on the same page 312 KB in 15 ms, where level 6 takes 51 ms for 217 KB:
 * the 95 KB it saves are under 1 ms on a 1 Gbit/s link, the 37 ms of CPU are not.
 */
export const GZIP_LEVEL = 1;

/**
 * Response compression (the `compression` package): `br` preferred, then `gzip` (and `deflate` for
 * a client that only accepts it), negotiated from `Accept-Encoding`; bodies under
 * COMPRESSION_MIN_BYTES, HEAD, 304 and types that do not compress (PDF, images, …) go out as they
 * are; `Vary: Accept-Encoding` on every compressible response; `Cache-Control: no-transform` opts a
 * response out. The ETag is the one of the uncompressed representation, the same for every coding.
 *
 * A request without `Accept-Encoding` has nothing to negotiate: `compression` would send its body
 * as it is (identity), so it is not wrapped at all (the package wraps `write`, `end`, `on` and
 * `writeHead` of every response it sees, which cost a `GET /test-runs/{id}` about 5 % of its
 * CPU, bench/README.md fix 31); it gets `Vary: Accept-Encoding` up front instead, on every
 * response, as caches must still learn that the representation depends on the header.
 */
export function responseCompression(): RequestHandler {
  const compress = compression({
    threshold: COMPRESSION_MIN_BYTES,
    level: GZIP_LEVEL,
    brotli: {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
        [constants.BROTLI_PARAM_LGWIN]: BROTLI_WINDOW_BITS,
      },
    },
  });
  return (req, res, next) => {
    if (req.headers['accept-encoding'] === undefined) {
      varyAcceptEncoding(res);
      next();
      return;
    }
    compress(req, res, next);
  };
}
