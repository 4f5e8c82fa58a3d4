import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';

/** Where global setup records the server it started for the test workers. */
export const STATE_FILE = join(tmpdir(), `tms-test-pg-${process.ppid}-${process.pid}.json`);

export interface TestPgState {
  /** Admin URL without database name: postgres://user:pass@host:port */
  serverUrl: string;
  template: string;
  dataDir: string | null;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export function newDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'tms-test-pg-'));
}

export function writeState(file: string, s: TestPgState): void {
  writeFileSync(file, JSON.stringify(s));
}

export function readState(): TestPgState {
  const file = process.env.TMS_TEST_PG_STATE;
  if (!file || !existsSync(file)) throw new Error('Test PostgreSQL state missing: run through jest (global setup)');
  return JSON.parse(readFileSync(file, 'utf8')) as TestPgState;
}
