import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { prepareDatabase } from '../src/bootstrap';
import { loadConfig } from '../src/config/config';
import type { Sizes } from './config';
import { Seeder, SeedResult } from './seed';

/** The embedded PostgreSQL settings of every bench (`npm run bench`, `bench/page-loads.ts`). */
export const BENCH_POSTGRES_FLAGS: readonly string[] = [
  '-c',
  'shared_buffers=512MB',
  '-c',
  'max_connections=200',
  '-c',
  'max_wal_size=8GB',
  '-c',
  'checkpoint_timeout=30min',
  '-c',
  'work_mem=16MB',
];

/**
 * Migrates the database at `url` and seeds it with `sizes`. Returns the seed's figures, the
 * `AUTH_SECRET` the servers must be started with (fresh, random, never persisted) and the server's
 * version.
 */
export async function migrateAndSeed(
  url: string,
  sizes: Sizes,
  log: (line: string) => void,
): Promise<{ seed: SeedResult; secret: string; pgVersion: string }> {
  const secret = randomBytes(32).toString('hex');
  const appConfig = loadConfig(
    {
      DATABASE_URL: url,
      AUTH_SECRET: secret,
      ADMIN_PASSWORD: randomBytes(12).toString('hex'),
      LOG_LEVEL: 'warn',
    },
    { persistSecret: false },
  );
  log('migrating');
  await prepareDatabase(appConfig, url);
  log('seeding');
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const seed = await new Seeder(client, sizes, log).run();
    const version = await client.query<{ server_version: string }>('SHOW server_version');
    return { seed, secret, pgVersion: version.rows[0].server_version };
  } finally {
    await client.end();
  }
}
