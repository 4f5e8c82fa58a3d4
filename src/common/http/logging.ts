import type { Writable } from 'node:stream';
import { Inject, Injectable, LoggerService } from '@nestjs/common';
import type { Request, Response } from 'express';
import pino, { Level, Logger } from 'pino';
import type { AppConfig } from '../../config/config';
import { currentStore } from '../persistence/request-context';

/** Injection token of the process's one pino logger. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/** Paths whose completed requests are not logged (probes and scrapes). */
const IGNORED = new Set(['/healthz', '/metrics']);

/**
 * Structured JSON logs (pino), one logger for the whole process. Credentials are redacted wherever
 * a log object carries headers; the request logs below never include headers at all.
 */
export function createRootLogger(config: AppConfig, stream?: Writable): Logger {
  return pino(
    {
      level: config.logLevel,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'req.headers["x-api-key"]',
          'res.headers["set-cookie"]',
        ],
        censor: '[redacted]',
      },
    },
    ...(stream ? [stream] : []),
  );
}

/**
 * The one completion line of a request (written by the request middleware when the response is
 * done; every request gets one, including those answered before Nest routing), in pino-http's
 * shape: `req` {request_id, method, url without its query}, `res` {statusCode}, `responseTime` in
 * ms. 5xx answers are logged at `error`, requests the client abandoned before the answer was sent
 * at `warn` ("request aborted"), the others at `info`; nothing is built when the level is off (no
 * per-request child logger).
 */
export function logCompletion(
  logger: Logger,
  req: Request,
  res: Response,
  ms: number,
  aborted = false,
): void {
  const level: Level = aborted ? 'warn' : res.statusCode >= 500 ? 'error' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  const url = (req.originalUrl ?? req.url ?? '').split('?')[0];
  if (IGNORED.has(url)) return;
  logger[level](
    {
      req: { request_id: req.requestId, method: req.method, url },
      res: { statusCode: res.statusCode },
      responseTime: Math.round(ms),
    },
    aborted ? 'request aborted' : res.statusCode >= 500 ? 'request errored' : 'request completed',
  );
}

/**
 * Nest's logger (`app.useLogger`), writing through the root pino logger. Calls map as in
 * nestjs-pino: the last optional parameter is the context; an object first argument is merged into
 * the line (an Error becomes `err`), the next one is the message. Lines written while a request is
 * handled carry its `request_id`.
 */
@Injectable()
export class AppLogger implements LoggerService {
  constructor(@Inject(ROOT_LOGGER) private readonly logger: Logger) {}

  log(message: unknown, ...optional: unknown[]): void {
    this.write('info', message, optional);
  }
  error(message: unknown, ...optional: unknown[]): void {
    this.write('error', message, optional);
  }
  warn(message: unknown, ...optional: unknown[]): void {
    this.write('warn', message, optional);
  }
  debug(message: unknown, ...optional: unknown[]): void {
    this.write('debug', message, optional);
  }
  verbose(message: unknown, ...optional: unknown[]): void {
    this.write('trace', message, optional);
  }
  fatal(message: unknown, ...optional: unknown[]): void {
    this.write('fatal', message, optional);
  }

  private write(level: Level, message: unknown, optional: unknown[]): void {
    if (!this.logger.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    let rest = optional;
    if (optional.length > 0) {
      fields.context = optional[optional.length - 1];
      rest = optional.slice(0, -1);
    }
    const requestId = currentStore()?.req.requestId;
    if (requestId !== undefined) fields.request_id = requestId;
    if (message instanceof Error) {
      fields.err = message;
      this.logger[level](fields, ...(rest as [string]));
    } else if (typeof message === 'object' && message !== null) {
      Object.assign(fields, message);
      this.logger[level](fields, ...(rest as [string]));
    } else if (level === 'error' && rest.length === 1 && typeof rest[0] === 'string' && rest[0].includes('\n')) {
      // Nest's own exception handler calls error(message, stack, context).
      const err = new Error(String(message));
      err.stack = rest[0];
      fields.err = err;
      this.logger.error(fields);
    } else {
      this.logger[level](fields, String(message), ...(rest as []));
    }
  }
}
