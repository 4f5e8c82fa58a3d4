import { Writable } from 'node:stream';
import type { Request } from 'express';
import type { AppConfig } from '../../config/config';
import { requestContext } from '../persistence/request-context';
import { AppLogger, createRootLogger } from './logging';

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

describe('createRootLogger', () => {
  it('adds req_id to every line written while a request is handled, and only then', async () => {
    const { logger, lines, flush } = capture('info');
    logger.info('outside');
    requestContext.run({ req: { requestId: 'rid-ctx' } as Request, validated: new Map() }, () => {
      logger.info('inside');
      logger.child({ context: 'child' }).warn({ detail: 'x' }, 'in a child');
      // A line that names its request keeps that id (and the key appears once).
      logger.info({ req_id: 'named' }, 'named');
    });
    await flush();
    expect(lines[0]).not.toHaveProperty('req_id');
    expect(lines[1]).toMatchObject({ msg: 'inside', req_id: 'rid-ctx' });
    expect(lines[2]).toMatchObject({
      msg: 'in a child',
      req_id: 'rid-ctx',
      context: 'child',
      detail: 'x',
    });
    expect(lines[3]).toMatchObject({ msg: 'named', req_id: 'named' });
    expect(raw(lines[3]).match(/"req_id"/g)).toHaveLength(1);
  });

  it('writes level as pino’s number, time and msg on every line', async () => {
    const { logger, lines, flush } = capture('trace');
    logger.trace('t');
    logger.fatal('f');
    await flush();
    expect(lines.map((l) => [l.level, typeof l.time, l.msg])).toEqual([
      [10, 'number', 't'],
      [60, 'number', 'f'],
    ]);
  });

  it.each([
    [{ password: 'p4ssw0rd-secret' }],
    [{ body: { password: 'p4ssw0rd-secret', new_password: 'p4ssw0rd-secret' } }],
    [{ headers: { authorization: 'Bearer p4ssw0rd-secret' } }],
    [
      {
        req: {
          headers: {
            authorization: 'p4ssw0rd-secret',
            cookie: 'p4ssw0rd-secret',
            'x-api-key': 'p4ssw0rd-secret',
          },
        },
      },
    ],
    [{ access_token: 'p4ssw0rd-secret' }],
  ])('censors credentials in logged objects: %j', async (obj) => {
    const { logger, lines, flush } = capture('info');
    logger.info(obj, 'with a credential');
    await flush();
    expect(raw(lines[0])).not.toContain('p4ssw0rd-secret');
    expect(raw(lines[0])).toContain('[redacted]');
  });
});

describe('logged errors', () => {
  it('carry no value of a failed statement (parameters, pg detail), nested ones included', async () => {
    const { logger, lines, flush } = capture('info');
    // As TypeORM's QueryFailedError carries them (found by an audit: a statement timeout while
    // inserting a user logged its scrypt hash; while creating an API key, the key's hash).
    const pg = Object.assign(new Error('canceling statement due to statement timeout'), {
      code: '57014',
      detail: 'Key (key_hash)=(3155468f-secret) already exists.',
      parameters: ['scrypt$32768$8$1$secret'],
    });
    const failed = Object.assign(new Error(pg.message), {
      query: 'INSERT INTO users (username, password_hash) VALUES ($1, $2)',
      parameters: ['victim', 'scrypt$32768$8$1$secret'],
      driverError: pg,
      code: '57014',
      detail: 'Key (key_hash)=(3155468f-secret) already exists.',
    });
    logger.error({ err: failed, req_id: 'r' }, 'database unavailable');
    logger.error({ err: new Error('wrapped', { cause: failed }) }, 'nested');
    await flush();
    for (const line of lines) expect(raw(line)).not.toContain('secret');
    expect(lines[0].err).toMatchObject({
      message: 'canceling statement due to statement timeout',
      code: '57014',
      query: 'INSERT INTO users (username, password_hash) VALUES ($1, $2)',
      parameters: '[redacted]',
    });
  });
});

const raw = (line: Record<string, unknown>) => JSON.stringify(line);

describe('AppLogger', () => {
  it('maps Nest calls like nestjs-pino: context last, object merged, message next', async () => {
    const { logger, lines, flush } = capture('debug');
    const app = new AppLogger(logger);
    app.log('Nest application successfully started', 'NestApplication');
    app.error({ req_id: 'r2', detail: 'x' }, 'database unavailable', 'ProblemFilter');
    app.warn('plain');
    app.verbose('too fine');
    await flush();
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'Nest application successfully started',
      context: 'NestApplication',
    });
    expect(lines[1]).toMatchObject({
      level: 50,
      msg: 'database unavailable',
      context: 'ProblemFilter',
      req_id: 'r2',
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
    expect(lines[0]).toMatchObject({ msg: 'inside', req_id: 'in-flight', context: 'UsersService' });
  });

  it.each([
    ['RouterExplorer', 'Mapped {/api/v1/projects, GET} route'],
    ['RoutesResolver', 'ProjectsController {/api/v1/projects}:'],
    ['InstanceLoader', 'AppModule dependencies initialized'],
  ])('writes Nest’s %s lines at debug, not info', async (context, message) => {
    const atInfo = capture('info');
    new AppLogger(atInfo.logger).log(message, context);
    await atInfo.flush();
    expect(atInfo.lines).toHaveLength(0);
    const atDebug = capture('debug');
    new AppLogger(atDebug.logger).log(message, context);
    await atDebug.flush();
    expect(atDebug.lines).toEqual([expect.objectContaining({ level: 20, msg: message, context })]);
  });
});
