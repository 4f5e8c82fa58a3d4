import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstClosedDirectory } from '../../src/database/embedded-root';
import { startMain, waitForMain } from '../support/main-process';
import { freePort } from '../support/pg-server';

/**
 * Issue #24 item 7: as root (the tests run as root here) the embedded PostgreSQL runs as the
 * `postgres` system user; a DATA_DIR below a mode 700 directory used to die with `spawn … initdb
 * EACCES`. Now the cluster goes where that user can reach it, and the service starts.
 */
describe('embedded PostgreSQL as root below a private directory', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('npm start works with DATA_DIR below a mode 700 directory', async () => {
    const privateDir = mkdtempSync(join(tmpdir(), 'tms-private-'));
    dirs.push(privateDir);
    expect(statSync(privateDir).mode & 0o777).toBe(0o700);
    const dataDir = join(privateDir, 'clone', '.data');
    mkdirSync(dataDir, { recursive: true });
    expect(firstClosedDirectory(dataDir)).toBe(privateDir);
    const [port, pgPort] = [await freePort(), await freePort()];
    const s = startMain({
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      EMBEDDED_PG_PORT: String(pgPort),
    });
    try {
      await waitForMain(s, () => s.output().includes('Listening on'), 150_000, 'the service');
      expect(s.output()).not.toMatch(/EACCES/);
      // As root (as the tests run here) the cluster moved where the postgres user can reach it.
      const moved = new RegExp(`cannot enter ${privateDir}: the embedded cluster of DATA_DIR ${dataDir} lives in ([^\\s"]+)`).exec(s.output());
      expect(moved).not.toBeNull();
      dirs.push(join(moved![1], '..'));
      // The cluster directory itself is the postgres user's (mode 700); everything above it is open.
      expect(firstClosedDirectory(join(moved![1], '..'))).toBeNull();
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
      expect(s.output()).toMatch(/generated password/);
      s.child.kill('SIGTERM');
      expect(await s.exited).toBe(0);
    } finally {
      if (s.child.exitCode === null) s.child.kill('SIGKILL');
    }
    // A second start finds the same cluster (the administrator exists: no new password).
    const again = startMain({
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      EMBEDDED_PG_PORT: String(pgPort),
    });
    try {
      await waitForMain(again, () => again.output().includes('Listening on'), 150_000, 'the second start');
      expect(again.output()).not.toMatch(/generated password/);
      again.child.kill('SIGTERM');
      expect(await again.exited).toBe(0);
    } finally {
      if (again.child.exitCode === null) again.child.kill('SIGKILL');
    }
  });
});
