import { HttpException, Logger, NotFoundException } from '@nestjs/common';
import type { Request } from 'express';
import { QueryFailedError } from 'typeorm';
import { loadConfig } from '../../config/config';
import { registerRoutes } from '../http/route-table';
import { AppException } from './app-exception';
import { ProblemFilter } from './problem.filter';

const config = loadConfig({ AUTH_SECRET: 'k'.repeat(40), ERROR_BASE_URL: 'https://errors.example.com' }, { persistSecret: false });
const filter = new ProblemFilter(config);
// The filter logs unexpected failures; keep the test output quiet.
Logger.overrideLogger(false);
const req = { originalUrl: '/api/v1/things/1?x=2', method: 'GET', requestId: 'rid-1' } as unknown as Request;

function pgError(code: string, constraint?: string): QueryFailedError {
  const driver = Object.assign(new Error('db'), { code, constraint });
  return new QueryFailedError('SELECT 1', [], driver);
}

/** What pg and pg-pool throw, and TypeORM's wrapping of it, when the database stalls or goes away. */
const driverFailure = (message: string, props: object = {}) => Object.assign(new Error(message), props);
const viaTypeorm = (driver: Error) => new QueryFailedError('SELECT 1', [], driver);

describe('ProblemFilter.toProblem: the database unavailable (issue #22)', () => {
  it.each([
    // Deadlines: pg's query_timeout, pg-pool's connectionTimeoutMillis (new connection or a full pool),
    // PostgreSQL's statement_timeout.
    ['query deadline (pool)', driverFailure('Query read timeout'), 'did not answer in time'],
    ['query deadline (TypeORM)', viaTypeorm(driverFailure('Query read timeout')), 'did not answer in time'],
    ['no pooled connection in time', driverFailure('timeout exceeded when trying to connect'), 'did not answer in time'],
    [
      'connecting timed out',
      driverFailure('Connection terminated due to connection timeout', { cause: new Error('Connection terminated unexpectedly') }),
      'did not answer in time',
    ],
    ['statement deadline', pgError('57014'), 'did not complete the statement in time'],
    // The connection broke or was ended.
    ['connection reset', driverFailure('read ECONNRESET', { code: 'ECONNRESET', errno: -104 }), 'is unavailable'],
    ['reset under TypeORM', viaTypeorm(driverFailure('read ECONNRESET', { code: 'ECONNRESET' })), 'is unavailable'],
    ['terminated', viaTypeorm(driverFailure('Connection terminated')), 'is unavailable'],
    ['ended client', viaTypeorm(driverFailure('Client was closed and is not queryable')), 'is unavailable'],
    ['idle in transaction too long', pgError('25P03'), 'is unavailable'],
    ['administrator shutdown', pgError('57P01'), 'is unavailable'],
    ['host unreachable', driverFailure('connect EHOSTUNREACH', { code: 'EHOSTUNREACH' }), 'is unavailable'],
  ])('%s: 503 database_unavailable with Retry-After', (_what, err, detail) => {
    const p = filter.toProblem(err, req);
    expect(p.status).toBe(503);
    expect(p.body.code).toBe('database_unavailable');
    expect(p.body.detail).toContain(detail);
    expect(p.headers['Retry-After']).toBe('5');
  });

  it.each([
    ['another timeout', new Error('Query read timeout while parsing')],
    ['a query error', pgError('42601')],
  ])('%s stays a 500', (_what, err) => {
    expect(filter.toProblem(err, req).body.code).toBe('internal_error');
  });
});

