import { Type } from 'class-transformer';
import {
  IsArray,
  IsEmail,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { AppException } from '../errors/app-exception';
import { PageQueryDto } from '../pagination/page';
import { NoNul } from './decorators';
import { KeptAsParsed, MAX_ERROR_FIELDS, validateInput } from './validate';

class Dto {
  @IsString() name: string;
  @IsOptional() @IsObject() meta?: Record<string, unknown>;
}

describe('validateInput', () => {
  it('keeps reserved keys inside free-form objects as plain data', () => {
    const body = JSON.parse(
      '{"name":" x ","meta":{"constructor":"c","__proto__":{"polluted":true},"prototype":1,"nested":[{"constructor":2}]}}',
    );
    const dto = validateInput(Dto, body, 'body');
    expect(dto.name).toBe('x');
    const meta = dto.meta as Record<string, unknown>;
    expect(Object.keys(meta).sort()).toEqual(['__proto__', 'constructor', 'nested', 'prototype']);
    expect(meta.constructor).toBe('c');
    expect(Object.getOwnPropertyDescriptor(meta, '__proto__')?.value).toEqual({ polluted: true });
    expect(meta.nested).toEqual([JSON.parse('{"constructor":2}')]);
    expect(Object.getPrototypeOf(dto.meta)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('rejects unknown fields, including reserved names, with their paths', () => {
    try {
      validateInput(Dto, JSON.parse('{"name":"x","constructor":1,"extra":2}'), 'body');
      throw new Error('expected a validation error');
    } catch (e) {
      expect(e).toBeInstanceOf(AppException);
      expect((e as AppException).errors).toHaveProperty('extra');
    }
  });

  it('prefixes query errors with query.', () => {
    try {
      validateInput(Dto, { name: 5 }, 'query');
      throw new Error('expected a validation error');
    } catch (e) {
      expect(Object.keys((e as AppException).errors ?? {})).toEqual(['query.name']);
    }
  });

  describe('a value that is not a number gets its type message alone, never a false bound', () => {
    function queryErrors(query: Record<string, unknown>): Record<string, string[]> {
      try {
        validateInput(PageQueryDto, query, 'query');
      } catch (e) {
        return (e as AppException).errors ?? {};
      }
      return {};
    }
    it.each([
      ['1.5', ['page_size must be an integer number']],
      ['abc', ['page_size must be an integer number']],
      ['1e3', ['page_size must be an integer number']],
      ['0', ['page_size must not be less than 1']],
      ['201', ['page_size must not be greater than 200']],
    ])('page_size=%s', (value, messages) => {
      expect(queryErrors({ page_size: value })).toEqual({ 'query.page_size': messages });
    });
    it('keeps the bound of a number that is out of range and not an integer', () => {
      class Body {
        @IsInt() @Min(1) @Max(200) size!: number;
      }
      try {
        validateInput(Body, { size: 300.5 }, 'body');
        throw new Error('expected a validation error');
      } catch (e) {
        expect((e as AppException).errors?.size?.sort()).toEqual([
          'size must be an integer number',
          'size must not be greater than 200',
        ]);
      }
    });
    it('passes a valid page_size', () => {
      expect(queryErrors({ page_size: '200' })).toEqual({});
    });
  });

  describe('@KeptAsParsed fields skip the copy and validate as before', () => {
    class Body {
      @IsString() name!: string;
      @KeptAsParsed() @IsOptional() @IsObject() meta?: Record<string, unknown>;
    }
    const errorsOf = (body: unknown): Record<string, string[]> | undefined => {
      try {
        validateInput(Body, body, 'body');
      } catch (e) {
        return (e as AppException).errors;
      }
      return undefined;
    };

    it('hands the parsed object itself to the DTO, reserved keys and all', () => {
      const body = JSON.parse(
        '{"name":" x ","meta":{"constructor":{"a":1},"__proto__":{"b":2},"s":" padded "}}',
      ) as { meta: object };
      const out = validateInput(Body, body, 'body');
      expect(out).toBeInstanceOf(Body);
      expect(out.name).toBe('x');
      expect(out.meta).toBe(body.meta);
      expect(Object.keys(out.meta ?? {})).toEqual(['constructor', '__proto__', 's']);
      expect(out.meta?.s).toBe(' padded ');
    });

    it('takes the full path for ill-formed text, which is reported on its field', () => {
      const meta = { ['k\ud800']: 'v' };
      expect(errorsOf({ name: 'x', meta })).toEqual({
        meta: ['meta keys must not contain unpaired UTF-16 surrogates'],
      });
      expect(errorsOf({ name: 'x', meta: { k: ['\udc00'] } })).toEqual({
        'meta.k.0': ['k[0] must not contain unpaired UTF-16 surrogates'],
      });
    });

    it.each([
      ['an array', [1]],
      ['a string', 'text'],
    ])('validates %s as before', (_name, meta) => {
      expect(errorsOf({ name: 'x', meta })).toEqual({ meta: ['meta must be an object'] });
    });

    it('still refuses unknown fields next to it', () => {
      expect(errorsOf({ name: 'x', meta: {}, other: 1 })).toEqual({ other: ['Unknown field'] });
    });
  });

  describe('NUL characters in a query string are refused on the parameter, once', () => {
    class SearchQuery {
      @IsOptional() @IsString() search?: string;
      @IsOptional() @IsString() @NoNul() build?: string;
      @IsOptional() @IsArray() @IsString({ each: true }) tag?: string[];
    }
    const errorsOf = (query: object) => {
      try {
        validateInput(SearchQuery, query, 'query');
        return null;
      } catch (e) {
        return (e as AppException).errors;
      }
    };

    it.each<[string, object, Record<string, string[]> | null]>([
      [
        'a value without @NoNul',
        { search: 'a\u0000b' },
        { 'query.search': ['search must not contain NUL characters'] },
      ],
      [
        'a value with @NoNul (not twice)',
        { build: '\u0000' },
        { 'query.build': ['build must not contain NUL characters'] },
      ],
      [
        'an item of a list',
        { tag: ['ok', 'x\u0000'] },
        { 'query.tag': ['tag must not contain NUL characters'] },
      ],
      ['other control characters', { search: 'a\u0001b', tag: ['\t'] }, null],
    ])('%s', (_name, query, expected) => {
      expect(errorsOf(query)).toEqual(expected);
    });
  });

  describe('a query without parameters answers what the full validation would', () => {
    class RequiredQuery {
      @IsString() name: string;
    }
    class DefaultsQuery {
      @IsOptional() @IsInt() page: number = 1;
      @IsOptional() @IsString({ each: true }) fields?: string[] = [];
    }
    class PaddedDefaultQuery {
      @IsOptional() @IsString() sort = ' name ';
    }

    it('still refuses an empty query that lacks a required parameter, every time', () => {
      for (let i = 0; i < 2; i++) {
        expect(() => validateInput(RequiredQuery, {}, 'query')).toThrow(AppException);
      }
    });

    it('answers a new instance with the declared defaults each time', () => {
      const first = validateInput(DefaultsQuery, {}, 'query');
      const second = validateInput(DefaultsQuery, Object.create(null) as object, 'query');
      for (const q of [first, second]) {
        expect(q).toBeInstanceOf(DefaultsQuery);
        expect(q).toEqual({ page: 1, fields: [] });
      }
      expect(second).not.toBe(first);
      expect(second.fields).not.toBe(first.fields);
      first.fields?.push('x');
      expect(validateInput(DefaultsQuery, {}, 'query').fields).toEqual([]);
    });

    it('takes the full path where it differs from the bare instance (a default it trims)', () => {
      for (let i = 0; i < 2; i++) {
        const q = validateInput(PaddedDefaultQuery, {}, 'query');
        expect(q).toBeInstanceOf(PaddedDefaultQuery);
        expect(q.sort).toBe('name');
      }
    });

    it('validates a query with parameters in full', () => {
      expect(() => validateInput(DefaultsQuery, { page: 'x' }, 'query')).toThrow(AppException);
      expect(validateInput(DefaultsQuery, { fields: [' a '] }, 'query')).toEqual({
        page: 1,
        fields: ['a'],
      });
    });
  });

  describe('strings must be well-formed UTF-16 (lone surrogates are a 422, never reach a validator)', () => {
    class EmailDto {
      @IsOptional() @IsEmail() email?: string;
      @IsOptional() @IsString({ each: true }) tags?: string[];
      @IsOptional() @IsObject() meta?: Record<string, unknown>;
    }
    const errorsOf = (body: unknown, kind: 'body' | 'query' = 'body') => {
      try {
        validateInput(EmailDto, body, kind);
      } catch (e) {
        expect(e).toBeInstanceOf(AppException);
        expect((e as AppException).code).toBe('validation_error');
        return (e as AppException).errors;
      }
      throw new Error('expected a validation error');
    };

    it.each<[string, unknown, 'body' | 'query', Record<string, string[]>]>([
      [
        'an email (isEmail would throw a URIError)',
        { email: 'a\ud800@x.io' },
        'body',
        {
          email: ['email must be an email', 'email must not contain unpaired UTF-16 surrogates'],
        },
      ],
      [
        'a list item',
        { tags: ['ok', '\udc00'] },
        'body',
        {
          'tags.1': ['tags[1] must not contain unpaired UTF-16 surrogates'],
        },
      ],
      [
        'a nested free-form value',
        { meta: { a: { b: 'x\ud83d' } } },
        'body',
        {
          'meta.a.b': ['b must not contain unpaired UTF-16 surrogates'],
        },
      ],
      [
        'a free-form key',
        { meta: { ['k\ud800']: 1 } },
        'body',
        {
          meta: ['meta keys must not contain unpaired UTF-16 surrogates'],
        },
      ],
      [
        'a body key',
        { ['\udfff']: 1 },
        'body',
        {
          body: ['body keys must not contain unpaired UTF-16 surrogates'],
          '\ufffd': ['Unknown field'],
        },
      ],
      [
        'a query value',
        { email: '\ud800' },
        'query',
        {
          'query.email': [
            'email must be an email',
            'email must not contain unpaired UTF-16 surrogates',
          ],
        },
      ],
    ])('%s', (_name, body, kind, expected) => {
      expect(errorsOf(body, kind)).toEqual(expected);
    });

    it('reports them together with the other field errors', () => {
      expect(errorsOf({ email: 'not an email', tags: ['\ud800'] })).toEqual({
        email: ['email must be an email'],
        'tags.0': ['tags[0] must not contain unpaired UTF-16 surrogates'],
      });
    });

    it('accepts well-formed text, astral characters included', () => {
      const dto = validateInput(
        EmailDto,
        { email: 'a@x.io', tags: ['😀'], meta: { '😀': '😀' } },
        'body',
      );
      expect(dto.tags).toEqual(['😀']);
    });
  });
});

class Step {
  @IsString() action: string;
}

class WithSteps {
  @IsArray() @ValidateNested({ each: true }) @Type(() => Step) steps: Step[];
}

describe('a 422 lists at most MAX_ERROR_FIELDS fields', () => {
  const problem = (body: unknown): AppException => {
    try {
      validateInput(WithSteps, body, 'body');
    } catch (e) {
      return e as AppException;
    }
    throw new Error('expected a validation error');
  };

  it.each([
    [1, 1, 'Request contains invalid fields'],
    [MAX_ERROR_FIELDS, MAX_ERROR_FIELDS, 'Request contains invalid fields'],
    [
      5_000,
      MAX_ERROR_FIELDS,
      `Request contains invalid fields (the first ${MAX_ERROR_FIELDS} of 5000 are listed)`,
    ],
  ])('%i bad elements → %i fields listed', (bad, listed, detail) => {
    const e = problem({ steps: new Array(bad).fill(0) });
    expect(e.code).toBe('validation_error');
    expect(Object.keys(e.errors ?? {})).toHaveLength(listed);
    expect(Object.keys(e.errors ?? {})[0]).toBe('steps.0');
    expect(e.message).toBe(detail);
  });
});
