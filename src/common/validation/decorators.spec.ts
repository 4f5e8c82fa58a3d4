import { IsArray, IsObject, IsOptional, IsString } from 'class-validator';
import { AppException } from '../errors/app-exception';
import { MaxItems, MaxKeys, MaxLen, NoNul } from './decorators';
import { validateInput } from './validate';

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
