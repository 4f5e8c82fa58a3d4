import 'reflect-metadata';
import { Controller, Delete, Get, INestApplication, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import request from 'supertest';
import { DataSource, EntityManager } from 'typeorm';
import { JsonBody } from '../http/json-body';
import { currentStore, requestContext } from './request-context';
import { isTransactional, Transactional } from './transaction.interceptor';

/** What the handler saw: the transaction's manager, or none. */
const seen: Array<EntityManager | undefined> = [];
const managerOfHandler = () => seen.push(currentStore()?.manager);

@Controller('things')
class ThingsController {
  @Get()
  list() {
    managerOfHandler();
    return [];
  }

  @Post()
  @Transactional()
  create() {
    managerOfHandler();
    return {};
  }

  @Post('parts')
  @Transactional()
  parts() {
    return new JsonBody(['{"name":"Grüße","snapshot":', Buffer.from('{"a":[1,2]}'), '}']);
  }

  @Post('fail')
  @Transactional()
  fail() {
    managerOfHandler();
    throw new Error('boom');
  }

  @Delete(':id')
  remove() {
    managerOfHandler();
  }

  helper() {}
}

describe('Transactional', () => {
  let app: INestApplication;
  const manager = { marker: 'the transaction' } as unknown as EntityManager;
  const outcomes: string[] = [];
  const dataSource = {
    async transaction(work: (m: EntityManager) => Promise<unknown>) {
      try {
        const result = await work(manager);
        outcomes.push('commit');
        return result;
      } catch (err) {
        outcomes.push('rollback');
        throw err;
      }
    },
  };

  beforeAll(async () => {
    @Module({
      controllers: [ThingsController],
      providers: [{ provide: DataSource, useValue: dataSource }],
    })
    class ThingsModule {}
    app = await NestFactory.create(ThingsModule, { logger: false });
    app.use((req: Request, _res: Response, next: NextFunction) =>
      requestContext.run({ req, validated: new Map() }, next),
    );
    await app.init();
  });
  afterAll(() => app.close());
  beforeEach(() => {
    seen.length = 0;
    outcomes.length = 0;
  });

  it('runs a marked handler in one transaction and commits it', async () => {
    const res = await request(app.getHttpServer()).post('/things');
    expect(res.status).toBe(201);
    expect(seen).toEqual([manager]);
    expect(outcomes).toEqual(['commit']);
  });

  it("answers a JsonBody as its bytes: JSON type, exact length, the route's status", async () => {
    const res = await request(app.getHttpServer())
      .post('/things/parts')
      .buffer(true)
      .parse((r, done) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const bytes = res.body as Buffer;
    expect(bytes.toString('utf8')).toBe('{"name":"Grüße","snapshot":{"a":[1,2]}}');
    expect(res.headers['content-length']).toBe(String(bytes.length));
    expect(outcomes).toEqual(['commit']);
  });

  it('rolls the transaction back when the handler fails', async () => {
    const res = await request(app.getHttpServer()).post('/things/fail');
    expect(res.status).toBe(500);
    expect(seen).toEqual([manager]);
    expect(outcomes).toEqual(['rollback']);
  });

  it.each([
    ['get', '/things', 200],
    ['delete', '/things/1', 200],
  ] as const)(
    'leaves an unmarked handler (%s) without a transaction',
    async (method, url, status) => {
      const res = await request(app.getHttpServer())[method](url);
      expect(res.status).toBe(status);
      expect(seen).toEqual([undefined]);
      expect(outcomes).toEqual([]);
    },
  );

  it('marks the handlers it binds, and only those', () => {
    const p = ThingsController.prototype;
    expect([p.list, p.create, p.parts, p.fail, p.remove, p.helper].map(isTransactional)).toEqual([
      false,
      true,
      true,
      true,
      false,
      false,
    ]);
  });
});
