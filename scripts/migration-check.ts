import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/database/data-source-options';
import { startEmbeddedPostgres } from '../src/database/embedded-postgres';

/**
 * Drift check: applies every migration to a throwaway embedded PostgreSQL, then compares each
 * entity's table and columns (name, type, nullability) with what the migrations created.
 * Exit 1 with a list of differences when entities and migrations disagree; also checks that every
 * migration reverts cleanly (down) and re-applies (up).
 */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

function expectedType(ds: DataSource, col: DataSource['entityMetadatas'][number]['columns'][number]): string {
  if (col.isArray) return 'ARRAY';
  const t = ds.driver.normalizeType(col);
  const map: Record<string, string> = {
    varchar: 'character varying',
    'character varying': 'character varying',
    char: 'character',
    character: 'character',
    timestamptz: 'timestamp with time zone',
    'timestamp with time zone': 'timestamp with time zone',
    timestamp: 'timestamp without time zone',
    int: 'integer',
    int4: 'integer',
    integer: 'integer',
    int8: 'bigint',
    bigint: 'bigint',
    bool: 'boolean',
    boolean: 'boolean',
    float8: 'double precision',
    'double precision': 'double precision',
    numeric: 'numeric',
    decimal: 'numeric',
  };
  return map[t] ?? t;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tms-drift-'));
  const pg = await startEmbeddedPostgres({ dataDir: dir, port: await freePort(), database: 'drift' });
  const problems: string[] = [];
  try {
    const ds = new DataSource({
      ...dataSourceOptions(pg.url),
      entities: [join(__dirname, '..', 'src', '**', '*.entity.js')],
    });
    await ds.initialize();
    await ds.runMigrations({ transaction: 'each' });
    const cols = await ds.query<Array<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>>(
      `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'public'`,
    );
    const db = new Map<string, { type: string; nullable: boolean }>();
    for (const c of cols) db.set(`${c.table_name}.${c.column_name}`, { type: c.data_type, nullable: c.is_nullable === 'YES' });
    for (const meta of ds.entityMetadatas) {
      for (const col of meta.columns) {
        const key = `${meta.tableName}.${col.databaseName}`;
        const actual = db.get(key);
        if (!actual) {
          problems.push(`${key}: declared by entity ${meta.name} but no migration creates it`);
          continue;
        }
        const want = expectedType(ds, col);
        if (want !== actual.type) problems.push(`${key}: entity type ${want}, database type ${actual.type}`);
        if (col.isNullable !== actual.nullable && !col.isPrimary) {
          problems.push(`${key}: entity nullable=${col.isNullable}, database nullable=${actual.nullable}`);
        }
      }
    }
    // Every migration must revert and re-apply.
    const applied = ds.migrations.length;
    for (let i = 0; i < applied; i++) await ds.undoLastMigration({ transaction: 'each' });
    await ds.runMigrations({ transaction: 'each' });
    await ds.destroy();
  } finally {
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  if (problems.length > 0) {
    process.stderr.write(`Entities and migrations disagree:\n- ${problems.join('\n- ')}\n`);
    process.exit(1);
  }
  process.stdout.write('migrations match the entities; every migration reverts and re-applies\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
