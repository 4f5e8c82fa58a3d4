import { IsObject, IsOptional, IsString } from 'class-validator';
import { AppException } from '../errors/app-exception';
import { validateInput } from './validate';

class Dto {
  @IsString() name: string;
  @IsOptional() @IsObject() meta?: Record<string, unknown>;
}

describe('validateInput', () => {
  it('keeps reserved keys inside free-form objects as plain data', () => {
    const body = JSON.parse('{"name":" x ","meta":{"constructor":"c","__proto__":{"polluted":true},"prototype":1,"nested":[{"constructor":2}]}}');
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
});
