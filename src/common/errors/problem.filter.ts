import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Inject, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { QueryFailedError } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { AppException, FieldErrors } from './app-exception';
import { ERROR_CATALOGUE, ErrorCode, UNIQUE_CONSTRAINTS } from './error-codes';
import { allowedMethodsFor, requestPath } from '../http/route-table';
import { isDecodingError } from '../http/content-encoding';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: string;
  request_id: string;
  errors?: FieldErrors;
}

/**
 * PostgreSQL SQLSTATEs that mean the database is unreachable, going away, or ended our session:
 * shutdown (57P01-57P03), too many connections (53300), connection failures (08xxx), and the
 * session deadlines the service sets: idle in transaction (25P03), idle session (57P05).
 */
const OUTAGE_SQLSTATES = new Set([
  '57P01', '57P02', '57P03', '57P05', '53300', '25P03', '08000', '08003', '08006', '08001', '08004',
]);
const OUTAGE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/**
 * query_canceled. The service never cancels statements itself, so this is its statement deadline
 * (DB_STATEMENT_TIMEOUT_MS, "canceling statement due to statement timeout") or an operator's
 * pg_cancel_backend: either way the database did not complete the work, and a retry may.
 */
const QUERY_CANCELED = '57014';
/** Seconds a client is asked to wait (Retry-After) when the database is unavailable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

interface ErrorLike {
  code?: unknown;
  status?: unknown;
  statusCode?: unknown;
  type?: unknown;
  constraint?: unknown;
  message?: unknown;
  driverError?: unknown;
}

/**
 * The single exception filter: every non-2xx answer is an `application/problem+json` body (CONTRACT §3).
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemFilter');

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const problem = this.toProblem(exception, req);
    if (res.headersSent) {
      // A streamed download failed midway: nothing more can be said to the client.
      this.logger.error({ err: exception, req_id: req.requestId }, 'error after headers were sent');
      res.destroy();
      return;
    }
    res.status(problem.status);
    for (const [k, v] of Object.entries(problem.headers)) res.setHeader(k, v);
    res.setHeader('Content-Type', 'application/problem+json; charset=utf-8');
    res.send(JSON.stringify(problem.body));
  }

  /** Builds the problem body for any thrown value. Exposed for middleware that answers early. */
  toProblem(exception: unknown, req: Request): { status: number; body: ProblemBody; headers: Record<string, string> } {
    const make = (
      code: ErrorCode,
      detail: string,
      errors?: FieldErrors,
      headers: Record<string, string> = {},
      entry: { status: number; title: string } = ERROR_CATALOGUE[code],
    ) => {
      const body: ProblemBody = {
        type: `${this.config.errorBaseUrl}/${code}`,
        title: entry.title,
        status: entry.status,
        detail,
        instance: requestPath(req),
        code,
        request_id: req.requestId ?? '',
      };
      // CONTRACT §3: `errors` only on validation failures, which are the 422s. A conflict (409) or a
      // missing resource (404) names what is wrong in its detail.
      if (errors && Object.keys(errors).length > 0 && entry.status === 422) body.errors = errors;
      if (entry.status === 401) headers['WWW-Authenticate'] = 'Bearer';
      return { status: entry.status, body, headers };
    };

    if (exception instanceof AppException) {
      return make(exception.code, exception.detail, exception.errors, { ...(exception.headers ?? {}) }, exception);
    }

    // Express's router could not decode a path parameter (`/projects/%FF`; Nest wraps its URIError
    // in a BadRequestException): no resource has such an id, and the router fails before any guard
    // runs, so it is answered like an unknown route.
    const cause = exception instanceof HttpException ? exception.cause : exception;
    if (cause instanceof URIError && (cause as ErrorLike).status === 400) {
      const path = requestPath(req);
      return make('route_not_found', `No resource at ${path}: its path is not valid percent-encoding`);
    }

    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 404) {
        const path = requestPath(req);
        const allowed = allowedMethodsFor(path);
        if (allowed.length > 0 && !allowed.includes(req.method.toUpperCase())) {
          return make('method_not_allowed', `Method ${req.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`, undefined, {
            Allow: allowed.join(', '),
          });
        }
        return make('route_not_found', `No route for ${req.method} ${path}`);
      }
      if (status === 413) return make('payload_too_large', 'The request body is too large');
      if (status === 415) return make('unsupported_media_type', exception.message);
      if (status === 405) return make('method_not_allowed', exception.message);
      if (status === 401) return make('unauthorized', 'Authentication is required');
      if (status === 403) return make('forbidden', exception.message);
      if (status === 400 || status === 422) {
        return make('validation_error', 'Request contains invalid fields', { body: [exception.message] });
      }
    }

    const e = (exception ?? {}) as ErrorLike;
    // body-parser / multer errors carry a status and a type.
    const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
    if (e.type === 'entity.too.large' || status === 413 || e.code === 'LIMIT_FILE_SIZE') {
      return make('payload_too_large', 'The request body is larger than the configured limit');
    }
    if (e.type === 'request.aborted') {
      // The client closed the connection mid-body: nobody will read this answer, and it is no failure.
      return make('validation_error', 'The request body was not received completely', {
        body: ['The connection closed before the whole body arrived'],
      });
    }
    if (e.type === 'entity.parse.failed') {
      return make('validation_error', 'The request body is not valid JSON', { body: ['Malformed JSON'] });
    }
    // A Content-Encoding problem that reached here without the body middleware's mapping
    // (body-parser's own 415, or its decompression stream's error, which carries only a 400).
    if (e.type === 'encoding.unsupported') {
      return make('unsupported_content_encoding', 'The Content-Encoding of the request body is not supported');
    }
    if (status === 400 && isDecodingError(exception)) {
      return make('invalid_content_encoding', 'The request body does not decode as its Content-Encoding says');
    }
    if (e.type === 'charset.unsupported' || status === 415) {
      return make('unsupported_media_type', 'Unsupported content encoding or charset');
    }
    if (typeof e.code === 'string' && e.code.startsWith('LIMIT_')) {
      // multer: LIMIT_UNEXPECTED_FILE, LIMIT_PART_COUNT, LIMIT_FIELD_* …
      return make('validation_error', 'The multipart body is not acceptable', { file: [String(e.message ?? e.code)] });
    }
    if (exception instanceof QueryFailedError || (e.driverError && typeof e.driverError === 'object')) {
      const driver = (e.driverError ?? {}) as ErrorLike;
      const sqlstate = typeof driver.code === 'string' ? driver.code : undefined;
      if (sqlstate === '23505') {
        const constraint = typeof driver.constraint === 'string' ? driver.constraint : '';
        const mapped = UNIQUE_CONSTRAINTS[constraint];
        if (mapped) return make(mapped.code, mapped.detail, { [mapped.field]: [mapped.detail] });
        return make('conflict', 'The request conflicts with existing data');
      }
      // Text PostgreSQL cannot store: a NUL character in a string (22021) or a \u0000 escape in jsonb (22P05).
      if (sqlstate === '22021' || sqlstate === '22P05') {
        return make('validation_error', 'The request contains a character that cannot be stored (NUL, U+0000)', {
          body: ['Text must not contain the NUL character (U+0000)'],
        });
      }
      // Input PostgreSQL refuses to store: text longer than its column (22001; class-validator's
      // MaxLength does not count U+FE0F variation selectors, PostgreSQL does), numbers or dates out of
      // range (22003, 22008). Field validators should catch these first; this keeps them from a 500.
      if (sqlstate === '22001' || sqlstate === '22003' || sqlstate === '22008') {
        const what = sqlstate === '22001' ? 'A text value is longer than its field allows' : 'A value is out of range';
        return make('validation_error', `${what}`, { body: [what] });
      }
      // A row referenced by the request was removed meanwhile, or a row still referenced was deleted.
      if (sqlstate === '23503') {
        return make('conflict', 'A related resource was changed or removed concurrently; retry the request');
      }
      // A CHECK or NOT NULL rule of the schema refused the data (field validators should come first).
      if (sqlstate === '23514' || sqlstate === '23502') {
        return make('validation_error', 'The request contains a value the service cannot store', {
          body: ['A value is not allowed here'],
        });
      }
      if (sqlstate === '40001' || sqlstate === '40P01') {
        return make('conflict', 'A concurrent change conflicted with this request; retry it');
      }
      if (sqlstate === QUERY_CANCELED) {
        return this.outage(make, exception, req, 'The database did not complete the statement in time; retry later');
      }
      if (sqlstate && OUTAGE_SQLSTATES.has(sqlstate)) return this.outage(make, exception, req);
    }
    if (isTimeout(exception) || isTimeout(e.driverError)) {
      return this.outage(make, exception, req, 'The database did not answer in time; retry later');
    }
    if (isOutage(exception) || isOutage(e.driverError)) return this.outage(make, exception, req);

    this.logger.error(
      { err: exception, req_id: req.requestId, method: req.method, path: requestPath(req) },
      'unexpected failure',
    );
    return make('internal_error', 'An unexpected error occurred; quote the request id when reporting it');
  }

  private outage(
    make: (code: ErrorCode, detail: string, errors?: FieldErrors, headers?: Record<string, string>) => {
      status: number;
      body: ProblemBody;
      headers: Record<string, string>;
    },
    exception: unknown,
    req: Request,
    detail = 'The database is unavailable; retry later',
  ) {
    this.logger.error({ err: exception, req_id: req.requestId }, 'database unavailable');
    return make('database_unavailable', detail, undefined, { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) });
  }
}

/**
 * A database deadline passed on the client side: pg's query_timeout (DB_QUERY_TIMEOUT_MS), or no
 * connection within DB_CONNECT_TIMEOUT_MS (opening one, or waiting for a free one in the pool).
 */
function isTimeout(exception: unknown): boolean {
  const msg = (exception as ErrorLike | undefined)?.message;
  return (
    typeof msg === 'string' &&
    /^Query read timeout$|timeout exceeded when trying to connect|Connection terminated due to connection timeout/.test(msg)
  );
}

function isOutage(exception: unknown): boolean {
  const e = (exception ?? {}) as ErrorLike & { severity?: unknown };
  if (typeof e.code === 'string' && (OUTAGE_ERRNOS.has(e.code) || OUTAGE_SQLSTATES.has(e.code))) return true;
  // A FATAL server error while connecting (database not accepting connections, too many clients…).
  if (e.severity === 'FATAL') return true;
  const msg = typeof e.message === 'string' ? e.message : '';
  return (
    /Connection terminated|connection timeout|Client has encountered a connection error|Client was closed and is not queryable|ECONNREFUSED|the database system is (shutting down|starting up)/i.test(
      msg,
    )
  );
}