describe('ProblemFilter.toProblem', () => {
  it('renders an AppException from the catalogue', () => {
    const p = filter.toProblem(AppException.validation({ 'a.b': ['bad'] }), req);
    expect(p.status).toBe(422);
    expect(p.body).toEqual({
      type: 'https://errors.example.com/validation_error',
      title: 'Validation failed',
      status: 422,
      detail: 'Request contains invalid fields',
      instance: '/api/v1/things/1',
      code: 'validation_error',
      request_id: 'rid-1',
      errors: { 'a.b': ['bad'] },
    });
  });

  it('adds WWW-Authenticate to 401s', () => {
    expect(filter.toProblem(new AppException('unauthorized', 'x'), req).headers['WWW-Authenticate']).toBe('Bearer');
  });

  it('hides unexpected failures behind internal_error without a stack', () => {
    const err = new Error('secret internals at /src/x.ts:1');
    const p = filter.toProblem(err, req);
    expect(p.status).toBe(500);
    expect(p.body.code).toBe('internal_error');
    expect(JSON.stringify(p.body)).not.toContain('secret internals');
    expect(p.body).not.toHaveProperty('errors');
  });

  it.each([
    [pgError('23505', 'uq_users_username'), 409, 'user_already_exists'],
    [pgError('23505', 'uq_unknown'), 409, 'conflict'],
    [pgError('40P01'), 409, 'conflict'],
    [pgError('22021'), 422, 'validation_error'],
    [pgError('22P05'), 422, 'validation_error'],
    [pgError('22001'), 422, 'validation_error'],
    [pgError('22003'), 422, 'validation_error'],
    [pgError('22008'), 422, 'validation_error'],
    [pgError('23503'), 409, 'conflict'],
    [pgError('23514'), 422, 'validation_error'],
    [pgError('23502'), 422, 'validation_error'],
    [AppException.notFoundAs('dataset_revision_not_found', 'x'), 404, 'dataset_revision_not_found'],
    [pgError('57P01'), 503, 'database_unavailable'],
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), 503, 'database_unavailable'],
    [new Error('Connection terminated unexpectedly'), 503, 'database_unavailable'],
    [new NotFoundException(), 404, 'route_not_found'],
    [new HttpException('too big', 413), 413, 'payload_too_large'],
    [Object.assign(new Error('too large'), { type: 'entity.too.large', status: 413 }), 413, 'payload_too_large'],
    [Object.assign(new Error('bad json'), { type: 'entity.parse.failed', status: 400 }), 422, 'validation_error'],
    [Object.assign(new Error('request aborted'), { type: 'request.aborted', status: 400 }), 422, 'validation_error'],
    [Object.assign(new Error('File too large'), { code: 'LIMIT_FILE_SIZE' }), 413, 'payload_too_large'],
  ])('maps %p to %i %s', (err, status, code) => {
    const p = filter.toProblem(err, req);
    expect(p.status).toBe(status);
    expect(p.body.code).toBe(code);
  });
});

describe('ProblemFilter.toProblem: request bodies that do not decode (issue #22)', () => {
  // What body-parser hands on: its decompression stream's error with a 400, or its own 415.
  const zlibFailure = (code: string, errno: number) =>
    Object.assign(new Error('incorrect header check'), { code, errno, status: 400, statusCode: 400, expose: true });
  it.each([
    ['gzip over plain bytes', zlibFailure('Z_DATA_ERROR', -3), 400, 'invalid_content_encoding'],
    ['a truncated body', zlibFailure('Z_BUF_ERROR', -5), 400, 'invalid_content_encoding'],
    ['a corrupt brotli body', zlibFailure('ERR__ERROR_FORMAT_PADDING_2', -15), 400, 'invalid_content_encoding'],
    [
      "body-parser's unsupported coding",
      Object.assign(new Error('unsupported content encoding "zstd"'), { status: 415, type: 'encoding.unsupported' }),
      415,
      'unsupported_content_encoding',
    ],
    [
      'an unsupported charset stays a media type problem',
      Object.assign(new Error('unsupported charset'), { status: 415, type: 'charset.unsupported' }),
      415,
      'unsupported_media_type',
    ],
  ])('%s → %i %s', (_what, err, status, code) => {
    const p = filter.toProblem(err, req);
    expect(p.status).toBe(status);
    expect(p.body.code).toBe(code);
  });
});

describe('ProblemFilter.toProblem: the request path (CONTRACT §3 `instance`, 405)', () => {
  beforeAll(() => registerRoutes({ '/api/v1/projects': { get: {}, post: {} } }));
  const at = (method: string, originalUrl: string) =>
    ({ originalUrl, url: originalUrl, method, requestId: 'rid-2' }) as unknown as Request;

  it('takes the path of a target in absolute form, without scheme, host or query', () => {
    const p = filter.toProblem(AppException.notFoundAs('project_not_found', 'x'), at('GET', 'http://127.0.0.1:1/api/v1/projects/abc?x=1'));
    expect(p.body.instance).toBe('/api/v1/projects/abc');
  });

  it.each([
    ['absolute form', 'http://127.0.0.1:1/api/v1/projects?x=1', '/api/v1/projects'],
    ['another letter case', '/api/v1/Projects', '/api/v1/Projects'],
  ])('a wrong method on a known path in %s is a 405 with Allow', (_what, target, instance) => {
    const p = filter.toProblem(new NotFoundException(), at('PUT', target));
    expect(p.status).toBe(405);
    expect(p.body).toMatchObject({ code: 'method_not_allowed', instance });
    expect(p.headers.Allow).toBe('GET, POST, HEAD');
  });
});
