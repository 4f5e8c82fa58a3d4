import { hash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { currentStore } from '../persistence/request-context';

/**
 * Conditional requests (RFC 9110 §13): every GET answered 200 with a body carries a strong `ETag`,
 * the hash of its representation: `"` + the first 128 bits of the SHA-256 of the body's bytes
 * (uncompressed UTF-8 JSON), base64url, + `"`. A body written in parts (`sendJsonParts`: a run or a
 * page of runs with their environment snapshots) is hashed part by part: each text part as its bytes,
 * each byte part (an immutable cached snapshot) through the digest of its bytes, computed once per
 * cached buffer; the tag then depends on the same bytes, and costs only the small parts. `If-None-Match`
 * matching the tag (weak comparison, a list, or `*`) answers 304 without a body; `If-Match` on the
 * writes that declare it compares strongly with the tag of the resource's GET (Preconditions).
 */
export const ETAG_ALGORITHM = 'sha256';

/** Bytes of the digest kept in a tag (128 bits: 22 base64url characters). */
export const ETAG_DIGEST_BYTES = 16;

function digest(data: string | Buffer): Buffer {
  return hash(ETAG_ALGORITHM, data, 'buffer').subarray(0, ETAG_DIGEST_BYTES);
}

const quoted = (d: Buffer): string => `"${d.toString('base64url')}"`;

/** The strong ETag of a body: its bytes hashed (a string counts as its UTF-8 bytes). */
export function strongEtag(body: string | Buffer): string {
  return quoted(digest(body));
}

/** The ETag of a JSON value as Express's `res.json` sends it (`JSON.stringify`, UTF-8). */
export function jsonEtag(value: unknown): string {
  return strongEtag(JSON.stringify(value) ?? '');
}

/** Digests of byte parts, computed once per buffer (the snapshot cache hands out the same Buffer). */
const partDigests = new WeakMap<Buffer, Buffer>();

function partDigest(part: Buffer): Buffer {
  let d = partDigests.get(part);
  if (d === undefined) {
    d = digest(part);
    partDigests.set(part, d);
  }
  return d;
}

/**
 * The ETag of a body given in parts. One part: the hash of its bytes (the same tag as
 * {@link strongEtag}). Several: the hash of an unambiguous encoding of the parts — a text part as
 * `s<byte length>:` and its bytes, a byte part as `b` and the (cached) digest of its bytes — so the
 * tag changes whenever any byte changes, while a page of 50 runs hashes only its small text parts
 * and 50 cached digests.
 */
export function partsEtag(parts: readonly (string | Buffer)[]): string {
  if (parts.length === 1) return strongEtag(parts[0]);
  const pieces: Buffer[] = [];
  for (const part of parts) {
    if (typeof part === 'string') {
      const bytes = Buffer.from(part, 'utf8');
      pieces.push(Buffer.from(`s${bytes.length}:`, 'latin1'), bytes);
    } else {
      pieces.push(Buffer.from('b', 'latin1'), partDigest(part));
    }
  }
  return quoted(digest(Buffer.concat(pieces)));
}

/** An entity tag of a request header: its opaque part (with the quotes) and whether it is weak. */
export interface EntityTag {
  weak: boolean;
  opaque: string;
}

/**
 * Parses `If-Match` / `If-None-Match` (RFC 9110 §13.1.1–2): `*`, or a comma-separated list of
 * entity tags `"…"` or `W/"…"` (commas inside quotes belong to the tag). Malformed members are
 * skipped; an absent or blank header is null. Several header lines count as one list.
 */
export function parseEntityTags(header: string | string[] | undefined): '*' | EntityTag[] | null {
  if (header === undefined) return null;
  const value = (Array.isArray(header) ? header.join(',') : header).trim();
  if (value === '') return null;
  if (value === '*') return '*';
  const tags: EntityTag[] = [];
  let i = 0;
  while (i < value.length) {
    const c = value[i];
    if (c === ',' || c === ' ' || c === '\t') {
      i++;
      continue;
    }
    let weak = false;
    if (value.startsWith('W/', i)) {
      weak = true;
      i += 2;
    }
    if (value[i] !== '"') {
      // Not an entity tag: skip to the next comma.
      const next = value.indexOf(',', i);
      i = next === -1 ? value.length : next + 1;
      continue;
    }
    const end = value.indexOf('"', i + 1);
    if (end === -1) break;
    tags.push({ weak, opaque: value.slice(i, end + 1) });
    i = end + 1;
  }
  return tags;
}

function opaqueOf(etag: string): { weak: boolean; opaque: string } {
  return etag.startsWith('W/')
    ? { weak: true, opaque: etag.slice(2) }
    : { weak: false, opaque: etag };
}

/**
 * True when `If-None-Match` matches the current `etag`, i.e. the answer is 304: `*` (the resource
 * exists), or any listed tag equal under weak comparison (RFC 9110 §8.8.3.2: `W/"x"` matches `"x"`).
 */
export function ifNoneMatchMatches(header: string | string[] | undefined, etag: string): boolean {
  const tags = parseEntityTags(header);
  if (tags === null) return false;
  if (tags === '*') return true;
  const current = opaqueOf(etag).opaque;
  return tags.some((t) => t.opaque === current);
}

/**
 * Whether `If-Match` lets a write go ahead on a resource whose current tag is `etag` (`null`: it
 * does not exist): no header → true; `*` → true when the resource exists; else true only when a
 * listed tag equals it under strong comparison (weak tags never match, RFC 9110 §13.1.1). A
 * header with no well-formed tag matches nothing; a blank one counts as none.
 */
export function ifMatchPasses(header: string | string[] | undefined, etag: string | null): boolean {
  const tags = parseEntityTags(header);
  // No header (or a blank one): an unconditional write.
  if (tags === null) return true;
  if (etag === null) return false;
  if (tags === '*') return true;
  const current = opaqueOf(etag);
  if (current.weak) return false;
  return tags.some((t) => !t.weak && t.opaque === current.opaque);
}

/** Appends `Accept-Encoding` to the response's `Vary` unless it is listed (or `*`). */
export function varyAcceptEncoding(res: ServerResponse): void {
  const existing = res.getHeader('Vary');
  const value = Array.isArray(existing)
    ? existing.join(', ')
    : existing === undefined
      ? ''
      : String(existing);
  const fields = value.split(',').map((f) => f.trim().toLowerCase());
  if (fields.includes('*') || fields.includes('accept-encoding')) return;
  res.setHeader('Vary', value.trim() === '' ? 'Accept-Encoding' : `${value}, Accept-Encoding`);
}

/** Write requests whose 200 answer is the resource's representation (see {@link tagWriteAnswer}). */
const taggedWrites = new WeakSet<object>();

/**
 * Makes the 200 answer of the current write request carry the ETag of its body, for a write whose
 * answer is exactly the representation its `If-Match` is compared with: the resource as its GET
 * answers it (a PATCH or PUT of a run, an environment, a component…, whose client can then write
 * conditionally again without reading first), or a run case row, which has no GET of its own. No-op
 * outside a request.
 */
export function tagWriteAnswer(): void {
  const req = currentStore()?.req;
  if (req !== undefined) taggedWrites.add(req);
}

/**
 * Tags a response about to be sent with a body and decides its condition: sets `ETag` (and `Vary:
 * Accept-Encoding`, which a 304 must repeat) on a 200 to a GET or HEAD, and turns it into a 304
 * when `If-None-Match` matches; a 200 to a write marked by {@link tagWriteAnswer} only gets its
 * `ETag`. Returns the tag, or undefined when the response takes none.
 */
export function tagResponse(res: ServerResponse, etagOf: () => string): string | undefined {
  if (res.statusCode !== 200 || res.getHeader('ETag') !== undefined) return undefined;
  const method = res.req.method;
  const read = method === 'GET' || method === 'HEAD';
  if (!read && !taggedWrites.has(res.req)) return undefined;
  const etag = etagOf();
  res.setHeader('ETag', etag);
  if (!read) return etag;
  varyAcceptEncoding(res);
  if (ifNoneMatchMatches(res.req.headers['if-none-match'], etag)) res.statusCode = 304;
  return etag;
}

/**
 * Express's `etag` setting (`app.set('etag', expressEtag)`): called by `res.send` with the bytes it
 * is about to send, within the request's async context. Tags a 200 to a GET/HEAD and answers 304 on
 * a matching `If-None-Match` (Express's `res.send` then sends no body and drops Content-Type and
 * Content-Length); answers nothing for other statuses and methods (no tag on problems, nor on writes
 * but those marked by {@link tagWriteAnswer}).
 * Deciding here rather than in Express's `req.fresh` applies the same rules as `sendJsonParts`
 * (`fresh` would also refuse a 304 to a request with `Cache-Control: no-cache`).
 */
export function expressEtag(body: Buffer | string, encoding?: BufferEncoding): string | undefined {
  const res = currentStore()?.req.res;
  if (res === undefined) return undefined;
  return tagResponse(res, () =>
    strongEtag(typeof body === 'string' ? Buffer.from(body, encoding ?? 'utf8') : body),
  );
}
