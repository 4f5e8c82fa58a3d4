import type { DataSourceOptions } from 'typeorm';
import { DetachedClient } from './detached-client';
import { MIGRATIONS } from './migrations';

/** TypeORM options shared by the app, the CLI (ormconfig.ts) and the tests. Never `synchronize`. */
export function dataSourceOptions(
  url: string,
  extra: Partial<DataSourceOptions> = {},
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
      max: Number(process.env.DB_POOL_SIZE ?? 20),
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 30000,
      application_name: 'tms-service',
      // Connections opened outside the request that needs them (see DetachedClient).
      Client: DetachedClient,
    },
    ...extra,
  } as DataSourceOptions;
}
