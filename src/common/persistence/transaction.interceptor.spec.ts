import 'reflect-metadata';
import { Controller, Delete, Get, INestApplication, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import request from 'supertest';
import { DataSource, EntityManager } from 'typeorm';
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

  it('rolls the transaction back when the handler fails', async () => {
    const res = await request(app.getHttpServer()).post('/things/fail');
    expect(res.status).toBe(500);
    expect(seen).toEqual([manager]);
    expect(outcomes).toEqual(['rollback']);
  });

  it.each([
    ['get', '/things', 200],
    ['delete', '/things/1', 200],
  ] as const)('leaves an unmarked handler (%s) without a transaction', async (method, url, status) => {
    const res = await request(app.getHttpServer())[method](url);
    expect(res.status).toBe(status);
    expect(seen).toEqual([undefined]);
    expect(outcomes).toEqual([]);
  });

  it('marks the handlers it binds, and only those', () => {
    const p = ThingsController.prototype;
    expect([p.list, p.create, p.fail, p.remove, p.helper].map(isTransactional)).toEqual([
      false,
      true,
      true,
      false,
      false,
    ]);
  });
});
