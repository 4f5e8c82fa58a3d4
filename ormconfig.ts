import 'reflect-metadata';
import { join, resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './src/database/data-source-options';
import { embeddedDatabaseUrl } from './src/database/embedded-postgres';

/**
 * The database of the TypeORM CLI: DATABASE_URL, else the embedded one `npm start` runs (its
 * superuser's password from `DATA_DIR/pg-password`, port EMBEDDED_PG_PORT). There is no built-in
 * password: the embedded cluster's is drawn per cluster.
 */
function databaseUrl(env: NodeJS.ProcessEnv): string {
  if (env.DATABASE_URL) return env.DATABASE_URL;
  const dataDir = resolve(env.DATA_DIR ?? './.data');
  const url = embeddedDatabaseUrl(dataDir, Number(env.EMBEDDED_PG_PORT ?? 5433));
  if (url === undefined) {
    throw new Error(
      `DATABASE_URL is not set and ${dataDir} holds no embedded database (run npm start once, or set DATABASE_URL)`,
    );
  }
  return url;
}

/** DataSource for the TypeORM CLI (`npm run migration:generate|run|revert`), run from dist/. */
export default new DataSource({
  ...dataSourceOptions(databaseUrl(process.env)),
  entities: [join(__dirname, 'src/**/*.entity.js')],
});
