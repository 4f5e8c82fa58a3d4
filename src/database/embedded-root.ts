import { createHash } from 'node:crypto';
import { type Stats, statSync } from 'node:fs';
import { dirname, parse, resolve } from 'node:path';

/**
 * As root the embedded PostgreSQL runs as the `postgres` system user (issue #24 item 7). That user
 * must be able to enter every directory above its binaries and its cluster: a clone below a mode
 * 700 directory (a home directory, `mktemp -d`) hides both. These rules decide where the binaries
 * and the cluster go then.
 */

/** Where copies of the binaries and relocated clusters live, first reachable one wins. */
export const ROOT_RELOCATION_BASES = ['/var/lib/tms-embedded-postgres', '/var/tmp/tms-embedded-postgres'];

/**
 * The first directory on the way to `path` (the path itself included, when it exists) that a user
 * other than its owner cannot enter (no `o+x`), or null when every one can be entered. Missing
 * directories are skipped: they will be created with mode 755.
 */
export function firstClosedDirectory(
  path: string,
  stat: (p: string) => Pick<Stats, 'mode' | 'isDirectory'> | null = statOrNull,
): string | null {
  const dirs: string[] = [];
  let p = resolve(path);
  const root = parse(p).root;
  while (p !== root) {
    dirs.unshift(p);
    p = dirname(p);
  }
  for (const dir of dirs) {
    const s = stat(dir);
    if (s === null) return null;
    if (s.isDirectory() && (s.mode & 0o001) === 0) return dir;
  }
  return null;
}

function statOrNull(p: string): Stats | null {
  try {
    return statSync(p);
  } catch {
    return null;
  }
}

/** A stable directory name for the relocated cluster of one DATA_DIR. */
export function relocatedClusterName(dataDir: string): string {
  return `cluster-${createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 16)}`;
}

/** The one line that says why the embedded database cannot run here and the ways out. */
export function unreachableMessage(dir: string): string {
  return (
    `The embedded PostgreSQL runs as the "postgres" system user when started as root, and that user cannot enter ${dir} ` +
    `(mode 700?). Run the service as a regular user, set DATA_DIR to a directory every user can enter, ` +
    `or set DATABASE_URL to an external PostgreSQL.`
  );
}

export class EmbeddedPostgresError extends Error {}

/** The package of this machine's embedded PostgreSQL binaries. */
export function platformPackage(): string {
  return `@embedded-postgres/${process.platform}-${process.arch}`;
}

/**
 * Null when the embedded PostgreSQL binaries can be loaded, else the one line to stop with: the
 * Docker image leaves them out (it runs against DATABASE_URL), as can `npm ci --omit=optional`.
 */
export function missingBinariesMessage(resolve: (name: string) => string): string | null {
  const name = platformPackage();
  try {
    resolve(name);
    return null;
  } catch {
    return (
      `The embedded PostgreSQL binaries (${name}) are not installed here (the Docker image leaves them out): ` +
      `set DATABASE_URL to a PostgreSQL server.`
    );
  }
}
