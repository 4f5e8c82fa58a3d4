import {
  applyDecorators,
  CallHandler,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  Optional,
  SetMetadata,
  UseFilters,
  UseInterceptors,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request, Response } from 'express';
import { from, lastValueFrom, map, Observable } from 'rxjs';
import { DataSource } from 'typeorm';
import { partsEtag, tagResponse } from '../http/conditional';
import { JsonBody } from '../http/json-body';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { PreparedResponseFilter } from '../idempotency/prepared-response';
import { currentStore } from './request-context';

/**
 * One database transaction per writing request (CONTRACT §2): POST, PUT, PATCH and DELETE handlers
 * run inside `dataSource.transaction`, so they apply completely or not at all; the response is sent
 * only after the commit. It is bound to those handlers only, each with {@link Transactional}; GET
 * handlers are read-only and use the pool directly (no BEGIN/COMMIT round trips on the hot read paths).
 * A handler's {@link JsonBody} (a JSON answer in parts) is handed to Nest as its bytes.
 */
@Injectable()
export class TransactionInterceptor implements NestInterceptor {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    /** `Idempotency-Key` on POSTs: it then runs the transaction itself (absent in unit tests). */
    @Optional() private readonly idempotency?: IdempotencyService,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const res = context.switchToHttp().getResponse<Response>();
    return this.run(context, next).pipe(map((result) => answerOf(result, res)));
  }

  private run(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const store = currentStore();
    if (req.method === 'GET' || req.method === 'HEAD' || !store) return next.handle();
    if (this.idempotency?.applies(req, context.getHandler())) {
      const res = context.switchToHttp().getResponse<Response>();
      const handle = () => lastValueFrom(next.handle(), { defaultValue: undefined });
      return from(this.idempotency.run(req, res, store, handle));
    }
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

/**
 * What Nest sends for a handler's result: a {@link JsonBody} as its bytes (with the `ETag` of its
 * parts when the handler marked its answer with `tagWriteAnswer`, as a GET of it hashes them),
 * anything else as it is.
 */
function answerOf(result: unknown, res: Response): unknown {
  if (!(result instanceof JsonBody)) return result;
  if (res.req.method !== 'GET' && res.req.method !== 'HEAD') {
    tagResponse(res, () => partsEtag(result.parts));
  }
  return result.toStreamableFile();
}

const TRANSACTIONAL = 'tms:transactional';

/**
 * Runs the handler in one transaction: Nest's `@UseInterceptors(TransactionInterceptor)`, marked so
 * that {@link isTransactional} can tell. Every POST, PUT, PATCH and DELETE handler carries it, no GET
 * handler does (test/e2e/conventions.e2e-spec.ts checks both against the routes of the OpenAPI
 * document). Bound per handler rather than globally: a read handler then has no interceptor at all
 * and Nest skips its rxjs interceptor chain (as a global interceptor it cost every GET about 0.1 ms of
 * CPU, bench/README.md). Put it after the route decorator, before `@Endpoint`.
 */
export const Transactional = (): MethodDecorator =>
  applyDecorators(
    UseInterceptors(TransactionInterceptor),
    // Sends the answers IdempotencyService decides (replays, stored 4xx) as they are.
    UseFilters(PreparedResponseFilter),
    SetMetadata(TRANSACTIONAL, true),
  );

/** True when the handler was declared {@link Transactional}. */
export function isTransactional(handler: object): boolean {
  return Reflect.getMetadata(TRANSACTIONAL, handler) === true;
}
