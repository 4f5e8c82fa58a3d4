import type { Pool, PoolConfig } from 'pg';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../config/config';
import { dataSourceOptions, KEEPALIVE_INITIAL_DELAY_MS, poolOf } from './data-source-options';
import { DetachedClient } from './detached-client';

const extraOf = (o: object) => (o as { extra: PoolConfig }).extra;

describe('dataSourceOptions', () => {
  it('gives the service\'s connections every deadline of its config (issue #22)', () => {
    const config = loadConfig(
      { AUTH_SECRET: 'k'.repeat(40), DB_STATEMENT_TIMEOUT_MS: '4000', DB_CONNECT_TIMEOUT_MS: '900' },
      { persistSecret: false },
    );
    const extra = extraOf(dataSourceOptions('postgres://u@h/db', { poolSize: 7, deadlines: config.db }));
    expect(extra).toMatchObject({
      max: 7,
      statement_timeout: 4000,
      query_timeout: 6000,
      connectionTimeoutMillis: 900,
      idle_in_transaction_session_timeout: 60_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS,
      Client: DetachedClient,
    });
  });

  it('leaves statements of migrations and tools without a deadline, connections with one', () => {
    const extra = extraOf(dataSourceOptions('postgres://u@h/db', { poolSize: 2 }));
    expect(extra).toMatchObject({ max: 2, connectionTimeoutMillis: 5000, keepAlive: true, Client: DetachedClient });
    expect(extra).not.toHaveProperty('statement_timeout');
    expect(extra).not.toHaveProperty('query_timeout');
  });

  it('hands the pool TypeORM creates from its driver to poolOf, per data source', () => {
    const a = dataSourceOptions('postgres://u@h/a') as { driver: { Pool: new (o?: PoolConfig) => Pool } };
    const b = dataSourceOptions('postgres://u@h/b') as { driver: { Pool: new (o?: PoolConfig) => Pool } };
    const dsA = { options: a } as unknown as DataSource;
    expect(() => poolOf(dsA)).toThrow(/no pool yet/);
    const poolA = new a.driver.Pool({ max: 1 });
    const poolB = new b.driver.Pool({ max: 1 });
    expect(poolOf(dsA)).toBe(poolA);
    expect(poolOf({ options: b } as unknown as DataSource)).toBe(poolB);
    expect(poolA.options.max).toBe(1);
  });
});
