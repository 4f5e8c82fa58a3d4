import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * `text` with every character a URI may not hold written as its percent escape: `>` would end the
 * `Link` header's `<…>`, a space or `"` would break the header. The request line's characters
 * (Node reads it byte per character) are escaped byte for byte, so the escaped URI names the same
 * bytes; `%` stays (existing escapes are kept as they are).
 */
function uriSafe(text: string): string {
  return text.replace(/[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]/gu, (c) => {
    const code = c.codePointAt(0) ?? 0;
    return code <= 0xff
      ? `%${code.toString(16).toUpperCase().padStart(2, '0')}`
      : encodeURIComponent(c);
  });
}

/**
 * The URI of the next page (RFC 8288 target of `rel="next"`): `url` (the request's path and query
 * as received) with its `cursor` parameter set to `cursor` — the first `cursor` replaced in place,
 * any other dropped, appended when there was none; every other parameter stays as it came, only
 * characters a URI may not hold percent-escaped (the same bytes, so the same filters).
 */
export function nextPageUrl(url: string, cursor: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q + 1);
  const value = `cursor=${encodeURIComponent(cursor)}`;
  const parts: string[] = [];
  let placed = false;
  for (const part of query === '' ? [] : query.split('&')) {
    const eq = part.indexOf('=');
    let name = eq < 0 ? part : part.slice(0, eq);
    try {
      name = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch {
      // A malformed escape is some other parameter's business: kept as it is.
    }
    if (name !== 'cursor') parts.push(uriSafe(part));
    else if (!placed) {
      parts.push(value);
      placed = true;
    }
  }
  if (!placed) parts.push(value);
  return `${uriSafe(path)}?${parts.join('&')}`;
}

/** The `Link` header value pointing at the next page. */
export function nextLinkHeader(url: string, cursor: string): string {
  return `<${nextPageUrl(url, cursor)}>; rel="next"`;
}

/**
 * Sets `Link: <…>; rel="next"` on a cursor-paged answer that has a next page; a page-numbered or
 * last page gets none. Returns the page, for `return withNextLink(req, res, page)`.
 */
export function withNextLink<P extends object>(
  req: IncomingMessage & { originalUrl?: string },
  res: ServerResponse,
  page: P,
): P {
  const next = (page as { next_cursor?: unknown }).next_cursor;
  if (typeof next === 'string') {
    res.setHeader('Link', nextLinkHeader(req.originalUrl ?? req.url ?? '', next));
  }
  return page;
}
