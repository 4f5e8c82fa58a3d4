import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';

/**
 * A complete answer (status, headers, body bytes) decided before Nest would send the handler's
 * result: a stored idempotent response replayed, or a 4xx stored with its key. Nest sends a
 * handler's result with the route's fixed status, so the answer travels as an exception and
 * {@link PreparedResponseFilter} writes it as it is.
 */
export class PreparedResponse extends Error {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
    readonly body: Buffer,
  ) {
    super(`prepared response ${status}`);
  }
}

/**
 * Writes a {@link PreparedResponse} byte for byte. Bound with every `@Transactional()` handler
 * (a method-level filter comes before the global ProblemFilter, and catches nothing else).
 */
@Catch(PreparedResponse)
export class PreparedResponseFilter implements ExceptionFilter<PreparedResponse> {
  catch(prepared: PreparedResponse, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(prepared.status);
    for (const [name, value] of Object.entries(prepared.headers)) res.setHeader(name, value);
    res.end(prepared.body);
  }
}
