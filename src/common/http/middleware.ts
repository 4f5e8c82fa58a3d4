import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { requestContext } from '../persistence/request-context';
import { AppException } from '../errors/app-exception';
import {
  invalidContentEncoding,
  isDecodingError,
  requestContentCoding,
  unsupportedContentEncoding,
} from './content-encoding';
import { createHttpLogger } from './logging';
import { MetricsService } from './metrics.service';
import { allowedMethodsFor, requestPath, routeTemplateFor } from './route-table';

const REQUEST_ID_RE = /^[\x21-\x7e]{1,128}$/;

/**
 * Outermost middleware, one layer for everything every request needs: the request id (reused from
 * `X-Request-Id` when it is 1..128 visible ASCII characters, else generated), echoed on every
 * response; the per-request async context (which gives every line logged while the request is
 * handled its `req_id`); when the response is done, its metrics sample (a single `close`
 * listener; a request the client abandoned is not sampled); and its one completion log line,
 * written by pino-http (`createHttpLogger`).
 */
export function requestMiddleware(logger: Logger, metrics: MetricsService) {
  const httpLogger = createHttpLogger(logger);
  return (req: Request, res: Response, next: NextFunction): void => {
    const start = process.hrtime.bigint();
    const id = requestIdOf(req.headers['x-request-id']);
    req.requestId = id;
    res.setHeader('X-Request-Id', id);
    // 'close' follows 'finish' for every answered request, and comes alone when the client left first.
    res.once('close', () => {
      if (!res.writableFinished) return;
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      metrics.observe(req.method, routeLabel(req), res.statusCode, seconds);
    });
    requestContext.run({ req, validated: new Map() }, httpLogger, req, res, next);
  };
}

/** The client's `X-Request-Id` when it is 1..128 visible ASCII characters, else a new uuid. */
export function requestIdOf(given: unknown): string {
  return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : randomUUID();
}

/**
 * The metrics label of a request: its route template (not the raw path: ids would explode
 * cardinality). Requests answered before or outside routing (405, OPTIONS, 404) are labelled by the
 * template of the known route they address, else `unmatched`.
 */
export function routeLabel(req: Request): string {
  const route = (req.route as { path?: unknown } | undefined)?.path;
  const routed =
    typeof route === 'string' && !route.includes('*') ? `${req.baseUrl ?? ''}${route}` : null;
  // requestPath (the original target): a router mounted at a path (the not-found handler) leaves
  // `req.path` stripped.
  return routed ?? routeTemplateFor(requestPath(req)) ?? 'unmatched';
}

/**
 * One layer for what comes before routing, in this order: OPTIONS on a known path (204 with
 * `Allow`), the media type of a body (415, deferred), its Content-Encoding (415 when not one of
 * CONTENT_CODINGS, deferred), the JSON body of POST, PUT and PATCH (413, a body its coding cannot
 * decode (400) and malformed JSON deferred) and its nesting depth (422, deferred). A body on GET, HEAD, DELETE or
 * OPTIONS is ignored. Deferred problems are raised by the RolesGuard after authentication.
 */
export function requestBodyMiddleware(parseJson: RequestHandler) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.method === 'OPTIONS') return optionsMiddleware(req, res, next);
    if (!takesBody(req)) return next();
    mediaTypeMiddleware(req, res, () => {
      if (req.deferredError === undefined) contentEncodingCheck(req);
      if (req.deferredError !== undefined) return next();
      void parseJson(req, res, (err?: unknown) => {
        if (err !== undefined && err !== null) return deferBodyErrors(err, req, res, next);
        jsonDepthMiddleware(req, res, next);
      });
    });
  };
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** True for methods whose request body the service reads (a body on GET, DELETE… is ignored). */
export function takesBody(req: Request): boolean {
  return BODY_METHODS.has(req.method);
}

