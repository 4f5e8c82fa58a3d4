import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { requestContext } from '../persistence/request-context';
import { MetricsService } from './metrics.service';

const REQUEST_ID_RE = /^[\x21-\x7e]{1,128}$/;

/**
 * Outermost middleware: request id (reused from `X-Request-Id` when it is 1..128 visible ASCII
 * characters, else generated), echoed on every response; opens the per-request async context.
 */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : randomUUID();
  req.requestId = id;
  res.setHeader('X-Request-Id', id);
  requestContext.run({ req, validated: new Map() }, () => next());
}

/** Records request count and latency by route template (not raw path: ids would explode cardinality). */
export function metricsMiddleware(metrics: MetricsService) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      const route = (req.route as { path?: string } | undefined)?.path;
      const base = req.baseUrl ?? '';
      const label = route ? `${base}${route}` : res.statusCode === 404 ? 'unmatched' : req.path;
      metrics.observe(req.method, label, res.statusCode, Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * 415 for request bodies that are neither JSON nor (on upload routes) multipart. A body-less request
 * (no Content-Length, or 0, and no chunked encoding) is accepted whatever its Content-Type.
 */
export function mediaTypeMiddleware(onReject: (req: Request, res: Response, detail: string) => void) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!BODY_METHODS.has(req.method)) return next();
    const length = Number(req.headers['content-length'] ?? 0);
    const hasBody = length > 0 || req.headers['transfer-encoding'] !== undefined;
    if (!hasBody) return next();
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    const isJson = type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
    const isUpload = /\/imports\/junit\/?$/.test(req.path);
    if (isUpload ? type === 'multipart/form-data' : isJson) return next();
    onReject(
      req,
      res,
      isUpload
        ? `Content-Type must be multipart/form-data with a "file" part, got "${type || 'none'}"`
        : `Content-Type must be application/json, got "${type || 'none'}"`,
    );
  };
}
