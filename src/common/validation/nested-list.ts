import { applyDecorators } from '@nestjs/common';
import { ClassConstructor, Type } from 'class-transformer';
import {
  ValidateBy,
  ValidationArguments,
  ValidationError,
  ValidatorOptions,
  validateSync,
} from 'class-validator';

/**
 * Most invalid objects of one list that are validated: the objects after them are not. A 422 lists
 * at most 100 fields (`MAX_ERROR_FIELDS`), so a body of 10,000 junk objects is refused after
 * validating about 100 of them instead of all (about a second of the one thread in a full
 * application).
 */
export const MAX_INVALID_LIST_ITEMS = 100;

/**
 * One invalid item of a list (`errors` null when the item is not an object at all), or with `index`
 * null the errors of a single nested object ({@link NestedObject}).
 */
export interface ListFinding {
  owner: object;
  property: string;
  index: number | null;
  errors: ValidationError[] | null;
}

/** A list whose objects were validated up to its {@link MAX_INVALID_LIST_ITEMS}th invalid one, `index`. */
export interface StoppedList {
  owner: object;
  property: string;
  index: number;
}

/** What the lists and nested objects of one validated request part found. */
export interface ListCheck {
  readonly options: ValidatorOptions;
  readonly findings: ListFinding[];
  readonly stopped: StoppedList[];
}

/** The check of the `validateSync` running now (validation is synchronous: one at a time). */
let active: ListCheck | null = null;

/** The check of the running {@link withListCheck}, or null under a bare `validateSync`. */
export function runningCheck(): ListCheck | null {
  return active;
}

/**
 * Runs `validate` (one `validateSync` of a whole request part, with `options`) with the items of
 * its {@link NestedList}s and its {@link NestedObject}s checked with the same options and reported
 * to the returned check.
 */
export function withListCheck<T>(
  options: ValidatorOptions,
  validate: () => T,
): { result: T; check: ListCheck } {
  const previous = active;
  const check: ListCheck = { options, findings: [], stopped: [] };
  active = check;
  try {
    return { result: validate(), check };
  } finally {
    active = previous;
  }
}

/**
 * Checks each item of a list: it must be an instance of `type` (class-transformer makes one of every
 * object item; a string, number, null or nested array stays what it is and is refused), valid as
 * that DTO. Invalid items go to the running {@link ListCheck}, which reports them under
 * `<list>.<index>`. After the list's {@link MAX_INVALID_LIST_ITEMS}th invalid object the remaining
 * objects are not validated (that is what costs); items that are not objects are still reported.
 * Outside a check (a bare `validateSync`) the list is simply invalid.
 */
function checkItems(
  value: unknown,
  args: ValidationArguments,
  type: ClassConstructor<object>,
): boolean {
  if (!Array.isArray(value)) return true; // @IsArray() beside it says so
  const check = active;
  let invalidObjects = 0;
  let stopped = false;
  for (let index = 0; index < value.length; index++) {
    const item: unknown = value[index];
    const isObject = item instanceof type;
    if (isObject && stopped) continue;
    const errors = isObject ? validateSync(item, check?.options) : null;
    if (errors !== null && errors.length === 0) continue;
    if (check === null) return false;
    check.findings.push({ owner: args.object, property: args.property, index, errors });
    if (!isObject) continue;
    invalidObjects += 1;
    if (invalidObjects === MAX_INVALID_LIST_ITEMS && index < value.length - 1) {
      check.stopped.push({ owner: args.object, property: args.property, index });
      stopped = true;
    }
  }
  return true;
}

/**
 * A list of nested DTOs of `type` (put `@IsArray()` and `@MaxItems(n)` beside it). Unlike
 * class-validator's `@ValidateNested({ each: true })`, an item that is not an object (a string, null,
 * a nested array: class-validator walked into nested arrays and let `[[]]` through) is refused, and
 * objects are validated up to the {@link MAX_INVALID_LIST_ITEMS}th invalid one. Errors keep their
 * paths (`steps.3.action`).
 */
export function NestedList(type: () => ClassConstructor<object>): PropertyDecorator {
  return applyDecorators(
    Type(type),
    ValidateBy({
      name: 'nestedList',
      validator: {
        validate: (value: unknown, args: ValidationArguments) => checkItems(value, args, type()),
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property ?? 'list'} must hold valid objects only`,
      },
    }),
  );
}

/** The message of an item that is not an object. */
export function notAnObjectMessage(property: string): string {
  return `each value in ${property} must be an object`;
}
