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
import { Nullable, OptionalNotNull } from './decorators';
import { NestedList } from './nested-list';
import { NestedObject } from './nested-object';
import { validateInput } from './validate';

/** Objects whose validation ran. */
const validated = new ValidationCounter();

class Step {
  @IsString() @MaxLength(5) action: string;
}

class Config {
  @IsString() @MaxLength(5) name: string;
  @IsOptional() @IsInt() order?: number;
  @IsOptional() @IsArray() @NestedList(() => Step) steps?: Step[];
  @validated.Counted() counted?: unknown;
}

class WithObject {
  @OptionalNotNull() @NestedObject(() => Config) config?: Config;
}

class WithNullableObject {
  @Nullable() @NestedObject(() => Config) config?: Config | null;
}

/** The same field through class-validator's own pair. */
class WithValidateNested {
  @OptionalNotNull() @IsObject() @ValidateNested() @Type(() => Config) config?: Config;
}

class Outer {
  @NestedObject(() => WithObject) inner: WithObject;
}

beforeEach(() => {
  validated.count = 0;
});

describe('NestedObject', () => {
  it.each<[string, unknown, string[]]>([
    ['an empty array', [], ['config must be an object']],
    ['an array of a valid object', [{ name: 'ok' }], ['config must be an object']],
    [
      'an array of 10,000 invalid objects',
      Array.from({ length: 10_000 }, () => ({ name: 7, junk: 1 })),
      ['config must be an object'],
    ],
    ['an array of strings', ['a', 'b'], ['config must be an object']],
    ['a string', 'a', ['config must be an object']],
    ['an empty string', '', ['config must be an object']],
    ['a number', 3, ['config must be an object']],
    ['a boolean', true, ['config must be an object']],
    ['null', null, ['config must not be null', 'config must be an object']],
  ])('refuses %s under the field alone, validating nothing inside', (_name, value, messages) => {
    const e = bodyProblem(WithObject, { config: value });
    expect(e?.code).toBe('validation_error');
    expect(e?.errors).toEqual({ config: messages });
    expect(e?.message).toBe('Request contains invalid fields');
    expect(validated.count).toBe(0);
  });

  it.each<[string, unknown]>([
    ['an array', [{ name: 'ok' }]],
    ['a string', 'a'],
    ['a number', 0],
  ])('refuses %s on a nullable field too', (_name, value) => {
    expect(bodyProblem(WithNullableObject, { config: value })?.errors).toEqual({
      config: ['config must be an object'],
    });
  });

  it.each<[string, object]>([
    ['absent', {}],
    ['null on a nullable field', { config: null }],
  ])('lets the field be %s', (_name, body) => {
    expect(bodyProblem(WithNullableObject, body)).toBeNull();
    expect(validated.count).toBe(0);
  });

  it('answers a valid object as an instance of its DTO, trimmed', () => {
    const dto = validateInput(
      WithObject,
      { config: { name: ' a ', steps: [{ action: 'b' }] } },
      'body',
    );
    expect(dto.config).toBeInstanceOf(Config);
    expect(dto.config?.name).toBe('a');
    expect(dto.config?.steps?.[0]).toBeInstanceOf(Step);
    expect(validated.count).toBe(1);
  });

  it('reports the paths and messages class-validator reports for an object', () => {
    const value = fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.integer(),
      fc.constant(null),
      fc.boolean(),
      fc.constant([{ action: 'toolong' }, 'x']),
    );
    const config = fc.record(
      { name: value, order: value, steps: value, extra: value },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(config, (c) => {
        const ours = bodyProblem(WithObject, { config: c });
        const theirs = bodyProblem(WithValidateNested, { config: c });
        expect(ours?.errors).toEqual(theirs?.errors);
        expect(ours?.message).toEqual(theirs?.message);
      }),
      { numRuns: 300 },
    );
  });

  it('reports nested objects and their lists under their whole paths', () => {
    const e = bodyProblem(Outer, {
      inner: { config: { name: 'toolong', steps: [{ action: 1 }, 'x'], junk: 1 } },
    });
    expect(e?.errors).toEqual({
      'inner.config.name': ['name must be shorter than or equal to 5 characters'],
      'inner.config.steps.0.action': [
        'action must be shorter than or equal to 5 characters',
        'action must be a string',
      ],
      'inner.config.steps.1': ['each value in steps must be an object'],
      'inner.config.junk': ['Unknown field'],
    });
    expect(bodyProblem(Outer, { inner: { config: [{ name: 'ok' }] } })?.errors).toEqual({
      'inner.config': ['config must be an object'],
    });
  });

  it('makes the field invalid under a bare validateSync too', () => {
    const constraints = (body: object) =>
      validateSync(plainToInstance(WithObject, body)).map((e) => [e.property, e.constraints]);
    expect(constraints({ config: [{ name: 'ok' }] })).toEqual([
      ['config', { nestedObject: 'config must be an object' }],
    ]);
    expect(constraints({ config: { name: 7 } })).toEqual([
      ['config', { nestedObject: 'config must be a valid object' }],
    ]);
    expect(constraints({ config: { name: 'ok' } })).toEqual([]);
  });

  it("is what the service's DTOs use: no @ValidateNested() is left in src", () => {
    const root = join(__dirname, '..', '..');
    expect(sourcesMatching(root, /^\s*@ValidateNested\(/m)).toEqual([]);
  });
});
