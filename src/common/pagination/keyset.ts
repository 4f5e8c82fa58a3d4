import { CursorCodec } from './cursor';

/** A sort key of a keyset order: a SQL expression that is never NULL, and its type for the cast. */
export interface KeysetKey {
  /** SQL of the key (NULLs mapped to a value first: `coalesce(...)`, so row comparison holds). */
  sql: string;
  /** The PostgreSQL type the key's text form is cast back to (`timestamptz`, `text`, `int`, `uuid`). */
  type: 'timestamptz' | 'text' | 'int' | 'uuid';
}

/**
 * A keyset order: the sort keys then the row id, all in one direction (CONTRACT §2: ties by id in
 * the same direction). Walked with a row comparison `(k1, …, id) < (v1, …, id)` (`>` ascending),
 * which an index on the same keys (after the list's equality filters) serves as an index bound:
 * a page costs the same wherever it starts.
 */
export interface KeysetOrder {
  keys: readonly KeysetKey[];
  dir: 'ASC' | 'DESC';
}

/** Column alias prefix of the key values a keyset page selects (`_k0`, `_k1`, …). */
const KEY_ALIAS = '_k';

/** `ORDER BY` text of the order. */
export function keysetOrderBy(o: KeysetOrder): string {
  return o.keys.map((k) => `${k.sql} ${o.dir}`).join(', ');
}

/**
 * The select-list items giving each key's exact text form (`<expr>::text AS _k<i>`): timestamps keep
 * their microseconds, which a JavaScript Date would drop.
 */
export function keysetColumns(o: KeysetOrder): string {
  return o.keys.map((k, i) => `(${k.sql})::text AS ${KEY_ALIAS}${i}`).join(', ');
}

/**
 * The condition "after the row with these key values" in the order's direction, as one row
 * comparison; `param` adds a parameter and returns its placeholder.
 */
export function keysetAfter(
  o: KeysetOrder,
  values: readonly string[],
  param: (value: unknown) => string,
): string {
  const left = o.keys.map((k) => k.sql).join(', ');
  const right = o.keys.map((k, i) => `${param(values[i])}::${k.type}`).join(', ');
  return `(${left}) ${o.dir === 'ASC' ? '>' : '<'} (${right})`;
}

/** The key values a row selected with {@link keysetColumns} carries. */
export function keysetValuesOf(o: KeysetOrder, row: Record<string, unknown>): string[] {
  return o.keys.map((_k, i) => String(row[`${KEY_ALIAS}${i}`]));
}

/** A page of a cursor-paged list (CursorPage): no `page` and no `total` (a keyset walk counts nothing). */
export interface CursorPage<T> {
  items: T[];
  page_size: number;
  has_next: boolean;
  /** The cursor of the next page; null on the last page. */
  next_cursor: string | null;
}

/** The paging request of a cursor-paged list: where it starts and how many rows it takes. */
export interface KeysetRequest {
  order: KeysetOrder;
  /** Key values of the last row of the previous page; undefined for the first page. */
  after?: string[];
  /** Rows to read: the page size plus one, which tells whether a next page exists. */
  limit: number;
}

/**
 * A list's keyset paging for one request: decodes `cursor` (blank: the first page) in `scope`,
 * gives the repository what to read ({@link KeysetRequest}), then turns the rows it read into the
 * page with `next_cursor`.
 */
export class KeysetPaging {
  readonly request: KeysetRequest;

  constructor(
    private readonly codec: CursorCodec,
    private readonly scope: string,
    order: KeysetOrder,
    cursor: string,
    private readonly pageSize: number,
  ) {
    const after = cursor === '' ? undefined : codec.decode(scope, cursor, order.keys.length);
    this.request = { order, after, limit: pageSize + 1 };
  }

  /**
   * The page of `rows` (read with {@link KeysetRequest}: at most page size + 1, with their key
   * columns), items mapped by `map`.
   */
  page<R extends object, T>(rows: readonly R[], map: (row: R) => T): CursorPage<T> {
    const hasNext = rows.length > this.pageSize;
    const kept = hasNext ? rows.slice(0, this.pageSize) : rows;
    const last = kept[kept.length - 1];
    return {
      items: kept.map(map),
      page_size: this.pageSize,
      has_next: hasNext,
      next_cursor:
        hasNext && last !== undefined
          ? this.codec.encode(
              this.scope,
              keysetValuesOf(this.request.order, last as Record<string, unknown>),
            )
          : null,
    };
  }
}
