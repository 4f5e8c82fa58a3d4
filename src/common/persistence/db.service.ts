import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, EntityTarget, ObjectLiteral, Repository } from 'typeorm';
import { currentStore } from './request-context';

/**
 * Access to the database for services and repositories. `manager` is the current request's
 * transaction when one is open (every non-GET request runs in one, see TransactionInterceptor),
 * otherwise the pool's manager.
 */
@Injectable()
export class Db {
  constructor(@InjectDataSource() readonly dataSource: DataSource) {}

  get manager(): EntityManager {
    return currentStore()?.manager ?? this.dataSource.manager;
  }

  repo<T extends ObjectLiteral>(entity: EntityTarget<T>): Repository<T> {
    return this.manager.getRepository(entity);
  }

  /** Parameterised SQL on the current transaction (or the pool). */
  query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    return this.manager.query(sql, params) as Promise<T[]>;
  }

  /**
   * Runs `fn` in a transaction: the request's one if open, else a new one (for work outside requests).
   */
  async transaction<T>(fn: (m: EntityManager) => Promise<T>): Promise<T> {
    const open = currentStore()?.manager;
    if (open?.queryRunner?.isTransactionActive) return fn(open);
    return this.dataSource.transaction(fn);
  }
}
