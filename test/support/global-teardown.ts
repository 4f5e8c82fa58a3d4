import { rmSync } from 'node:fs';
import { Client } from 'pg';
import { readState } from './pg-server';

export default async function globalTeardown(): Promise<void> {
  const state = readState();
  if (globalThis.__TMS_PG_STOP__) {
    await globalThis.__TMS_PG_STOP__();
    if (state.dataDir) rmSync(state.dataDir, { recursive: true, force: true });
    return;
  }
  // External server: drop the databases this run created.
  const admin = new Client({ connectionString: `${state.serverUrl}/postgres` });
  await admin.connect();
  const dbs = await admin.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2`,
    [state.template, `${state.template}_f%`],
  );
  for (const { datname } of dbs.rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  await admin.end();
}
