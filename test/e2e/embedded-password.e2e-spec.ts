import { chmodSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { SHUT_DOWN_LINE } from '../../src/database/embedded-postgres';
import { MainProcess, startTsScript, waitForMain } from '../support/main-process';
import { freePort, newDataDir } from '../support/pg-server';

/**
 * Found by an audit: the embedded cluster's superuser had the publicly known password `postgres`,
 * so any local user could log in as superuser. Each cluster now gets a random one, stored in
 * DATA_DIR (mode 0600); a cluster made before keeps working, its password replaced on start.
 * (embedded-postgres is ESM-only, which jest cannot load: the server runs in a child process.)
 */
const EMBEDDED = `
const { startEmbeddedPostgres } = require('./src/database/embedded-postgres.ts');
startEmbeddedPostgres({
  dataDir: process.env.D,
  port: Number(process.env.P),
  database: 'postgres',
  onLog: (line) => process.stdout.write('PG ' + line + '\\n'),
}).then(
  (pg) => {
    process.stdout.write('STARTED ' + JSON.stringify({ url: pg.url, notes: pg.notes }) + '\\n');
    process.stdin.once('data', () =>
      pg.stop().then(() => {
        process.stdout.write('STOPPED\\n');
        process.exit(0);
      }),
    );
  },
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
`;

describe('embedded PostgreSQL: the superuser password is drawn per cluster', () => {
  const dataDir = newDataDir();
  let port: number;
  let running: MainProcess | null = null;
  beforeAll(async () => {
    chmodSync(dataDir, 0o755); // as root the server runs as the postgres user
    port = await freePort();
  });
  afterAll(async () => {
    await stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(): Promise<{ url: string; notes: string[] }> {
    const s = startTsScript(EMBEDDED, { D: dataDir, P: String(port) });
    running = s;
    await waitForMain(s, () => s.output().includes('STARTED '), 120_000, 'the embedded server');
    return JSON.parse(/STARTED (.*)/.exec(s.output())![1]) as { url: string; notes: string[] };
  }
  async function stop(): Promise<void> {
    const s = running;
    running = null;
    if (s === null || s.child.exitCode !== null) return;
    s.child.stdin?.write('stop\n');
    expect(await s.exited).toBe(0);
  }
  /** The SQLSTATE of logging in as postgres with `password`, or 'ok'. */
  const login = async (password: string): Promise<string> => {
    const c = new Client({
      host: '127.0.0.1',
      port,
      user: 'postgres',
      password,
      database: 'postgres',
    });
    try {
      await c.connect();
      return 'ok';
    } catch (err) {
      return (err as { code?: string }).code ?? String(err);
    } finally {
      await c.end().catch(() => undefined);
    }
  };
  const stored = () => readFileSync(join(dataDir, 'pg-password'), 'utf8').trim();

  it('a new cluster: a random password in DATA_DIR/pg-password (0600), in the URL; postgres/postgres refused', async () => {
    const pg = await start();
    expect(statSync(join(dataDir, 'pg-password')).mode & 0o777).toBe(0o600);
    expect(stored()).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(decodeURIComponent(new URL(pg.url).password)).toBe(stored());
    expect(await login(stored())).toBe('ok');
    expect(await login('postgres')).toBe('28P01');
    await stop();
    // The next start reads it back.
    const first = stored();
    const again = await start();
    expect(stored()).toBe(first);
    expect(again.notes).toEqual([]);
  });

  it('a cluster made with the old password gets the stored random one on its next start', async () => {
    const admin = new Client({
      host: '127.0.0.1',
      port,
      user: 'postgres',
      password: stored(),
      database: 'postgres',
    });
    await admin.connect();
    await admin.query(`ALTER ROLE postgres PASSWORD 'postgres'`);
    await admin.end();
    await stop();
    rmSync(join(dataDir, 'pg-password'));
    const pg = await start();
    expect(pg.notes.join('\n')).toContain('publicly known password was replaced');
    expect(await login('postgres')).toBe('28P01');
    expect(await login(stored())).toBe('ok');
    expect(stored()).not.toBe('postgres');
  });

  it("stop() returns once the server has written its last line (nothing of it after the caller's next)", async () => {
    await stop(); // the server the tests before left running
    await start();
    const s = running!;
    await stop();
    const lines = s.output().split('\n');
    const stopped = lines.indexOf('STOPPED');
    expect(stopped).toBeGreaterThan(0);
    expect(lines.slice(stopped + 1).filter((l) => l.startsWith('PG '))).toEqual([]);
    const last = lines
      .slice(0, stopped)
      .filter((l) => l.startsWith('PG '))
      .pop();
    expect(last).toMatch(SHUT_DOWN_LINE);
  });
});
