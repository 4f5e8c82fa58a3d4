import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { from, lastValueFrom, Observable } from 'rxjs';
import { DataSource } from 'typeorm';
import { currentStore } from './request-context';

/**
 * One database transaction per writing request (CONTRACT §2): POST, PUT, PATCH and DELETE handlers
 * run inside `dataSource.transaction`, so they apply completely or not at all; the response is sent
 * only after the commit. GET handlers are read-only and use the pool directly (no BEGIN/COMMIT
 * round trips on the hot read paths).
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
