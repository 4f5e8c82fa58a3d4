import { Writable } from 'node:stream';
import type { Request, Response } from 'express';
import type { AppConfig } from '../../config/config';
import { requestContext } from '../persistence/request-context';
import { AppLogger, createRootLogger, logCompletion } from './logging';

function capture(level: AppConfig['logLevel']) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  const logger = createRootLogger({ logLevel: level } as AppConfig, sink);
  return { logger, lines, flush: () => new Promise((r) => setImmediate(r)) };
}

const req = (url: string) =>
  ({ requestId: 'rid-1', method: 'GET', originalUrl: url, url }) as unknown as Request;
const res = (statusCode: number) => ({ statusCode }) as Response;

describe('logCompletion', () => {
  it('writes one line in pino-http shape, without the query string', async () => {
    const { logger, lines, flush } = capture('info');
    logCompletion(logger, req('/api/v1/test-runs?project_id=secret-ish'), res(200), 12.4);
    await flush();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { request_id: 'rid-1', method: 'GET', url: '/api/v1/test-runs' },
      res: { statusCode: 200 },
      responseTime: 12,
    });
  });

  it('logs 5xx at error, and nothing below the configured level', async () => {
    const { logger, lines, flush } = capture('warn');
    logCompletion(logger, req('/api/v1/projects'), res(200), 1);
    logCompletion(logger, req('/api/v1/projects'), res(404), 1);
    logCompletion(logger, req('/api/v1/projects'), res(503), 1);
    await flush();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, msg: 'request errored', res: { statusCode: 503 } });
  });

  it('logs a request the client abandoned at warn', async () => {
    const { logger, lines, flush } = capture('warn');
    logCompletion(logger, req('/api/v1/test-runs/1/imports/junit'), res(200), 900, true);
    await flush();
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, msg: 'request aborted', responseTime: 900 }),
    ]);
  });

  it('does not log probes and scrapes', async () => {
    const { logger, lines, flush } = capture('info');
    logCompletion(logger, req('/healthz'), res(200), 1);
    logCompletion(logger, req('/metrics'), res(200), 1);
    await flush();
    expect(lines).toHaveLength(0);
  });
});

describe('AppLogger', () => {
  it('maps Nest calls like nestjs-pino: context last, object merged, message next', async () => {
    const { logger, lines, flush } = capture('debug');
    const app = new AppLogger(logger);
    app.log('Mapped route', 'RouterExplorer');
    app.error({ request_id: 'r2', detail: 'x' }, 'database unavailable', 'ProblemFilter');
    app.warn('plain');
    app.verbose('too fine');
    await flush();
    expect(lines[0]).toMatchObject({ level: 30, msg: 'Mapped route', context: 'RouterExplorer' });
    expect(lines[1]).toMatchObject({
      level: 50,
      msg: 'database unavailable',
      context: 'ProblemFilter',
      request_id: 'r2',
      detail: 'x',
    });
    expect(lines[2]).toMatchObject({ level: 40, msg: 'plain' });
    expect(lines).toHaveLength(3);
  });

  it('turns an Error, or Nest’s (message, stack, context), into `err`', async () => {
    const { logger, lines, flush } = capture('info');
    const app = new AppLogger(logger);
    app.error(new Error('kaput'), 'ExceptionsHandler');
    app.error('failed', 'Error: failed\n    at somewhere', 'ExceptionsHandler');
    await flush();
    expect(lines[0]).toMatchObject({ level: 50, context: 'ExceptionsHandler', err: { message: 'kaput' } });
    expect(lines[1]).toMatchObject({ level: 50, context: 'ExceptionsHandler', err: { message: 'failed' } });
    expect((lines[1].err as { stack: string }).stack).toContain('at somewhere');
  });

  it('adds the request id to lines written while a request is handled', async () => {
    const { logger, lines, flush } = capture('info');
    const app = new AppLogger(logger);
    requestContext.run({ req: { requestId: 'in-flight' } as Request, validated: new Map() }, () =>
      app.log('inside', 'UsersService'),
    );
    await flush();
    expect(lines[0]).toMatchObject({ msg: 'inside', request_id: 'in-flight', context: 'UsersService' });
  });
});