/**
 * 415 for request bodies that are neither JSON nor (on upload routes) multipart. A body-less request
 * (no Content-Length, or 0, and no chunked encoding) is accepted whatever its Content-Type. The
 * problem is not answered here but deferred (`req.deferredError`): the RolesGuard raises it after
 * authentication, so the CONTRACT §3 order 401 → 415/422 holds and the request is logged as usual.
 */
export function mediaTypeMiddleware(req: Request, _res: Response, next: NextFunction): void {
  if (!takesBody(req)) return next();
  if (!hasRequestBody(req)) return next();
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  const isJson =
    type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
  const isUpload = /\/imports\/junit\/?$/i.test(req.path); // Express routes paths in any case
  if (isUpload ? type === 'multipart/form-data' : isJson) return next();
  req.deferredError = new AppException(
    'unsupported_media_type',
    isUpload
      ? `Content-Type must be multipart/form-data with a "file" part, got "${type || 'none'}"`
      : `Content-Type must be application/json, got "${type || 'none'}"`,
  );
  next();
}

/**
 * A body whose Content-Encoding is not one of CONTENT_CODINGS is refused (415
 * `unsupported_content_encoding`, deferred like the media type). JSON bodies are decoded by the
 * JSON parser, multipart uploads by their reader (`createBodyDecoder`).
 */
export function contentEncodingCheck(req: Request): void {
  if (!takesBody(req) || !hasRequestBody(req)) return;
  const coding = requestContentCoding(req);
  if ('unsupported' in coding) req.deferredError = unsupportedContentEncoding(coding.unsupported);
}

/** True when the request announces a body (a Content-Length above 0, or a Transfer-Encoding). */
function hasRequestBody(req: Request): boolean {
  const length = Number(req.headers['content-length'] ?? 0);
  return length > 0 || req.headers['transfer-encoding'] !== undefined;
}

/** Deepest nesting of arrays and objects a JSON body may have (deeper bodies are a 422). */
export const MAX_JSON_DEPTH = 64;

/**
 * Most items an array of a JSON body may hold: the largest `maxItems` of any field of the API (rerun
 * rows, plan cases, dataset rows). A longer array is refused before validation copies it.
 */
export const MAX_JSON_ARRAY_ITEMS = 10_000;
/** Most values (objects, arrays, scalars) a JSON body may hold in all (as the results JSON reader). */
export const MAX_JSON_VALUES = 1_000_000;
/**
 * Most keys an object of a JSON body may have: well above every object the API takes (a DTO's
 * fields, free-form objects and dataset `values` at most 200 keys, README "Limits"). A wider object
 * is refused before validation copies it: class-transformer's copy of an object grows with the
 * square of its keys (40,000 unknown keys on the public login held the event loop for 1.7 s,
 * 200,000 for 54 s).
 */
export const MAX_JSON_OBJECT_KEYS = 1_000;

interface ShapeNode {
  value: unknown;
  depth: number;
  parent: ShapeNode | null;
  key: string;
}

/** `rows.3.values` for a node of the walk below; `body` for the root. Built only for an answer. */
function shapePath(node: ShapeNode): string {
  const keys: string[] = [];
  for (let at: ShapeNode | null = node; at !== null && at.parent !== null; at = at.parent) {
    keys.push(at.key);
  }
  return keys.reverse().join('.') || 'body';
}

/** Why a body is refused before validation: the field path it is reported under, and the message. */
export interface ShapeIssue {
  path: string;
  message: string;
}

/**
 * The first reason a parsed body is too large to validate, or null: nested deeper than
 * MAX_JSON_DEPTH (on `body`), an array longer than MAX_JSON_ARRAY_ITEMS or an object with more than
 * MAX_JSON_OBJECT_KEYS keys (on its own field path, like any validation error), or more than
 * MAX_JSON_VALUES values in all (on `body`); or a
 * number that overflowed while parsing (`1e999`, on its path: it cannot be stored as sent). One walk
 * without recursion.
 */
