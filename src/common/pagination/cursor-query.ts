import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ValidateBy } from 'class-validator';
import { CURSOR_MAX_LENGTH } from './cursor';
import { PageQueryDto, PageSchema } from './page';

/** What `cursor` becomes when `page` is given too (refused by validation with its own message). */
const CURSOR_WITH_PAGE = Symbol('cursor-with-page');

/** The description of `cursor` in the OpenAPI document (the same on every list that has it). */
export const CURSOR_DESCRIPTION =
  'Keyset paging, the alternative to `page`: an empty `cursor=` asks for the first page, then ' +
  'pass the `next_cursor` of the previous response (also given as `Link: <…>; rel="next"`, RFC ' +
  '8288: the same path and query with the new cursor). The page is then ' +
  '`{items, page_size, has_next, next_cursor}` (`next_cursor` null on the last page; no `page` and ' +
  'no `total`). The cursor is opaque and tamper-checked: an altered or forged one, or one of another ' +
  'list, filter set or sort is 422 `invalid_cursor`; keep the other parameters (except ' +
  '`page_size` and `fields`) as they were. Rows inserted during a walk never make it repeat or skip ' +
  'a row that existed when it started, and a page costs the same however deep the walk is. ' +
  `Together with \`page\`: 422. At most ${CURSOR_MAX_LENGTH} characters.`;

/**
 * `cursor`: a string of at most CURSOR_MAX_LENGTH characters, refused (422 `validation_error` on
 * `query.cursor`) when `page` is in the query string too. The transformation sees the raw query,
 * where a `page` the client did not send is absent (the DTO's default is applied afterwards).
 */
export function CursorParam(): PropertyDecorator {
  return (target, key) => {
    Transform(({ value, obj }) =>
      value !== undefined && (obj as Record<string, unknown>).page !== undefined
        ? CURSOR_WITH_PAGE
        : value,
    )(target, key);
    ValidateBy({
      name: 'cursorParam',
      validator: {
        validate: (value: unknown) =>
          value === undefined || (typeof value === 'string' && value.length <= CURSOR_MAX_LENGTH),
        defaultMessage: (args) =>
          args?.value === CURSOR_WITH_PAGE
            ? 'cursor and page cannot be given together: page by one or the other'
            : Array.isArray(args?.value)
              ? 'cursor must be given once'
              : `cursor must be a string of at most ${CURSOR_MAX_LENGTH} characters`,
      },
    })(target, key);
    ApiPropertyOptional({
      type: String,
      maxLength: CURSOR_MAX_LENGTH,
      description: CURSOR_DESCRIPTION,
      example: '',
    })(target, key);
  };
}

/** `page`/`page_size` as {@link PageQueryDto}, plus `cursor` for keyset paging. */
export class CursorPageQueryDto extends PageQueryDto {
  @CursorParam()
  cursor?: string;
}

/** One sentence for a list endpoint's description: how it pages by cursor. */
export const CURSOR_PAGING_NOTE =
  'Paging: `page` / `page_size`, or keyset paging with `cursor` (an empty `cursor=` starts; each ' +
  'page gives `next_cursor` and a `Link: <…>; rel="next"` header; a foreign or altered cursor is ' +
  '422 `invalid_cursor`; `cursor` with `page` is 422).';

/** Swagger helper: a cursor page (`cursor` given) around an item DTO. */
export function CursorPageSchema(itemRef: string): Record<string, unknown> {
  return {
    type: 'object',
    required: ['items', 'page_size', 'has_next', 'next_cursor'],
    properties: {
      items: { type: 'array', items: { $ref: `#/components/schemas/${itemRef}` } },
      page_size: { type: 'integer', example: 50 },
      has_next: { type: 'boolean' },
      next_cursor: {
        type: 'string',
        nullable: true,
        description: 'Opaque cursor of the next page; null on the last page',
      },
    },
  };
}

/** Swagger helper: a list that pages by number (PageSchema) or, with `cursor`, by cursor. */
export function PageOrCursorSchema(itemRef: string): Record<string, unknown> {
  return { oneOf: [PageSchema(itemRef), CursorPageSchema(itemRef)] };
}
