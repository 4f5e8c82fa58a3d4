import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsDefined, ValidateIf } from 'class-validator';

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

/** Optional, nullable field: absent or null skip the other validators (null clears it). */
export function Nullable(): PropertyDecorator {
  return ValidateIf((_o, v) => v !== undefined && v !== null);
}

/** Query parameter that may repeat: always an array after transformation. */
export function QueryArray(): PropertyDecorator {
  return Transform(({ value }) => (value === undefined ? undefined : Array.isArray(value) ? value : [value]));
}

/** Query integer: "12" → 12; anything unparsable stays as is and fails @IsInt. */
export function QueryInt(): PropertyDecorator {
  return Transform(({ value }) => {
    if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return Number(value.trim());
    return value;
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
