import type { ServerResponse } from 'node:http';
import { StreamableFile } from '@nestjs/common';
import { partsEtag, tagResponse } from './conditional';

/** The Content-Type of a JSON answer, as Express's `res.json` sets it. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** A piece of a JSON response body: text, or bytes already serialised (UTF-8). */
export type JsonPart = string | Buffer;

/** The UTF-8 byte length of the body `parts` spell (its Content-Length). */
export function jsonPartsLength(parts: readonly JsonPart[]): number {
  let length = 0;
  for (const part of parts) {
    length += typeof part === 'string' ? Buffer.byteLength(part, 'utf8') : part.length;
  }
  return length;
}

/**
 * Answers a JSON body given in parts (their concatenation is the JSON), written as they are: a
 * handler that already holds serialised JSON (a run's cached snapshot bytes, a cached graph) sends
 * it without parsing it or copying it into one string. Status 200 unless set before, Content-Type
 * `application/json; charset=utf-8` and Content-Length as Express's `res.json` sets them; no body
 * for HEAD. The parts go out corked (one writev), uncorked before `end`; only Node's public
 * `http.ServerResponse` API.
 * A 200 to a GET or HEAD carries its strong `ETag` (`partsEtag`) and is answered 304 without a body
 * when `If-None-Match` matches it, as `res.send` answers through `expressEtag`.
 */
export function sendJsonParts(res: ServerResponse, parts: readonly JsonPart[]): void {
  // A 200 to a GET gets its strong ETag (cached snapshot parts hashed once) and may become a 304.
  tagResponse(res, () => partsEtag(parts));
  if (res.statusCode === 304) {
    res.end();
    return;
  }
  res.setHeader('Content-Type', JSON_CONTENT_TYPE);
  res.setHeader('Content-Length', jsonPartsLength(parts));
  if (res.req.method === 'HEAD') {
    res.end();
    return;
  }
  res.cork();
  for (const part of parts) {
    if (typeof part === 'string') res.write(part, 'utf8');
    else res.write(part);
  }
  // Uncorked before end: with response compression the parts went to the compressor, whose output
  // is written to this response later; a response still corked then would never drain.
  res.uncork();
  res.end();
}

/**
 * A write handler's JSON answer given in parts (a run with its cached snapshot bytes): its bytes
 * are the concatenation of the parts, never a parsed object serialised again. `@Transactional()`
 * handlers may return it: the transaction interceptor hands Nest its bytes as a `StreamableFile`
 * (Nest's public way to answer bytes, with the route's status), and the idempotency layer stores
 * exactly those bytes. (Read handlers answer their parts themselves with {@link sendJsonParts}.)
 */
export class JsonBody {
  private bytes: Buffer | null = null;

  constructor(readonly parts: readonly JsonPart[]) {}

  /**
   * The answer's bytes (UTF-8), joined once into one buffer of their length: each text part is
   * encoded straight into it, each byte part copied. (Encoding the text parts first and then
   * concatenating held every text twice: 46 MB for the 23 MB answer of a 100,000-testcase import,
   * at the import's peak; bench/README.md fix 60.)
   */
  toBuffer(): Buffer {
    if (this.bytes === null) {
      const bytes = Buffer.allocUnsafe(jsonPartsLength(this.parts));
      let at = 0;
      for (const part of this.parts) {
        at += typeof part === 'string' ? bytes.write(part, at, 'utf8') : part.copy(bytes, at);
      }
      // Never answer bytes of the uninitialised buffer (the lengths come from the same encoder).
      if (at !== bytes.length)
        throw new Error(`JSON body of ${bytes.length} bytes filled to ${at}`);
      this.bytes = bytes;
    }
    return this.bytes;
  }

  /** What Nest sends for it: the bytes with the JSON Content-Type and their length. */
  toStreamableFile(): StreamableFile {
    const bytes = this.toBuffer();
    return new StreamableFile(bytes, { type: JSON_CONTENT_TYPE, length: bytes.length });
  }
}