export function jsonShapeIssue(value: unknown): ShapeIssue | null {
  let values = 1;
  const stack: ShapeNode[] = [{ value, depth: 1, parent: null, key: '' }];
  while (stack.length > 0) {
    const node = stack.pop() as ShapeNode;
    const v = node.value;
    if (v === null || typeof v !== 'object') continue;
    if (node.depth > MAX_JSON_DEPTH) {
      return {
        path: 'body',
        message: `JSON nesting must not be deeper than ${MAX_JSON_DEPTH} levels`,
      };
    }
    const keys = Array.isArray(v) ? null : Object.keys(v);
    const size = keys === null ? (v as unknown[]).length : keys.length;
    if (keys === null && size > MAX_JSON_ARRAY_ITEMS) {
      const path = shapePath(node);
      return {
        path,
        message: `${path} must not hold more than ${MAX_JSON_ARRAY_ITEMS} items (it holds ${size})`,
      };
    }
    if (keys !== null && size > MAX_JSON_OBJECT_KEYS) {
      const path = shapePath(node);
      return {
        path,
        message: `${path} must not have more than ${MAX_JSON_OBJECT_KEYS} keys (it has ${size})`,
      };
    }
    values += size;
    if (values > MAX_JSON_VALUES) {
      return {
        path: 'body',
        message: `A JSON body must not hold more than ${MAX_JSON_VALUES} values`,
      };
    }
    for (let i = 0; i < size; i++) {
      const key = keys === null ? String(i) : keys[i];
      const child: unknown = (v as Record<string, unknown>)[key];
      if (child !== null && typeof child === 'object') {
        stack.push({ value: child, depth: node.depth + 1, parent: node, key });
      } else if (typeof child === 'number' && !Number.isFinite(child)) {
        // `1e999` parses as Infinity, which JSON.stringify would store as null.
        const path = shapePath({ value: child, depth: node.depth + 1, parent: node, key });
        return { path, message: `${path} is a number out of range (beyond ±1.8e308)` };
      }
    }
  }
  return null;
}

/**
 * A parsed body nested deeper than MAX_JSON_DEPTH, with an array longer than MAX_JSON_ARRAY_ITEMS,
 * an object wider than MAX_JSON_OBJECT_KEYS or more than MAX_JSON_VALUES values is refused (422 on `body`, deferred like the other body
 * problems): validation copies and walks a body element by element, so a 2 MB array of a million
 * zeros blocked the event loop for seconds, on the public login too, before it was refused.
 */
export function jsonDepthMiddleware(req: Request, _res: Response, next: NextFunction): void {
  if (req.deferredError === undefined && req.body !== undefined) {
    const issue = jsonShapeIssue(req.body);
    if (issue !== null) {
      req.deferredError = AppException.validation({ [issue.path]: [issue.message] });
      req.body = undefined;
    }
  }
  next();
}

/**
 * Body-parser failures (413, malformed JSON, bad charset, a body its Content-Encoding does not
 * decode: 400 `invalid_content_encoding`) are deferred like the 415 above.
 */
export function deferBodyErrors(
  err: unknown,
  req: Request,
  _res: Response,
  next: NextFunction,
): void {
  const coding = requestContentCoding(req);
  req.deferredError =
    'coding' in coding && coding.coding !== null && isDecodingError(err)
      ? invalidContentEncoding(coding.coding, err)
      : err;
  req.body = undefined;
  next();
}

/**
 * OPTIONS on a known path answers 204 with `Allow` (when CORS is enabled, its middleware answers
 * preflight requests before this one); on an unknown path it falls through to 404 route_not_found.
 */
export function optionsMiddleware(req: Request, res: Response, next: NextFunction): void {
  if (req.method !== 'OPTIONS') return next();
  const allowed = allowedMethodsFor(req.path);
  if (allowed.length === 0) return next();
  res.setHeader('Allow', [...allowed, 'OPTIONS'].join(', '));
  res.status(204).end();
}
