import { join } from 'node:path';
import { plainToInstance, Type } from 'class-transformer';
import {
  IsArray,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
  ValidateNested,
  validateSync,
} from 'class-validator';
import fc from 'fast-check';
import { bodyProblem, sourcesMatching, ValidationCounter } from '../../../test/support/validation';
import { MAX_INVALID_LIST_ITEMS, NestedList } from './nested-list';
import { MAX_ERROR_FIELDS, validateInput } from './validate';

/** Objects whose validation ran. */
const validated = new ValidationCounter();

class Step {
  @IsString() @MaxLength(5) action: string;
  @IsOptional() @IsInt() order?: number;
  @validated.Counted() counted?: unknown;
}

class WithList {
  @IsArray() @NestedList(() => Step) steps: Step[];
}

/** The same list through class-validator's own nested validation. */
class WithValidateNested {
  @IsArray() @ValidateNested({ each: true }) @Type(() => Step) steps: Step[];
}

class Outer {
  @IsObject() @ValidateNested() @Type(() => WithList) inner: WithList;
}

beforeEach(() => {
  validated.count = 0;
});

describe('NestedList', () => {
  it.each([
    ['a string', 'a'],
    ['a number', 3],
    ['null', null],
    ['a boolean', true],
    ['an empty nested array', []],
    ['a nested array of valid items', [{ action: 'ok' }]],
  ])('refuses an item that is %s, under its index', (_name, item) => {
    const e = bodyProblem(WithList, { steps: [{ action: 'ok' }, item] });
    expect(e?.code).toBe('validation_error');
    expect(e?.errors).toEqual({ 'steps.1': ['each value in steps must be an object'] });
    expect(e?.message).toBe('Request contains invalid fields');
  });

  it('answers valid items as instances of their DTO', () => {
    const dto = validateInput(
      WithList,
      { steps: [{ action: ' a ' }, { action: 'b', order: 2 }] },
      'body',
    );
    expect(dto.steps).toHaveLength(2);
    expect(dto.steps.every((s) => s instanceof Step)).toBe(true);
    expect(dto.steps.map((s) => s.action)).toEqual(['a', 'b']);
    expect(validated.count).toBe(2);
  });

  it('reports the paths and messages class-validator reports for lists of objects', () => {
    const value = fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.integer(),
      fc.constant(null),
      fc.boolean(),
    );
    const item = fc.record({ action: value, order: value, extra: value }, { requiredKeys: [] });
    fc.assert(
      fc.property(fc.array(item, { maxLength: 30 }), (steps) => {
        const ours = bodyProblem(WithList, { steps });
        const theirs = bodyProblem(WithValidateNested, { steps });
        expect(ours?.errors).toEqual(theirs?.errors);
        expect(ours?.message).toEqual(theirs?.message);
      }),
      { numRuns: 300 },
    );
  });

  it(`validates objects up to the list's ${MAX_INVALID_LIST_ITEMS}th invalid one and says so`, () => {
    const e = bodyProblem(WithList, { steps: Array.from({ length: 10_000 }, () => ({ junk: 1 })) });
    expect(validated.count).toBe(MAX_INVALID_LIST_ITEMS);
    expect(Object.keys(e?.errors ?? {})).toHaveLength(MAX_ERROR_FIELDS);
    expect(e?.errors?.['steps.0.action']).toEqual([
      'action must be shorter than or equal to 5 characters',
      'action must be a string',
    ]);
    expect(e?.errors?.['steps.0.junk']).toEqual(['Unknown field']);
    expect(e?.message).toBe(
      `Request contains invalid fields (the first ${MAX_ERROR_FIELDS} of ${2 * MAX_INVALID_LIST_ITEMS} ` +
        `are listed; the objects after steps[${MAX_INVALID_LIST_ITEMS - 1}] were not checked)`,
    );
  });

  it('counts invalid objects only: valid ones between them are validated and pass', () => {
    // Every other item is invalid: the 100th invalid one is at index 199.
    const steps = Array.from({ length: 1_000 }, (_, i) => ({ action: i % 2 === 1 ? 7 : 'ok' }));
    const e = bodyProblem(WithList, { steps });
    expect(validated.count).toBe(2 * MAX_INVALID_LIST_ITEMS);
    expect(Object.keys(e?.errors ?? {})).toEqual(
      Array.from({ length: MAX_INVALID_LIST_ITEMS }, (_, i) => `steps.${2 * i + 1}.action`),
    );
    expect(e?.message).toContain(
      `the objects after steps[${2 * MAX_INVALID_LIST_ITEMS - 1}] were not checked`,
    );
  });

  it(`validates every object when the ${MAX_INVALID_LIST_ITEMS}th invalid one is the last`, () => {
    const steps = Array.from({ length: MAX_INVALID_LIST_ITEMS }, () => ({ action: 7 }));
    const e = bodyProblem(WithList, { steps });
    expect(validated.count).toBe(MAX_INVALID_LIST_ITEMS);
    expect(Object.keys(e?.errors ?? {})).toHaveLength(MAX_INVALID_LIST_ITEMS);
    expect(e?.message).toBe('Request contains invalid fields');
  });

  it('reports every item that is not an object (no validation needed), with the count', () => {
    const e = bodyProblem(WithList, { steps: new Array(5_000).fill(0) });
    expect(Object.keys(e?.errors ?? {})).toHaveLength(MAX_ERROR_FIELDS);
    expect(e?.message).toBe(
      `Request contains invalid fields (the first ${MAX_ERROR_FIELDS} of 5000 are listed)`,
    );
    // After the objects stop being validated, items that are not objects are still counted.
    const mixed = bodyProblem(WithList, {
      steps: [...Array.from({ length: 200 }, () => ({ action: 7 })), ...new Array(50).fill('x')],
    });
    expect(validated.count).toBe(MAX_INVALID_LIST_ITEMS);
    expect(mixed?.message).toBe(
      `Request contains invalid fields (the first ${MAX_ERROR_FIELDS} of ${MAX_INVALID_LIST_ITEMS + 50} ` +
        `are listed; the objects after steps[${MAX_INVALID_LIST_ITEMS - 1}] were not checked)`,
    );
  });

  it('reports a nested list under its whole path', () => {
    const e = bodyProblem(Outer, { inner: { steps: [{ action: 'ok' }, { action: 1 }, 'x'] } });
    expect(e?.errors).toEqual({
      'inner.steps.1.action': [
        'action must be shorter than or equal to 5 characters',
        'action must be a string',
      ],
      'inner.steps.2': ['each value in steps must be an object'],
    });
  });

  it('makes the list invalid under a bare validateSync too', () => {
    const errors = validateSync(plainToInstance(WithList, { steps: [{ action: 'ok' }, []] }));
    expect(errors.map((e) => [e.property, Object.keys(e.constraints ?? {})])).toEqual([
      ['steps', ['nestedList']],
    ]);
    expect(validateSync(plainToInstance(WithList, { steps: [{ action: 'ok' }] }))).toEqual([]);
  });

  it("is what the service's DTOs use: no @ValidateNested({ each: true }) is left in src", () => {
    const root = join(__dirname, '..', '..');
    expect(sourcesMatching(root, /^\s*@ValidateNested\(\s*\{[^}]*each:\s*true/m)).toEqual([]);
  });
});
