import 'reflect-metadata';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './src/database/data-source-options';

/**
 * DataSource for the TypeORM CLI (`npm run migration:generate|run|revert`), run from dist/.
 * Uses DATABASE_URL (an external PostgreSQL, or the embedded one while `npm start` runs:
 * postgres://postgres:postgres@127.0.0.1:5433/tms).
 */
export default new DataSource({
  ...dataSourceOptions(process.env.DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5433/tms'),
  entities: [join(__dirname, 'src/**/*.entity.js')],
});
