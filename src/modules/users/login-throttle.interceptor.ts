import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { from, lastValueFrom, Observable } from 'rxjs';
import { LoginThrottleService } from './login-throttle.service';

/**
 * Binds {@link LoginThrottleService} to POST /auth/login, outside the handler's transaction
 * (declared below `@Transactional()`: Nest runs the interceptors a method's decorators collect
 * bottom-up, so this one is the outer): the attempt is checked and counted before a transaction
 * is opened, and taken back (when it did not fail) after the login's transaction has ended and
 * given its connection back (counting inside it would be rolled back with a failed login; counting
 * on a second connection while holding the first could exhaust the pool under an attack). The body
 * was validated by the guard before interceptors run.
 */
@Injectable()
export class LoginThrottleInterceptor implements NestInterceptor {
  constructor(private readonly throttle: LoginThrottleService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const username = (req.body as { username?: unknown } | undefined)?.username;
    const handle = () => lastValueFrom(next.handle(), { defaultValue: undefined });
    if (typeof username !== 'string') return next.handle();
    return from(this.throttle.guard(username, req.ip, handle));
  }
}
