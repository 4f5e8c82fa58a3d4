import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, Max, Min } from 'class-validator';
import { OptionalNotNull, QueryInt } from '../validation/decorators';

/**
 * Most values a repeatable query parameter (`?status=a&status=b`, `?tag=…`) may carry. URLs are
 * short anyway (Node refuses request heads over 16 KB); the bound makes it explicit and documented.
 */
export const QUERY_VALUES_MAX = 100;

/** Longest `search` text of a list, in characters. */
export const SEARCH_MAX = 200;

/**
 * `page` (1-based, default 1), declared once for both page shapes below. They extend this rather
 * than each other: class-validator would apply an inherited `page_size` rule beside a subclass's own.
 */
abstract class PageNumberQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    default: 1,
    description: '1-based page number',
  })
  @QueryInt()
  @OptionalNotNull()
  @IsInt()
  @Min(1)
  page: number = 1;
}

/** `page` (1-based, default 1) and `page_size` (1..200, default 50) — CONTRACT §2. */
export class PageQueryDto extends PageNumberQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 200, default: 50 })
  @QueryInt()
  @OptionalNotNull()
  @IsInt()
  @Min(1)
  @Max(200)
  page_size: number = 50;
}

/** Row-level lists: `page` as in {@link PageQueryDto}, `page_size` 1..500, default 100. */
export class RowPageQueryDto extends PageNumberQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 500, default: 100 })
  @QueryInt()
  @OptionalNotNull()
  @IsInt()
  @Min(1)
  @Max(500)
  page_size: number = 100;
}

export const SORT_ORDERS = ['asc', 'desc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

/** Reusable `sort_order` field. */
export class SortOrderField {
  @ApiPropertyOptional({ enum: SORT_ORDERS })
  @OptionalNotNull()
  @IsIn(SORT_ORDERS)
  sort_order?: SortOrder;
}

export interface Page<T> {
  items: T[];
  page: number;
  page_size: number;
  has_next: boolean;
  total: number;
}

/** Builds the paging envelope. `has_next` comes from `total`, never from the page length. */
export function pageOf<T>(items: T[], page: number, pageSize: number, total: number): Page<T> {
  return {
    items,
    page,
    page_size: pageSize,
    has_next: (page - 1) * pageSize + items.length < total,
    total,
  };
}

export function offsetOf(page: number, pageSize: number): number {
  return (page - 1) * pageSize;
}

/** Escapes `%`, `_` and `\` so a search text is matched literally by ILIKE (CONTRACT §2). */
export function likePattern(search: string): string {
  return '%' + search.replace(/[\\%_]/g, (c) => '\\' + c) + '%';
}

/** Swagger helper: a paged envelope schema around an item DTO. */
export function PageSchema(itemRef: string): Record<string, unknown> {
  return {
    type: 'object',
    required: ['items', 'page', 'page_size', 'has_next', 'total'],
    properties: {
      items: { type: 'array', items: { $ref: `#/components/schemas/${itemRef}` } },
      page: { type: 'integer', example: 1 },
      page_size: { type: 'integer', example: 50 },
      has_next: { type: 'boolean' },
      total: { type: 'integer' },
    },
  };
}

export class PageMetaDto {
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 50 }) page_size: number;
  @ApiProperty() has_next: boolean;
  @ApiProperty() total: number;
}
