import pg, { Pool, type PoolConfig } from 'pg';
import type { DataSource, DataSourceOptions } from 'typeorm';
import type { DbDeadlines } from '../config/config';
import { DetachedClient } from './detached-client';
import { MIGRATIONS } from './migrations';

/** Connections per instance when DB_POOL_SIZE is not set (the app passes its validated config). */
export const DEFAULT_POOL_SIZE = 20;

/**
 * TCP keepalive probes start after a connection has been silent this long, so a database host that
 * vanished (power loss, network partition: no FIN, no RST) breaks its sockets within about a minute
 * instead of the kernel's two hours. A frozen but running server still answers probes: the query
 * deadline (DB_QUERY_TIMEOUT_MS) covers that case.
 */
export const KEEPALIVE_INITIAL_DELAY_MS = 10_000;

/** Pools created by the drivers {@link dataSourceOptions} hands to TypeORM, by driver. */
const POOLS = new WeakMap<object, Pool>();

/**
 * pg as TypeORM's public `driver` option, changed in one respect: the pool TypeORM creates from it is
 * recorded, so {@link poolOf} can give it to `Db` without reaching into TypeORM's driver internals.
 */
function recordingPgDriver(): object {
  const driver: object = Object.create(pg) as object;
  class RecordedPool extends Pool {
    constructor(options?: PoolConfig) {
      super(options);
      POOLS.set(driver, this);
    }
  }
  Object.defineProperty(driver, 'Pool', { value: RecordedPool, enumerable: true });
  return driver;
}

/** The pg pool of a DataSource built from {@link dataSourceOptions} (once it is initialized). */
export function poolOf(dataSource: DataSource): Pool {
  const driver = (dataSource.options as { driver?: unknown }).driver;
  const pool = typeof driver === 'object' && driver !== null ? POOLS.get(driver) : undefined;
  if (pool === undefined) {
    throw new Error('The DataSource has no pool yet, or was not built by dataSourceOptions()');
  }
  return pool;
}

/** pg's options for the deadlines of every connection (issue #22: no query may wait forever). */
function deadlineOptions(d: DbDeadlines): PoolConfig {
  return {
    connectionTimeoutMillis: d.connectTimeoutMs,
    statement_timeout: d.statementTimeoutMs,
    query_timeout: d.queryTimeoutMs,
    idle_in_transaction_session_timeout: d.idleInTransactionTimeoutMs,
  };
}

/**
 * TypeORM options shared by the app, the CLI (ormconfig.ts) and the tests. Never `synchronize`.
 * `deadlines` are the service's (validated config); without them (migrations, the CLI) statements
 * have no time limit, since a migration may legitimately run long or wait on another instance's
 * migration lock, and connections only the 5 s connect timeout.
 */
export function dataSourceOptions(
  url: string,
  opts: { poolSize?: number; deadlines?: DbDeadlines } = {},
): DataSourceOptions {
  const extra: PoolConfig = {
    max: opts.poolSize ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30000,
    application_name: 'tms-service',
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS,
    ...(opts.deadlines ? deadlineOptions(opts.deadlines) : {}),
    // Connections opened outside the request that needs them, dropped after a query deadline (see
    // DetachedClient).
    Client: DetachedClient,
  };
  return {
    type: 'postgres',
    url,
    driver: recordingPgDriver(),
    synchronize: false,
    migrationsRun: false,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    logging: false,
    extra,
  } as DataSourceOptions;
}
