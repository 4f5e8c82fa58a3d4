import type { OpenAPIObject } from '@nestjs/swagger';

/** What a cursor-paged list documents about its `Link` header. */
export const LINK_DESCRIPTION =
  'With `cursor` and a next page only: `<…>; rel="next"` (RFC 8288), the same path and query ' +
  "with `cursor` set to the page's `next_cursor`. Absent on the last page and with `page` paging.";

/** Documents the `Link` header on the 200 of every GET that takes a `cursor` query parameter. */
export function documentCursorLinks(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths ?? {})) {
    const op = item.get;
    const ok = op?.responses?.['200'];
    if (op === undefined || ok === undefined || !('description' in ok)) continue;
    const paged = (op.parameters ?? []).some(
      (p) => 'name' in p && p.name === 'cursor' && p.in === 'query',
    );
    if (!paged) continue;
    ok.headers = {
      ...(ok.headers ?? {}),
      Link: {
        description: LINK_DESCRIPTION,
        schema: {
          type: 'string',
          example: '</api/v1/test-runs?project_id=…&cursor=WyIyMDI2…fQ.Jx2w…>; rel="next"',
        },
      },
    };
  }
}
