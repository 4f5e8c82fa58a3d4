import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DatabaseError, type Pool } from 'pg';
import {
  DataSource,
  EntityManager,
  EntityTarget,
  ObjectLiteral,
  QueryFailedError,
  Repository,
} from 'typeorm';
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

  /**
   * Parameterised SQL on the current transaction, else straight on pg's pool: outside a transaction
   * (every GET) TypeORM would add a query runner, its logger and its event broadcaster to each
   * statement (a few percent of the CPU of a small GET). The answer and the errors keep TypeORM's
   * shape: rows (`[rows, rowCount]` for UPDATE and DELETE), and `QueryFailedError` for statements
   * the server refused.
   */
  query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    const open = currentStore()?.manager;
    if (open !== undefined) return open.query(sql, params) as Promise<T[]>;
    return this.poolQuery<T>(sql, params);
  }

  private async poolQuery<T>(sql: string, params: unknown[]): Promise<T[]> {
    const pool = (this.dataSource.driver as unknown as { master: Pool }).master;
    try {
      const raw = await pool.query(sql, params);
      return (
        raw.command === 'UPDATE' || raw.command === 'DELETE' ? [raw.rows, raw.rowCount] : raw.rows
      ) as T[];
    } catch (error) {
      if (error instanceof DatabaseError) throw new QueryFailedError(sql, params, error);
      throw error;
    }
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
