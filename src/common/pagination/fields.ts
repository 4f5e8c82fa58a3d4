import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ValidateBy } from 'class-validator';
import { QUERY_VALUES_MAX } from './page';

/** Longest `fields` value, in characters (every field of the largest object fits several times). */
export const FIELDS_MAX_LENGTH = 2000;

/**
 * `fields=a,b,…` (sparse fields): comma-separated top-level field names of the answered object (the
 * parameter may also repeat). Names are trimmed; a blank value means every field (as without it).
 */
export function parseFieldsParam(value: unknown): unknown {
  if (value === undefined) return undefined;
  const values = Array.isArray(value) ? value : [value];
  // Refused whole (a string is not a list of names): not a string, or longer than the bound.
  if (!values.every((v) => typeof v === 'string' && v.length <= FIELDS_MAX_LENGTH)) return value;
  const names = (values as string[])
    .flatMap((v) => v.split(','))
    .map((n) => n.trim())
    .filter((n) => n !== '');
  return names.length === 0 ? undefined : [...new Set(names)];
}

/** The names of `value` (a parsed `fields`) that are not in `allowed`. */
export function unknownFields(allowed: readonly string[], value: readonly string[]): string[] {
  const known = new Set(allowed);
  return value.filter((n) => !known.has(n));
}

/**
 * `fields`: the top-level fields of `allowed` (the schema's, in its order) an answer keeps. Unknown
 * names are a 422 `validation_error` on `query.fields` naming them; at most QUERY_VALUES_MAX names.
 */
export function FieldsParam(allowed: readonly string[], what: string): PropertyDecorator {
  return (target, key) => {
    Transform(({ value }) => parseFieldsParam(value))(target, key);
    ValidateBy({
      name: 'fieldsParam',
      validator: {
        validate: (value: unknown) =>
          value === undefined ||
          (Array.isArray(value) &&
            value.length <= QUERY_VALUES_MAX &&
            value.every((v) => typeof v === 'string') &&
            unknownFields(allowed, value as string[]).length === 0),
        defaultMessage: (args) => {
          const value = args?.value as unknown;
          if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
            return `fields must be a comma-separated list of field names of at most ${FIELDS_MAX_LENGTH} characters`;
          }
          if (value.length > QUERY_VALUES_MAX) {
            return `fields must name at most ${QUERY_VALUES_MAX} fields`;
          }
          return (
            `fields has unknown names: ${unknownFields(allowed, value as string[]).join(', ')} ` +
            `(known: ${allowed.join(', ')})`
          );
        },
      },
    })(target, key);
    ApiPropertyOptional({
      type: String,
      maxLength: FIELDS_MAX_LENGTH,
      example: allowed.slice(0, 3).join(','),
      description:
        `Sparse fields: a comma-separated list of top-level fields of ${what} to answer; they ` +
        "come in the schema's order, whatever the order listed. Names: " +
        `${allowed.map((n) => `\`${n}\``).join(', ')}. An unknown name is 422 ` +
        '`validation_error` naming it; a blank value answers every field (as without it).',
    })(target, key);
  };
}

/**
 * The fields to answer: `null` for all (no `fields`), else the set of names. `has(set, name)` tells
 * whether a field is answered.
 */
export type FieldSelection = ReadonlySet<string> | null;

export function fieldSelection(fields: readonly string[] | undefined): FieldSelection {
  return fields === undefined ? null : new Set(fields);
}

/** True when `name` is answered under `selection`. */
export function selects(selection: FieldSelection, name: string): boolean {
  return selection === null || selection.has(name);
}

/** `obj` with only the selected top-level fields, in `obj`'s own (the schema's) order. */
export function pickFields<T extends object>(obj: T, selection: FieldSelection): Partial<T> {
  if (selection === null) return obj;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (selection.has(k)) out[k] = v;
  return out as Partial<T>;
}
