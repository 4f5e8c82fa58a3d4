import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedDatabaseUrl } from './embedded-postgres';

describe('embeddedDatabaseUrl (the TypeORM CLI without DATABASE_URL)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tms-embedded-url-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("uses the cluster's own password, escaped, and the given port", () => {
    writeFileSync(join(dir, 'pg-password'), 'a/b+c=d\n', { mode: 0o600 });
    expect(embeddedDatabaseUrl(dir, 5544)).toBe(
      'postgres://postgres:a%2Fb%2Bc%3Dd@127.0.0.1:5544/tms',
    );
  });

  it('is undefined before the cluster has a password (no built-in default)', () => {
    expect(embeddedDatabaseUrl(dir, 5433)).toBeUndefined();
    writeFileSync(join(dir, 'pg-password'), '\n');
    expect(embeddedDatabaseUrl(dir, 5433)).toBeUndefined();
  });
});
