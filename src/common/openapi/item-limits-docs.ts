import { ApiProperty, type ApiPropertyOptions, type OpenAPIObject } from '@nestjs/swagger';

/**
 * Carries a list's per-item `maxLength` (set by `MaxLen(n, { each: true })`) to where
 * `@nestjs/swagger` loses it. For a query parameter built from a DTO's list property, its type
 * mapper rebuilds `items` from `format`, `minimum`, `maximum` and `pattern` only, so the item bound
 * would vanish from the document while the validator still applies it. The decorator therefore
 * also records the bound under this extension key, which the mapper leaves on the parameter;
 * `documentItemLimits` moves it into `schema.items.maxLength` and removes the key everywhere.
 */
export const ITEM_MAX_LENGTH_KEY = 'x-tms-item-max-length';

/**
 * Documents that every string of a list has at most `max` characters (`items.maxLength`), on
 * request bodies and query parameters alike. Only the document: the validator is separate.
 */
export function ApiItemsMaxLength(max: number): PropertyDecorator {
  return ApiProperty({
    items: { type: 'string', maxLength: max },
    [ITEM_MAX_LENGTH_KEY]: max,
  } as ApiPropertyOptions);
}

type Parameter = { schema?: { items?: Record<string, unknown> } } & Record<string, unknown>;

function stripKey(node: unknown): void {
  if (Array.isArray(node)) {
    for (const n of node) stripKey(n);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  delete record[ITEM_MAX_LENGTH_KEY];
  for (const value of Object.values(record)) stripKey(value);
}

export function documentItemLimits(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths ?? {})) {
    for (const op of [item.get, item.head, item.delete, item.post, item.put, item.patch]) {
      for (const p of (op?.parameters ?? []) as unknown as Parameter[]) {
        const max = p[ITEM_MAX_LENGTH_KEY];
        const items = p.schema?.items;
        if (typeof max === 'number' && items !== undefined && !('$ref' in items)) {
          items.maxLength = max;
        }
      }
    }
  }
  // Request and response schemas already carry the bound on `items`; the key only restated it.
  stripKey(document);
}
