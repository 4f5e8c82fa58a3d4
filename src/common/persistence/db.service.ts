import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DatabaseError, type PoolClient, type QueryConfig, type QueryResult } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import {
  DataSource,
  EntityManager,
  EntityTarget,
  ObjectLiteral,
  QueryFailedError,
  Repository,
} from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { poolOf } from '../../database/data-source-options';
import { currentStore } from './request-context';

/**
 * Access to the database for services and repositories. `manager` is the current request's
 * transaction when one is open (every non-GET request runs in one, see TransactionInterceptor),
 * otherwise the pool's manager.
 */
@Injectable()
export class Db {
  constructor(
    @InjectDataSource() readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

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

  /**
   * Like {@link query}, for a fixed statement of a hot path (authentication, access checks, GET of
   * one run, creating a run): sent as the named prepared statement `name`, so PostgreSQL parses and
   * plans it once per connection instead of on every request (planning was 0.37 ms of the 0.52 ms
   * the lookup of one run took, and 0.33 ms of the 1.05 ms a run's insert takes). Outside a
   * transaction it goes to pg's pool; inside the request's transaction to the transaction's own
   * connection (TypeORM's public `QueryRunner.connect()`, as {@link copyIn}), with TypeORM's answer
   * and error shapes. `name` belongs to this one SQL text (pg refuses a name reused for another
   * text). With `DB_PREPARED_STATEMENTS=false` (poolers that cannot keep prepared statements) it is
   * a plain {@link query}.
   */
  prepared<T = Record<string, unknown>>(
    name: string,
    sql: string,
    params: unknown[],
  ): Promise<T[]> {
    const open = currentStore()?.manager;
    if (open === undefined) {
      return this.poolQuery<T>(sql, params, this.config.dbPreparedStatements ? name : undefined);
    }
    if (!this.config.dbPreparedStatements) return open.query(sql, params) as Promise<T[]>;
    return this.transactionPrepared<T>(open, name, sql, params);
  }

  private async transactionPrepared<T>(
    manager: EntityManager,
    name: string,
    sql: string,
    params: unknown[],
  ): Promise<T[]> {
    const runner = manager.queryRunner;
    if (runner === undefined || runner.isReleased || !runner.isTransactionActive) {
      return manager.query(sql, params) as Promise<T[]>;
    }
    const client = (await runner.connect()) as PoolClient;
    try {
      return rowsOf<T>(await client.query({ name, text: sql, values: params } as QueryConfig));
    } catch (error) {
      // As TypeORM's query runner: every failure of a statement is a QueryFailedError.
      throw new QueryFailedError(sql, params, error as Error);
    }
  }

  private async poolQuery<T>(sql: string, params: unknown[], name?: string): Promise<T[]> {
    const pool = poolOf(this.dataSource);
    try {
      // A read outside a transaction has the short read deadline (DB_READ_TIMEOUT_MS): pg's pool
      // destroys a client whose query missed it.
      const raw = await pool.query({
        name,
        text: sql,
        values: params,
        query_timeout: this.config.db.readTimeoutMs,
      } as QueryConfig);
      return rowsOf<T>(raw);
    } catch (error) {
      if (error instanceof DatabaseError) throw new QueryFailedError(sql, params, error);
      throw error;
    }
  }

  /**
   * Bulk load on the current transaction: `sql` is a `COPY <table> (<columns>) FROM STDIN`, `rows`
   * its lines in the text format (`copyRow`, `copy-text.ts`). The transaction's connection comes
   * from TypeORM's public `QueryRunner.connect()` (the driver's client the transaction runs on), so
   * the rows are part of the request's one transaction, all or nothing. A refused row fails the
   * statement with `QueryFailedError`, like {@link query}. Outside a transaction it throws: a bulk
   * load is always part of a write.
   *
   * `rows` may be lazy (a generator): its lines are then made while the statement runs, chunk by
   * chunk as the connection takes them, so that the service builds the next rows while the
   * database writes the previous ones (the two overlap on two cores instead of taking turns).
   */
  async copyIn(sql: string, rows: Iterable<string>): Promise<void> {
    const chunks = copyChunks(rows);
    const first = chunks.next();
    if (first.done === true) return;
    const runner = currentStore()?.manager?.queryRunner;
    if (!runner?.isTransactionActive) throw new Error('Db.copyIn runs inside a transaction');
    const client = (await runner.connect()) as PoolClient;
    try {
      await pipeline(Readable.from(resumed(first.value, chunks)), client.query(copyFrom(sql)));
    } catch (error) {
      if (error instanceof DatabaseError) throw new QueryFailedError(sql, [], error);
      throw error;
    }
  }

  /**
   * Several reads that must see one snapshot, outside any transaction (a GET): `fn` sends them on
   * one pooled connection in a `REPEATABLE READ READ ONLY` transaction, each as the named prepared
   * statement `name` (as {@link prepared}) with the read deadline; work done in `fn` between two
   * reads is fine (nothing is locked). Inside the request's transaction the reads simply use it.
   */
  async readSnapshot<T>(fn: (read: SnapshotRead) => Promise<T>): Promise<T> {
    const open = currentStore()?.manager;
    if (open !== undefined) {
      return fn((_name, sql, params) => open.query(sql, params) as Promise<never[]>);
    }
    const client = await poolOf(this.dataSource).connect();
    let failed = true;
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const result = await fn(async <R>(name: string, sql: string, params: unknown[]) => {
        try {
          const raw = await client.query({
            name: this.config.dbPreparedStatements ? name : undefined,
            text: sql,
            values: params,
            query_timeout: this.config.db.readTimeoutMs,
          } as QueryConfig);
          return raw.rows as R[];
        } catch (error) {
          if (error instanceof DatabaseError) throw new QueryFailedError(sql, params, error);
          throw error;
        }
      });
      await client.query('COMMIT');
      failed = false;
      return result;
    } finally {
      // A connection that failed mid-transaction is not given back (it may still be in it).
      client.release(failed);
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

/** A generator's first value (already taken) followed by the rest. */
function* resumed(first: string, rest: Iterator<string>): Generator<string> {
  yield first;
  for (let next = rest.next(); next.done !== true; next = rest.next()) yield next.value;
}

/** COPY lines joined into chunks of about 64 KB (one write each instead of one per row). */
function* copyChunks(rows: Iterable<string>): Generator<string, void> {
  let chunk = '';
  for (const row of rows) {
    chunk += row;
    if (chunk.length >= 65536) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk.length > 0) yield chunk;
}

/** One read of {@link Db.readSnapshot}: a named prepared statement, its rows. */
export type SnapshotRead = <R = Record<string, unknown>>(
  name: string,
  sql: string,
  params: unknown[],
) => Promise<R[]>;

/** pg's answer in TypeORM's shape: the rows, or `[rows, rowCount]` for UPDATE and DELETE. */
function rowsOf<T>(raw: QueryResult): T[] {
  return (
    raw.command === 'UPDATE' || raw.command === 'DELETE' ? [raw.rows, raw.rowCount] : raw.rows
  ) as T[];
}
