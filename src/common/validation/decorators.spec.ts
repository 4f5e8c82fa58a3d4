import { IsArray, IsObject, IsOptional, IsString } from 'class-validator';
import { AppException } from '../errors/app-exception';
import {
  AliasOf,
  MaxItems,
  MaxKeys,
  MaxLen,
  NoNul,
  NullOrBlank,
  RequiredNonEmptyWhen,
} from './decorators';
import { validateInput } from './validate';
import { bodyProblem } from '../../../test/support/validation';

class Dto {
  @IsOptional() @IsString() @MaxLen(3) name?: string;
  @IsOptional()
  @IsArray()
  @MaxItems(2)
  @IsString({ each: true })
  @MaxLen(2, { each: true })
  tags?: string[];
  @IsOptional() @IsObject() @MaxKeys(2) values?: Record<string, unknown>;
  @IsOptional() @IsString() @NoNul() text?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) @NoNul({ each: true }) texts?: string[];
}

function fieldsRefused(body: Record<string, unknown>): string[] {
  try {
    validateInput(Dto, body, 'body');
    return [];
  } catch (e) {
    if (!(e instanceof AppException)) throw e;
    return Object.keys(e.errors ?? {});
  }
}

describe('bound decorators (validator side; the OpenAPI side is test/unit/openapi-input-bounds)', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['3 characters', { name: 'abc' }, []],
    ['4 characters', { name: 'abcd' }, ['name']],
    ['3 astral characters (6 UTF-16 units)', { name: '😀😀😀' }, []],
    ['a variation selector counts, as in PostgreSQL', { name: '❤️❤️' }, ['name']],
    ['2 items of 2 characters', { tags: ['ab', 'cd'] }, []],
    ['3 items', { tags: ['a', 'b', 'c'] }, ['tags']],
    ['an item of 3 characters', { tags: ['abc'] }, ['tags']],
    ['2 keys', { values: { a: 1, b: { c: 1, d: 2, e: 3 } } }, []],
    ['3 keys', { values: { a: 1, b: 2, c: 3 } }, ['values']],
    ['text without NUL', { text: 'a\u0001b' }, []],
    ['text with a NUL', { text: 'a\u0000b' }, ['text']],
    ['a list item with a NUL', { texts: ['a', '\u0000'] }, ['texts']],
  ])('%s', (_name, body, refused) => {
    expect(fieldsRefused(body)).toEqual(refused);
  });
});

class AliasDto {
  @IsOptional() @IsString() @AliasOf('by_id') by?: string | null;
  @IsOptional() @IsString() @AliasOf('by') by_id?: string | null;
}

class SubsetDto {
  @IsOptional() @IsString() mode?: string;
  @RequiredNonEmptyWhen('mode', 'subset', 'ids are required with mode subset')
  @IsArray()
  ids?: string[];
}

/** The field errors of a 422 for `body`, or `{}` when it validates. */
const problemOf = (cls: new () => object, body: Record<string, unknown>) =>
  bodyProblem(cls, body)?.errors ?? {};

describe('AliasOf: two names of one field agree when both are given', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['neither', {}, []],
    ['only one', { by: 'a' }, []],
    ['only the other', { by_id: 'a' }, []],
    ['both, the same', { by: 'a', by_id: 'a' }, []],
    ['both, different', { by: 'a', by_id: 'b' }, ['by', 'by_id']],
  ])('%s', (_name, body, refused) => {
    const errors = problemOf(AliasDto, body);
    expect(Object.keys(errors).sort()).toEqual(refused);
    for (const key of refused) expect(errors[key][0]).toContain('are aliases; give one of them');
  });
});

describe('RequiredNonEmptyWhen: required and non-empty when another field has a value', () => {
  it.each<[string, Record<string, unknown>, string[] | null]>([
    ['other mode, absent', { mode: 'failed' }, null],
    ['other mode, empty list', { mode: 'failed', ids: [] }, null],
    ['no mode, absent', {}, null],
    ['subset with ids', { mode: 'subset', ids: ['x'] }, null],
    ['subset, absent', { mode: 'subset' }, ['ids are required with mode subset']],
    ['subset, empty list', { mode: 'subset', ids: [] }, ['ids are required with mode subset']],
    ['null, any mode', { mode: 'failed', ids: null }, ['ids must not be null']],
  ])('%s', (_name, body, messages) => {
    const errors = problemOf(SubsetDto, body);
    if (messages === null) expect(errors).toEqual({});
    else for (const m of messages) expect(errors.ids).toContain(m);
  });
});

class BlankDto {
  @NullOrBlank() @IsString() @MaxLen(2) id?: string | null;
}

describe('NullOrBlank: absent, null and blank skip the checks; anything else is checked', () => {
  it.each<[string, Record<string, unknown>, boolean]>([
    ['absent', {}, true],
    ['null', { id: null }, true],
    ['empty', { id: '' }, true],
    ['blank (trimmed first)', { id: '   ' }, true],
    ['valid', { id: 'ab' }, true],
    ['invalid', { id: 'abc' }, false],
    ['not a string', { id: 5 }, false],
  ])('%s', (_name, body, accepted) => {
    expect(Object.keys(problemOf(BlankDto, body))).toEqual(accepted ? [] : ['id']);
  });
});
