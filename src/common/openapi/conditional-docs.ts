import { ApiExtension, type OpenAPIObject } from '@nestjs/swagger';
import { ETAG_DIGEST_BYTES } from '../http/conditional';

/** What every GET documents about its `ETag` (the same rule for every resource and list). */
export const ETAG_DESCRIPTION =
  `Strong entity tag of this representation: \`"\` + the first ${ETAG_DIGEST_BYTES * 8} bits of the ` +
  'SHA-256 of the uncompressed body, base64url, + `"` (a run, or a page of runs, hashes its cached ' +
  'environment snapshot once). It changes exactly when the body does, and is the same whatever ' +
  'the `Content-Encoding`. Send it back in `If-None-Match` to revalidate, in `If-Match` to write ' +
  'only if nothing changed.';

/**
 * The `ETag` of a write's 200 answer that is the resource as its GET answers it (`tagWriteAnswer`):
 * the tag a following GET would give, so a client writes conditionally again without reading first.
 */
export const WRITE_ANSWER_ETAG = {
  description:
    'Strong entity tag of the resource as written: the `ETag` its GET now answers. Send it in ' +
    '`If-Match` to make the next write conditional without reading the resource again.',
  schema: { type: 'string' as const, example: '"3q2-7wH1xX0aV9Zc8kQ2bA"' },
};

/** What the OpenAPI documents for `If-Match` on every write that honours it. */
export const IF_MATCH_DESCRIPTION = [
  'Optimistic concurrency (RFC 9110 §13.1.1): the write happens only if the resource still has one',
  'of the listed strong ETags — the `ETag` its GET answered, or that a write answering the resource',
  'itself answered (documented on its 200; a run case row, which has no GET, has only those), or a',
  '412 carried. `*` matches any existing resource; weak tags (`W/"…"`) never',
  'match. Otherwise 412 `precondition_failed` with the current `ETag` in a header, and nothing',
  'changes. The comparison and the write run in one transaction under a lock of the resource, so of',
  'two writers holding the same tag exactly one succeeds. Without the header the write is',
  'unconditional. A GET with query parameters (a history page) has another tag: compare with the',
  'tag of the plain GET.',
].join(' ');

/** What every GET documents about `If-None-Match`. */
export const IF_NONE_MATCH_DESCRIPTION =
  'Conditional GET (RFC 9110 §13.1.2): `*` or a comma-separated list of entity tags. When one of ' +
  'them matches the current `ETag` (weak comparison: `W/"x"` matches `"x"`) the answer is ' +
  '`304 Not Modified` with no body, with the same `ETag` and `Vary` headers.';

/**
 * OpenAPI extension marking a GET answered as a streamed download without an `ETag` (report
 * exports: the body is written as it is read, so no hash of it exists before its headers go out).
 */
export const NO_ETAG_EXTENSION = 'x-tms-no-etag';

/** Marks a GET as a streamed download: documented without `ETag`, `If-None-Match` and 304. */
export const StreamedDownload = (): MethodDecorator => ApiExtension(NO_ETAG_EXTENSION, true);

const VARY = {
  description:
    '`Accept-Encoding`: bodies over 1 KB are compressed (`br`, else `gzip`) when accepted',
  schema: { type: 'string', example: 'Accept-Encoding' },
};

/** `Vary` of a streamed download: a type that does not compress (PDF) may come without it. */
const DOWNLOAD_VARY = {
  description:
    '`Accept-Encoding`: text formats over 1 KB are compressed (`br`, else `gzip`) when accepted; a PDF ' +
    'is never compressed, and its answer to a request with `Accept-Encoding` has no `Vary`',
  schema: { type: 'string', example: 'Accept-Encoding' },
};

/**
 * Documents conditional GETs on every GET that answers 200 (but {@link StreamedDownload}s, which
 * get `Vary` only): the `If-None-Match` parameter, the `ETag` and `Vary` headers of the 200, and the
 * 304; and the `ETag` header of the 412 of every
 * write that honours `If-Match`.
 */
export function documentConditionalRequests(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths ?? {})) {
    // Writes with If-Match (@Endpoint ifMatch): their 412 carries the current ETag.
    for (const write of [item.put, item.patch, item.delete]) {
      const failed = write?.responses?.['412'];
      const honours = write?.parameters?.some((p) => 'name' in p && p.name === 'If-Match');
      if (failed === undefined || !('description' in failed) || honours !== true) continue;
      failed.headers = {
        ...(failed.headers ?? {}),
        ETag: {
          description: 'The current ETag of the resource (compare it with the one sent)',
          schema: { type: 'string', example: '"3q2-7wH1xX0aV9Zc8kQ2bA"' },
        },
      };
    }
    const op = item.get;
    const ok = op?.responses?.['200'];
    if (op === undefined || ok === undefined || !('description' in ok)) continue;
    const record = op as unknown as Record<string, unknown>;
    if (record[NO_ETAG_EXTENSION] === true) {
      delete record[NO_ETAG_EXTENSION];
      ok.headers = { ...(ok.headers ?? {}), Vary: DOWNLOAD_VARY };
      continue;
    }
    op.parameters = [
      ...(op.parameters ?? []),
      {
        name: 'If-None-Match',
        in: 'header',
        required: false,
        description: IF_NONE_MATCH_DESCRIPTION,
        schema: { type: 'string', example: '"3q2-7wH1xX0aV9Zc8kQ2bA"' },
      },
    ];
    const etag = {
      description: ETAG_DESCRIPTION,
      schema: { type: 'string', example: '"3q2-7wH1xX0aV9Zc8kQ2bA"' },
    };
    ok.headers = { ...(ok.headers ?? {}), ETag: etag, Vary: VARY };
    op.responses['304'] = {
      description: 'Not modified: `If-None-Match` matched the current `ETag`. No body.',
      headers: { ETag: etag, Vary: VARY },
    };
  }
}
