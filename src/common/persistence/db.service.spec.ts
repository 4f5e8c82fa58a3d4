import { DatabaseError, type Pool } from 'pg';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';
import type { AppConfig } from '../../config/config';
import { dataSourceOptions } from '../../database/data-source-options';
import { Db } from './db.service';
import { requestContext } from './request-context';

const READ_TIMEOUT_MS = 4321;

/** A DataSource whose pg pool records what it is asked (routing only: no persistence is claimed). */
function fakeDb(prepared: boolean) {
  const calls: unknown[][] = [];
  // The pool is made the way TypeORM makes it, from the options' driver (no connection is opened).
  const { driver } = dataSourceOptions('postgres://u@127.0.0.1/x') as {
    driver: { Pool: new () => Pool };
  };
  const pool = new driver.Pool();
  const query = jest.fn(async (...args: unknown[]) => {
    calls.push(args);
    return { command: 'SELECT', rows: [{ v: 1 }], rowCount: 1 };
  });
  Object.assign(pool, { query });
  const dataSource = { options: { driver } } as unknown as DataSource;
  const db = new Db(dataSource, {
    dbPreparedStatements: prepared,
    db: { readTimeoutMs: READ_TIMEOUT_MS },
  } as AppConfig);
  return { db, pool: { query }, calls };
}

describe('Db.prepared', () => {
  it('sends a named prepared statement on the pool outside a transaction', async () => {
    const { db, calls } = fakeDb(true);
    await expect(db.prepared('auth.user', 'SELECT $1::int AS v', [1])).resolves.toEqual([{ v: 1 }]);
    expect(calls).toEqual([
      [
        {
          name: 'auth.user',
          text: 'SELECT $1::int AS v',
          values: [1],
          query_timeout: READ_TIMEOUT_MS,
        },
      ],
    ]);
  });

  it('sends a plain statement when DB_PREPARED_STATEMENTS is off', async () => {
    const { db, calls } = fakeDb(false);
    await db.prepared('auth.user', 'SELECT $1::int AS v', [1]);
    // Unnamed, with the read deadline of a query outside a transaction (DB_READ_TIMEOUT_MS).
    expect(calls).toEqual([
      [
        {
          name: undefined,
          text: 'SELECT $1::int AS v',
          values: [1],
          query_timeout: READ_TIMEOUT_MS,
        },
      ],
    ]);
  });

  /** A request's transaction: TypeORM's manager and query runner around one pg client. */
  function openTransaction(active = true) {
    const client = {
      query: jest.fn(async (..._args: unknown[]) => ({ command: 'UPDATE', rows: [], rowCount: 3 })),
    };
    const queryRunner = {
      isReleased: false,
      isTransactionActive: active,
      connect: jest.fn(async () => client),
    };
    const manager = {
      query: jest.fn(async () => [{ v: 2 }]),
      queryRunner,
    } as unknown as EntityManager & { query: jest.Mock };
    const inside = <T>(fn: () => Promise<T>) =>
      requestContext.run({ req: {} as never, validated: new Map(), manager }, fn);
    return { client, manager, inside };
  }

  it("sends a named prepared statement on the transaction's own connection inside one", async () => {
    const { db, pool } = fakeDb(true);
    const { client, manager, inside } = openTransaction();
    const rows = await inside(() => db.prepared('runs.touch', 'UPDATE r SET x = $1', [1]));
    // TypeORM's shape for UPDATE and DELETE: [rows, rowCount].
    expect(rows).toEqual([[], 3]);
    expect(client.query).toHaveBeenCalledWith({
      name: 'runs.touch',
      text: 'UPDATE r SET x = $1',
      values: [1],
    });
    expect(manager.query).not.toHaveBeenCalled();
    expect(pool.query).not.toHaveBeenCalled();
  });

  it.each([
    ['DB_PREPARED_STATEMENTS is off', false, true],
    ['the manager has no active transaction', true, false],
  ])('runs a plain statement through the manager when %s', async (_label, named, active) => {
    const { db, pool } = fakeDb(named);
    const { client, manager, inside } = openTransaction(active);
    const rows = await inside(() => db.prepared('auth.user', 'SELECT 2 AS v', []));
    expect(rows).toEqual([{ v: 2 }]);
    expect(manager.query).toHaveBeenCalledWith('SELECT 2 AS v', []);
    expect(client.query).not.toHaveBeenCalled();
    expect(pool.query).not.toHaveBeenCalled();
  });

  it('reports a refused statement inside a transaction as QueryFailedError, like TypeORM', async () => {
    const { db } = fakeDb(true);
    const { client, inside } = openTransaction();
    client.query.mockRejectedValueOnce(new DatabaseError('boom', 0, 'error'));
    await expect(inside(() => db.prepared('x', 'SELECT boom', []))).rejects.toBeInstanceOf(
      QueryFailedError,
    );
  });

  it('reports a statement the server refused as QueryFailedError, like query()', async () => {
    const { db, pool } = fakeDb(true);
    pool.query.mockRejectedValueOnce(new DatabaseError('boom', 0, 'error'));
    await expect(db.prepared('x', 'SELECT boom', [])).rejects.toBeInstanceOf(QueryFailedError);
  });
});
