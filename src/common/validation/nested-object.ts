import { applyDecorators } from '@nestjs/common';
import { ClassConstructor, Type } from 'class-transformer';
import { ValidateBy, ValidationArguments, validateSync } from 'class-validator';
import { runningCheck } from './nested-list';

/** The message of a value that is not an object (class-validator's `@IsObject()` says the same). */
export function notAnObjectValueMessage(property: string): string {
  return `${property} must be an object`;
}

/**
 * Checks a single nested object: it must be an instance of `type` (class-transformer makes one of
 * an object; an array, string, number, boolean or null stays what it is and is refused here, its
 * items never looked at), valid as that DTO. Its errors go to the running check, which reports them
 * under `<property>.<field>` as class-validator's `@ValidateNested()` did. Outside a check (a bare
 * `validateSync`) an invalid object simply makes the property invalid.
 */
function checkObject(
  value: unknown,
  args: ValidationArguments,
  type: ClassConstructor<object>,
): boolean {
  if (!(value instanceof type)) return false;
  const check = runningCheck();
  const errors = validateSync(value, check?.options);
  if (errors.length === 0) return true;
  if (check === null) return false;
  check.findings.push({ owner: args.object, property: args.property, index: null, errors });
  return true;
}

/**
 * A single nested DTO of `type`, in place of the pair `@IsObject() @ValidateNested() @Type(() => X)`
 * (put `@Nullable()` or `@OptionalNotNull()` beside it as the field requires). class-validator's
 * `@ValidateNested()` walks an array sent in its place element by element, whatever `@IsObject()`
 * says: `generation_config` sent as 10,000 objects cost 1–2 s of the one thread before its 422.
 * Here a value that is not an object (an array, a string, a number, a boolean, null) is refused as
 * `<property> must be an object` before anything inside it is validated; an object is validated as
 * that DTO, its errors under their paths (`generation_config.product_ids`) as before.
 */
export function NestedObject(type: () => ClassConstructor<object>): PropertyDecorator {
  return applyDecorators(
    Type(type),
    ValidateBy({
      name: 'nestedObject',
      validator: {
        validate: (value: unknown, args: ValidationArguments) => checkObject(value, args, type()),
        defaultMessage: (args?: ValidationArguments) =>
          args !== undefined && args.value instanceof type()
            ? `${args.property} must be a valid object`
            : notAnObjectValueMessage(args?.property ?? 'value'),
      },
    }),
  );
}
