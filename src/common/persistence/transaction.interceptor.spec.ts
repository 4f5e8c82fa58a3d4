import 'reflect-metadata';
import { Controller, Get, Module, Patch, Post, RequestMethod, Type } from '@nestjs/common';
import { INTERCEPTORS_METADATA, METHOD_METADATA, MODULE_METADATA } from '@nestjs/common/constants';
import { FEATURE_MODULES } from '../../modules';
import { bindTransactions, TransactionInterceptor } from './transaction.interceptor';

const interceptorsOf = (handler: unknown): unknown[] =>
  (Reflect.getMetadata(INTERCEPTORS_METADATA, handler as object) ?? []) as unknown[];

describe('bindTransactions', () => {
  it('binds the interceptor to writing handlers only, once', () => {
    @Controller('things')
    class ThingsController {
      @Get() list() {}
      @Post() create() {}
      @Patch(':id') update() {}
      helper() {}
    }
    @Module({ controllers: [ThingsController] })
    class ThingsModule {}

    bindTransactions([ThingsModule]);
    bindTransactions([ThingsModule]);
    const p = ThingsController.prototype;
    expect(interceptorsOf(p.list)).toEqual([]);
    expect(interceptorsOf(p.create)).toEqual([TransactionInterceptor]);
    expect(interceptorsOf(p.update)).toEqual([TransactionInterceptor]);
    expect(interceptorsOf(p.helper)).toEqual([]);
  });

  it('covers every writing endpoint of the service, and no read', () => {
    bindTransactions(FEATURE_MODULES);
    let writes = 0;
    let reads = 0;
    for (const module of FEATURE_MODULES) {
      const controllers = (Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, module) ?? []) as Array<Type<unknown>>;
      for (const c of controllers) {
        const proto = c.prototype as Record<string, unknown>;
        for (const name of Object.getOwnPropertyNames(proto)) {
          const method = Reflect.getMetadata(METHOD_METADATA, proto[name] as object) as RequestMethod | undefined;
          if (name === 'constructor' || method === undefined) continue;
          if (method === RequestMethod.GET) {
            reads++;
            expect(interceptorsOf(proto[name])).toEqual([]);
          } else {
            writes++;
            expect(interceptorsOf(proto[name])).toEqual([TransactionInterceptor]);
          }
        }
      }
    }
    expect(writes).toBeGreaterThan(40);
    expect(reads).toBeGreaterThan(40);
  });
});
