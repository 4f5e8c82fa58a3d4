import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import pino, { Logger } from 'pino';
import { HttpLogger, pinoHttp } from 'pino-http';
import type { AppConfig } from '../../config/config';

/** Injection token of the request logger middleware (mounted first by setupApp). */
export const HTTP_LOGGER = Symbol('HTTP_LOGGER');

const IGNORED = new Set(['/healthz', '/metrics']);

/**
 * Structured JSON logs (pino). One logger for the whole process, and one pino-http middleware that
 * setupApp mounts right after the request-id middleware, so every request — including the ones
 * answered before Nest routing (OPTIONS, documentation pages, unknown paths outside /api/v1) — logs
 * exactly one completion line carrying its request id. Nest's LoggerModule reuses `req.log`
 * (`useExisting`), so log lines written while handling a request carry the request id too.
 * Credentials are redacted; URLs are logged without their query string.
 */
export function createHttpLogger(
  config: AppConfig,
  stream?: Writable,
): { logger: Logger; middleware: HttpLogger<IncomingMessage, ServerResponse> } {
  const logger = pino(
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
  const middleware = pinoHttp({
    logger,
    genReqId: (req: IncomingMessage) =>
      (req as IncomingMessage & { requestId?: string }).requestId ?? '',
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({
        request_id: req.id,
        method: req.method,
        url: req.url.split('?')[0],
      }),
    },
    autoLogging: { ignore: (req: IncomingMessage) => IGNORED.has((req.url ?? '').split('?')[0]) },
  });
  return { logger, middleware };
}
