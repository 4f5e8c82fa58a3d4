import {
  CallHandler,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  RequestMethod,
  Type,
} from '@nestjs/common';
import { INTERCEPTORS_METADATA, METHOD_METADATA, MODULE_METADATA } from '@nestjs/common/constants';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { from, lastValueFrom, Observable } from 'rxjs';
import { DataSource } from 'typeorm';
import { currentStore } from './request-context';

/**
 * One database transaction per writing request (CONTRACT §2): POST, PUT, PATCH and DELETE handlers
 * run inside `dataSource.transaction`, so they apply completely or not at all; the response is sent
 * only after the commit. It is bound to those handlers only ({@link bindTransactions}); GET handlers
 * are read-only and use the pool directly (no BEGIN/COMMIT round trips on the hot read paths).
 */
@Injectable()
export class TransactionInterceptor implements NestInterceptor {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const store = currentStore();
    if (req.method === 'GET' || req.method === 'HEAD' || !store) return next.handle();
    return from(
      this.dataSource.transaction(async (manager) => {
        store.manager = manager;
        try {
          return await lastValueFrom(next.handle(), { defaultValue: undefined });
        } finally {
          store.manager = undefined;
        }
      }),
    );
  }
}

const READS = new Set<RequestMethod>([RequestMethod.GET, RequestMethod.HEAD]);

/**
 * Binds {@link TransactionInterceptor} to every handler of these modules' controllers that answers
 * another method than GET or HEAD, as the innermost interceptor (it wraps the handler only).
 * Read handlers get no interceptor at all, so Nest skips its rxjs interceptor chain for them (as a
 * global interceptor it cost every GET about 0.1 ms of CPU, bench/README.md). Must run before Nest scans the
 * modules (AppModule.forRoot), so that Nest instantiates the interceptor; binding twice is a no-op.
 */
export function bindTransactions(modules: Array<Type<unknown>>): void {
  for (const module of modules) {
    const controllers = (Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, module) ?? []) as Array<Type<unknown>>;
    for (const controller of controllers) {
      const proto = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(proto)) {
        const handler = proto[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined || READS.has(method)) continue;
        const bound = (Reflect.getMetadata(INTERCEPTORS_METADATA, handler) ?? []) as unknown[];
        if (bound.includes(TransactionInterceptor)) continue;
        Reflect.defineMetadata(INTERCEPTORS_METADATA, [...bound, TransactionInterceptor], handler);
      }
    }
  }
}
