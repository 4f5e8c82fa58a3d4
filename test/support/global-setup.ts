import 'reflect-metadata';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { prepareDatabase } from '../../src/database/prepare';
import { loadConfig } from '../../src/config/config';
import { freePort, newDataDir, writeState } from './pg-server';
import { TEST_ADMIN, TEST_AUTH_SECRET } from './constants';

declare global {
  var __TMS_PG_STOP__: (() => Promise<void>) | undefined;
}

/**
 * Starts one PostgreSQL for the whole run (the embedded one, or TEST_DATABASE_URL's server),
 * migrates a template database once; each test file then clones it (CREATE DATABASE … TEMPLATE),
 * so files run in parallel on their own databases.
 */
export default async function globalSetup(): Promise<void> {
  const template = `tms_tpl_${process.pid}`;
  let serverUrl: string;
  let dataDir: string | null = null;
  const external = process.env.TEST_DATABASE_URL;
  if (external) {
    const u = new URL(external);
    u.pathname = '';
    serverUrl = u.toString().replace(/\/$/, '');
  } else {
    dataDir = newDataDir();
    chmodSync(dataDir, 0o755);
    const port = await freePort();
    const pg = await startEmbeddedPostgres({
      dataDir,
      port,
      database: 'postgres',
      // Throwaway cluster: durability off for speed.
      postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'],
    });
    globalThis.__TMS_PG_STOP__ = pg.stop;
    // The cluster's own superuser password (drawn per cluster): the handle's URL without its database.
    const u = new URL(pg.url);
    u.pathname = '';
    serverUrl = u.toString().replace(/\/$/, '');
  }
  const admin = new Client({ connectionString: `${serverUrl}/postgres` });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${template}`);
  await admin.query(`CREATE DATABASE ${template}`);
  await admin.end();

  const config = loadConfig(
    { AUTH_SECRET: TEST_AUTH_SECRET, ADMIN_USERNAME: TEST_ADMIN.username, ADMIN_PASSWORD: TEST_ADMIN.password, DATABASE_URL: `${serverUrl}/${template}` },
    { persistSecret: false },
  );
  await prepareDatabase(config, `${serverUrl}/${template}`);

  const stateFile = join(tmpdir(), `tms-test-pg-${process.pid}.json`);
  writeState(stateFile, { serverUrl, template, dataDir });
  process.env.TMS_TEST_PG_STATE = stateFile;
}
