import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { Inject, Injectable, LoggerService } from '@nestjs/common';
import type { Request } from 'express';
import pino, { Level, Logger, LoggerOptions } from 'pino';
import { pinoHttp, type HttpLogger } from 'pino-http';
import PinoPretty from 'pino-pretty';
import type { AppConfig } from '../../config/config';
import { currentStore } from '../persistence/request-context';
import { requestPath } from './route-table';

/** Injection token of the process's one pino logger. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/** Paths whose completed requests are not logged (probes and scrapes). */
const IGNORED = new Set(['/healthz', '/metrics']);

/**
 * Fields censored wherever a log object carries them (CONTRACT §2/§4: no password, token or API key
 * in the logs). The request lines never carry headers or bodies at all; this is the second line of
 * defence for objects logged by hand.
 */
export const REDACTED_PATHS = [
  'password',
  '*.password',
  'new_password',
  '*.new_password',
  'access_token',
  '*.access_token',
  'api_key',
  '*.api_key',
  'authorization',
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
];

/**
 * Fields of a database error that hold the values of its statement: TypeORM's `QueryFailedError`
 * carries the statement's `parameters` (a password hash, an API key's hash…) and pg's `detail`
 * quotes row values (`Key (x)=(…) already exists`). They are censored wherever they appear in a
 * logged error (its `driverError`, its `cause`); the SQL text, the SQLSTATE `code`, the constraint,
 * the table and the message stay.
 */
const STATEMENT_VALUE_FIELDS: ReadonlySet<string> = new Set(['parameters', 'detail']);

function censorStatementValues(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object' || depth > 4) return value;
  if (Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    out[key] = STATEMENT_VALUE_FIELDS.has(key)
      ? '[redacted]'
      : censorStatementValues(field, depth + 1);
  }
  return out;
}

/** pino's error serializer, without the values of a failed statement (see above). */
export function serializeError(err: unknown): unknown {
  if (!(err instanceof Error)) return censorStatementValues(err, 0);
  return censorStatementValues(pino.stdSerializers.err(err), 0);
}

/** Nest's contexts whose `log()` lines are boot detail (route mapping, module wiring): `debug`. */
export const NEST_DEBUG_CONTEXTS: ReadonlySet<string> = new Set([
  'RoutesResolver',
  'RouterExplorer',
  'InstanceLoader',
]);

/** What the logger needs of the configuration (LOG_LEVEL, LOG_FORMAT). */
export type LogSettings = Pick<AppConfig, 'logLevel'> & Partial<Pick<AppConfig, 'logFormat'>>;

/** The mixin's answer outside a request (shared: the merge strategy below never writes it). */
const NO_FIELDS: Record<string, never> = Object.freeze({}) as Record<string, never>;

/**
 * Structured logs (pino), one logger for the whole process. Every line has `level` (pino's number:
 * 10 trace … 60 fatal), `time` (epoch ms), `msg`, and `req_id` when it is written while a request
 * is handled (from the per-request async context; a line that names its request itself keeps
 * that). LOG_FORMAT=pretty prints the same lines for a human (pino-pretty); `stream` (tests)
 * always receives JSON.
 */
export function createRootLogger(config: LogSettings, stream?: Writable): Logger {
  const options: LoggerOptions = {
    level: config.logLevel,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: { err: serializeError },
    mixin(merge: object) {
      if ('req_id' in merge) return NO_FIELDS;
      const id = currentStore()?.req.requestId;
      return id === undefined ? NO_FIELDS : { req_id: id };
    },
    mixinMergeStrategy: (merge: object, mixin: object) =>
      mixin === NO_FIELDS ? merge : Object.assign(mixin, merge),
  };
  if (stream !== undefined) return pino(options, stream);
  if (config.logFormat === 'pretty') {
    // Synchronous, so the last lines before process.exit are not lost.
    return pino(
      options,
      PinoPretty({ sync: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }),
    );
  }
  return pino(options);
}

/** The root logger given, or a new one writing to `log` (a stream) or stdout. */
export function rootLoggerOf(config: LogSettings, log?: Writable | Logger): Logger {
  return isLogger(log) ? log : createRootLogger(config, log);
}

function isLogger(log: Writable | Logger | undefined): log is Logger {
  return log !== undefined && typeof (log as Logger).child === 'function' && 'levels' in log;
}

/**
 * The request logger (pino-http): one completion line per request when its response is done
 * (every request gets one, including those answered before Nest routing), with `req_id`, `req`
 * {method, url without its query}, `res` {statusCode} and `responseTime` in ms; no headers, no
 * bodies. 5xx answers are logged at `error` ("request errored"), requests the client abandoned
 * before the answer was sent at `warn` ("request aborted"), the others at `info` ("request
 * completed"). The request id is the one the request middleware chose (`req.requestId`).
 */
export function createHttpLogger(logger: Logger): HttpLogger {
  return pinoHttp({
    logger,
    genReqId: (req) => (req as Request).requestId ?? '',
    wrapSerializers: false,
    serializers: {
      req: (req: IncomingMessage) => ({ method: req.method, url: pathOf(req) }),
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
      err: serializeError,
    },
    autoLogging: { ignore: (req) => IGNORED.has(pathOf(req)) },
    customLogLevel: (_req, res, err) =>
      err !== undefined || res.statusCode >= 500 ? 'error' : res.writableFinished ? 'info' : 'warn',
    customSuccessMessage: (_req, res) =>
      res.writableFinished ? 'request completed' : 'request aborted',
    customErrorMessage: () => 'request errored',
    customSuccessObject: (req, _res, val: Record<string, unknown>) => ({ req_id: req.id, ...val }),
    customErrorObject: (req, res, error, val: Record<string, unknown>) => {
      const { err: _synthetic, ...rest } = val;
      // pino-http makes an Error for a plain 5xx answer; the real one is logged by the problem filter.
      const real = error.message !== `failed with status code ${res.statusCode}`;
      return real ? { req_id: req.id, ...val } : { req_id: req.id, ...rest };
    },
  });
}

/** The logged path: without the query, and without scheme and authority (userinfo included). */
function pathOf(req: IncomingMessage): string {
  return requestPath(req as Request);
}

/**
 * Nest's logger (`app.useLogger`), writing through the root pino logger. Calls map as in
 * nestjs-pino: the last optional parameter is the context; an object first argument is merged into
 * the line (an Error becomes `err`), the next one is the message. Nest's route mapping and module
 * wiring lines (NEST_DEBUG_CONTEXTS) are `debug`. Lines written while a request is handled carry its
 * `req_id` (the root logger's mixin).
 */
@Injectable()
export class AppLogger implements LoggerService {
  constructor(@Inject(ROOT_LOGGER) private readonly logger: Logger) {}

  log(message: unknown, ...optional: unknown[]): void {
    const context = optional[optional.length - 1];
    const level =
      typeof context === 'string' && NEST_DEBUG_CONTEXTS.has(context) ? 'debug' : 'info';
    this.write(level, message, optional);
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
