import type { DataSourceOptions } from 'typeorm';
import { DetachedClient } from './detached-client';
import { MIGRATIONS } from './migrations';

/** Connections per instance when DB_POOL_SIZE is not set (the app passes its validated config). */
export const DEFAULT_POOL_SIZE = 20;

/** TypeORM options shared by the app, the CLI (ormconfig.ts) and the tests. Never `synchronize`. */
export function dataSourceOptions(
  url: string,
  extra: Partial<DataSourceOptions> = {},
  poolSize = DEFAULT_POOL_SIZE,
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    synchronize: false,
    migrationsRun: false,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    logging: false,
    extra: {
      max: poolSize,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 30000,
      application_name: 'tms-service',
      // Connections opened outside the request that needs them (see DetachedClient).
      Client: DetachedClient,
    },
    ...extra,
  } as DataSourceOptions;
}
