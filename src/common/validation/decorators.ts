import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ApiItemsMaxLength } from '../openapi/item-limits-docs';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  buildMessage,
  IsDefined,
  Matches,
  ValidateBy,
  ValidateIf,
  ValidationOptions,
} from 'class-validator';

/**
 * Optional field that must not be `null` when present (CONTRACT §2: an explicit null for a
 * non-nullable field is a 422). Absent → skipped; null → "must not be null".
 */
export function OptionalNotNull(): PropertyDecorator {
  return applyDecorators(
    ValidateIf((_o, v) => v !== undefined),
    IsDefined({ message: '$property must not be null' }),
  );
}

/**
 * One of two alias fields (`executed_by` / `executed_by_id`): when the other is given too, both
 * must say the same. Checked with the request's shape (a 422 before the 404/403/409 checks, as
 * CONTRACT §3 orders them), under every field of the pair that is given.
 */
export function AliasOf(other: string): PropertyDecorator {
  return ValidateBy({
    name: 'aliasOf',
    validator: {
      validate: (value: unknown, args) => {
        const otherValue = (args?.object as Record<string, unknown> | undefined)?.[other];
        return otherValue === undefined || otherValue === value;
      },
      defaultMessage: (args) =>
        `${args?.property ?? 'value'} and ${other} are aliases; give one of them`,
    },
  });
}

/**
 * Required and non-empty when another field has a given value (`run_case_row_ids` with
 * `mode: subset`), else optional and not null; checked with the request's shape (CONTRACT §3).
 * Put it first, in place of `@OptionalNotNull()`.
 */
export function RequiredNonEmptyWhen(
  other: string,
  otherValue: unknown,
  message: string,
): PropertyDecorator {
  const required = (o: object) => (o as Record<string, unknown>)[other] === otherValue;
  return applyDecorators(
    ValidateIf((o: object, v: unknown) => v !== undefined || required(o)),
    ValidateBy({
      name: 'requiredNonEmptyWhen',
      validator: {
        validate: (value: unknown, args) =>
          value !== null &&
          (!required(args?.object ?? {}) || (Array.isArray(value) && value.length > 0)),
        defaultMessage: (args) =>
          args?.value === null ? `${args.property} must not be null` : message,
      },
    }),
  );
}

/**
 * PostgreSQL text cannot hold NUL characters: a string (or with `{ each: true }` every string of a
 * list) with one is a 422 naming the field, never a 500 — body fields and query parameters alike.
 */
export function NoNul(options?: ValidationOptions): PropertyDecorator {
  return Matches(/^[^\u0000]*$/, {
    message: '$property must not contain NUL characters',
    ...options,
  });
}

/** Optional, nullable field: absent or null skip the other validators (null clears it). */
export function Nullable(): PropertyDecorator {
  return ValidateIf((_o, v) => v !== undefined && v !== null);
}

/**
 * Optional field where null and a blank string both mean "none" (reference: a blank `milestone_id`
 * is treated as null): absent, null and `''` (strings are trimmed first) skip the field's other
 * checks; the service maps blank to null (`blankToNull`).
 */
export function NullOrBlank(): PropertyDecorator {
  return ValidateIf((_o, v) => v !== undefined && v !== null && v !== '');
}

/** Query parameter that may repeat: always an array after transformation. */
export function QueryArray(): PropertyDecorator {
  return Transform(({ value }) =>
    value === undefined ? undefined : Array.isArray(value) ? value : [value],
  );
}

/**
 * Query integer: "12" → 12; anything unparsable, or beyond Number.MAX_SAFE_INTEGER (which would
 * reach SQL as `1e+20` and fail there), stays as is and fails @IsInt.
 */
export function QueryInt(): PropertyDecorator {
  return Transform(({ value }) => {
    if (typeof value !== 'string' || !/^-?\d+$/.test(value.trim())) return value;
    const n = Number(value.trim());
    return Number.isSafeInteger(n) ? n : value;
  });
}

/** Query boolean: "true"/"1" → true, "false"/"0" → false; anything else stays and fails @IsBoolean. */
export function QueryBool(): PropertyDecorator {
  return Transform(({ value }) => {
    if (typeof value !== 'string') return value;
    const v = value.trim().toLowerCase();
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    return value;
  });
}

/**
 * Maximum length in characters as PostgreSQL counts them (Unicode code points). class-validator's
 * MaxLength does not count variation selectors (U+FE0F), so `'❤️'.repeat(150)` passed a 200 limit
 * and overflowed a varchar(200). Validator only: prefer {@link MaxLen}, which documents it too.
 */
export function MaxChars(max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'maxChars',
      constraints: [max],
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || [...value].length <= max,
        defaultMessage: buildMessage(
          (each) => `${each}$property must be at most ${max} characters long`,
        ),
      },
    },
    options,
  );
}

/**
 * A string (or with `{ each: true }` every string of a list) of at most `max` characters, counted
 * as PostgreSQL counts them: the validator and the OpenAPI `maxLength` in one decorator, so the
 * document cannot drift from the rule. Combine with the property's own `@ApiProperty…` (the
 * attributes merge).
 */
export function MaxLen(max: number, options?: ValidationOptions): PropertyDecorator {
  // On lists the bound goes to `items` (query parameters would otherwise carry it on the array).
  const doc = options?.each ? ApiItemsMaxLength(max) : ApiProperty({ maxLength: max });
  return applyDecorators(MaxChars(max, options), doc);
}

/** A list of at most `max` items: `ArrayMaxSize` and the OpenAPI `maxItems` in one decorator. */
export function MaxItems(max: number, options?: ValidationOptions): PropertyDecorator {
  return applyDecorators(ArrayMaxSize(max, options), ApiProperty({ maxItems: max }));
}

/**
 * An object with at most `max` own keys (its nested objects are not counted): the validator and
 * the OpenAPI `maxProperties` in one decorator. Put `@IsObject()` beside it.
 */
export function MaxKeys(max: number, options?: ValidationOptions): PropertyDecorator {
  return applyDecorators(
    ValidateBy(
      {
        name: 'maxKeys',
        constraints: [max],
        validator: {
          validate: (value: unknown) =>
            value === null || typeof value !== 'object' || Object.keys(value).length <= max,
          defaultMessage: buildMessage((each) => `${each}$property must have at most ${max} keys`),
        },
      },
      options,
    ),
    ApiProperty({ maxProperties: max }),
  );
}

export { NestedList } from './nested-list';
export { NestedObject } from './nested-object';
