import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { ERROR_CATALOGUE, ErrorCode } from '../errors/error-codes';
import type { ProblemBody } from '../errors/problem.filter';
import { requestIdOf } from './middleware';

/**
 * The problem Node's HTTP server answers itself, before any request object exists (its
 * `clientError` event): a header block over the server's limit (16 KB by default,
 * `--max-http-header-size`) is 431, chunk extensions over Node's limit 413, a request not received
 * within the server's `headersTimeout` / `requestTimeout` 408, and any other request the HTTP parser
 * refuses (`HPE_*`: a malformed request line, method, header or chunked body) 400 `bad_request`.
 */
export function clientErrorCode(err: { code?: unknown }): ErrorCode {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'request_header_fields_too_large';
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 'payload_too_large';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'request_timeout';
    default:
      return 'bad_request';
  }
}

const DETAILS: Partial<Record<ErrorCode, string>> = {
  request_header_fields_too_large: 'The request line and headers are larger than the server accepts',
  payload_too_large: 'The chunk extensions of the request body are larger than the server accepts',
  request_timeout: 'The request was not received completely in time',
  bad_request: 'The request is not a valid HTTP/1.1 request',
  expectation_failed: 'Only the expectation 100-continue is supported',
  method_not_allowed: 'The CONNECT method is not supported: this server is no proxy',
};

/** The problem body (JSON bytes) of a refusal by the HTTP server. */
export function transportProblem(
  code: ErrorCode,
  errorBaseUrl: string,
  requestId: string,
  instance: string,
): Buffer {
  const { status, title } = ERROR_CATALOGUE[code];
  const body: ProblemBody = {
    type: `${errorBaseUrl}/${code}`,
    title,
    status,
    detail: DETAILS[code] ?? title,
    instance,
    code,
    request_id: requestId,
  };
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/**
 * A whole raw HTTP/1.1 response carrying a problem body, for a request the parser refused (its
 * path is not known: `instance` is empty); the connection is closed after it.
 */
export function rawProblemResponse(
  code: ErrorCode,
  errorBaseUrl: string,
  requestId: string = randomUUID(),
): Buffer {
  const { status, title } = ERROR_CATALOGUE[code];
  const json = transportProblem(code, errorBaseUrl, requestId, '');
  const head =
    `HTTP/1.1 ${status} ${title}\r\n` +
    'Content-Type: application/problem+json; charset=utf-8\r\n' +
    `Content-Length: ${json.length}\r\n` +
    `X-Request-Id: ${requestId}\r\n` +
    'Cache-Control: no-store\r\n' +
    'Connection: close\r\n\r\n';
  return Buffer.concat([Buffer.from(head, 'latin1'), json]);
}

/**
 * Answers Node's transport-level refusals with problem bodies instead of its empty ones:
 *
 * - `clientError` (see {@link clientErrorCode}): a complete HTTP/1.1 response is written to the
 *   socket, which is then closed. Nothing is written when the socket is no longer writable (the
 *   client left: ECONNRESET, EPIPE) or when a response on that connection has already started (a
 *   pipelined request after it was malformed, or a timeout while an early answer is still being
 *   sent): bytes in the middle of it would corrupt it. Such sockets are only destroyed, as Node does.
 * - `checkExpectation`: an `Expect` other than `100-continue` is 417 `expectation_failed`.
 * - `connect`: a CONNECT request (which Node would answer by closing the connection without a word)
 *   is 405 `method_not_allowed`, and the connection is closed.
 *
 * Each refusal is logged at `info` with its request id and Node's error code (never the raw bytes,
 * which may hold credentials).
 */
export function installClientErrorHandler(
  server: Server,
  opts: { errorBaseUrl: string; logger: Logger },
): void {
  // The response in progress on each connection (public fields only: `headersSent`,
  // `writableFinished`), to know whether raw bytes may still be written to the socket.
  const current = new WeakMap<object, ServerResponse>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    current.set(req.socket, res);
  });

  // Node emits clientError again for bytes that arrive after the first failure: answer once.
  const answered = new WeakSet<object>();
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    if (answered.has(socket)) return;
    answered.add(socket);
    const res = current.get(socket);
    const midResponse = res !== undefined && res.headersSent && !res.writableFinished;
    if (!socket.writable || midResponse || err.code === 'ECONNRESET' || err.code === 'EPIPE') {
      socket.destroy();
      return;
    }
    const code = clientErrorCode(err);
    const requestId = randomUUID();
    opts.logger.info(
      { req_id: requestId, err_code: err.code, status: ERROR_CATALOGUE[code].status },
      'request refused by the HTTP parser',
    );
    socket.end(rawProblemResponse(code, opts.errorBaseUrl, requestId), () => socket.destroy());
  });

  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    const requestId = requestIdOf(req.headers['x-request-id']);
    opts.logger.info({ req_id: requestId, method: req.method, status: 405 }, 'request refused: CONNECT');
    socket.on('error', () => undefined);
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(rawProblemResponse('method_not_allowed', opts.errorBaseUrl, requestId), () =>
      socket.destroy(),
    );
  });

  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const requestId = requestIdOf(req.headers['x-request-id']);
    const path = (req.url ?? '').split('?')[0];
    const body = transportProblem('expectation_failed', opts.errorBaseUrl, requestId, path);
    opts.logger.info(
      { req_id: requestId, method: req.method, status: 417 },
      'request refused: unsupported Expect',
    );
    res.writeHead(417, {
      'Content-Type': 'application/problem+json; charset=utf-8',
      'Content-Length': body.length,
      'X-Request-Id': requestId,
      Connection: 'close',
    });
    res.end(body);
  });
}
