/**
 * The `import-limit` rows of the bench: the database's limit for an import. The rows the service's
 * import just wrote (the suites and test cases it created, the run's items, rows and history) are
 * read back into memory with `COPY (SELECT …) TO STDOUT`, under new ids (a fixed function of the old
 * ones, so references stay consistent) and with titles, keys and automation ids that cannot collide
 * with the service's, aimed at a second run of the same project; then, timed, they are written with
 * bare `COPY … FROM STDIN` (pg-copy-streams) into the same schema in one transaction. No parsing,
 * no matching, no planning, no round trip per batch: nothing any implementation of the import can
 * avoid but writing the rows, with every constraint, index and trigger of the schema. The titles
 * get a suffix so that later imports, which match cases by title, are not affected.
 */
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Client } from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';

/** What the limit wrote and how long its transaction took. */
export interface ImportLimitResult {
  ms: number;
  rows: Record<string, number>;
  bytes: number;
}

/** The tables an import writes, in the order their references need. */
const TABLES = ['suites', 'test_cases', 'run_items', 'run_item_rows', 'run_item_history'] as const;
type Table = (typeof TABLES)[number];

/** Maps an id of the import to the limit's id: the same function in every table. */
const mapped = (col: string) => `md5('import-limit:' || ${col}::text)::uuid`;

/**
 * Reads what the import into `runId` wrote (cases and suites created since `since`, by the
 * database's clock) and writes it again into `limitRunId` with bare COPY in one transaction.
 */
export async function measureImportLimit(
  url: string,
  projectId: string,
  runId: string,
  limitRunId: string,
  since: Date,
): Promise<ImportLimitResult> {
  const client = new Client({ connectionString: url, application_name: 'tms-bench-import-limit' });
  await client.connect();
  try {
    // The new cases and suites of the import: their ids are mapped, the others (matched cases,
    // existing suites) are referenced as they are.
    await client.query(
      `CREATE TEMP TABLE limit_new_cases AS
         SELECT id FROM test_cases WHERE project_id = $1 AND created_at >= $2`,
      [projectId, since],
    );
    await client.query(
      `CREATE TEMP TABLE limit_new_suites AS
         SELECT id FROM suites WHERE project_id = $1 AND created_at >= $2`,
      [projectId, since],
    );
    await client.query('CREATE UNIQUE INDEX ON limit_new_cases (id)');
    await client.query('CREATE UNIQUE INDEX ON limit_new_suites (id)');
    // Case keys after every number handed out so far; the limit allocates them from the
    // project's counter as the import does (one statement), so later imports do not collide.
    const { rows: keyRows } = await client.query<{ offset: number; last: number }>(
      `SELECT greatest((SELECT coalesce(max(value), 0) FROM project_counters
                         WHERE project_id = $1 AND name = 'test_case_key'),
                       (SELECT coalesce(max(key_number), 0) FROM test_cases
                         WHERE project_id = $1))::int AS offset,
              (SELECT coalesce(max(key_number), 0) FROM test_cases
                WHERE id IN (SELECT id FROM limit_new_cases))::int AS last`,
      [projectId],
    );
    const keyOffset = keyRows[0].offset;
    const lastKey = keyOffset + keyRows[0].last;
    const ifNew = (col: string, set: string) =>
      `CASE WHEN ${col} IN (SELECT id FROM ${set}) THEN ${mapped(col)} ELSE ${col} END`;
    const overrides: Record<Table, Record<string, string>> = {
      suites: {
        id: mapped('id'),
        parent_id: ifNew('parent_id', 'limit_new_suites'),
        name: `left(name, 240) || ' ·limit'`,
      },
      test_cases: {
        id: mapped('id'),
        key_number: `key_number + ${keyOffset}`,
        key: `'L-' || (key_number + ${keyOffset})`,
        title: `left(title, 490) || ' ·limit'`,
        automation_id: `CASE WHEN automation_id IS NULL THEN NULL ELSE left(automation_id, 245) || ' ·limit' END`,
        suite_id: ifNew('suite_id', 'limit_new_suites'),
      },
      run_items: {
        id: mapped('id'),
        test_run_id: `'${limitRunId}'::uuid`,
        test_case_id: ifNew('test_case_id', 'limit_new_cases'),
        suite_id: ifNew('suite_id', 'limit_new_suites'),
      },
      run_item_rows: {
        id: mapped('id'),
        run_item_id: mapped('run_item_id'),
        parent_row_id: `CASE WHEN parent_row_id IS NULL THEN NULL ELSE ${mapped('parent_row_id')} END`,
      },
      run_item_history: {
        id: mapped('id'),
        run_item_id: mapped('run_item_id'),
        run_item_row_id: `CASE WHEN run_item_row_id IS NULL THEN NULL ELSE ${mapped('run_item_row_id')} END`,
      },
    };
    const where: Record<Table, string> = {
      suites: `id IN (SELECT id FROM limit_new_suites)`,
      test_cases: `id IN (SELECT id FROM limit_new_cases)`,
      run_items: `test_run_id = '${runId}'`,
      run_item_rows: `run_item_id IN (SELECT id FROM run_items WHERE test_run_id = '${runId}')`,
      run_item_history: `run_item_id IN (SELECT id FROM run_items WHERE test_run_id = '${runId}')`,
    };
    const dumps: Array<{ table: Table; columns: string[]; chunks: Buffer[]; rows: number }> = [];
    for (const table of TABLES) {
      const { rows: cols } = await client.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER'
          ORDER BY ordinal_position`,
        [table],
      );
      const columns = cols.map((c) => c.column_name);
      const select = columns.map((c) => `${overrides[table][c] ?? `"${c}"`} AS "${c}"`).join(', ');
      // Parents before children within a table too (suites reference their parent).
      const order = table === 'suites' ? ' ORDER BY created_at, id' : '';
      const chunks: Buffer[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          chunks.push(chunk);
          done();
        },
      });
      await pipeline(
        client.query(
          copyTo(`COPY (SELECT ${select} FROM ${table} WHERE ${where[table]}${order}) TO STDOUT`),
        ),
        sink,
      );
      const rows = chunks.reduce((n, c) => n + countLines(c), 0);
      dumps.push({ table, columns, chunks, rows });
    }
    await client.query('DROP TABLE limit_new_cases, limit_new_suites');

    const started = process.hrtime.bigint();
    await client.query('BEGIN');
    try {
      for (const d of dumps) {
        if (d.rows === 0) continue;
        await pipeline(
          Readable.from(d.chunks),
          client.query(
            copyFrom(`COPY ${d.table} (${d.columns.map((c) => `"${c}"`).join(', ')}) FROM STDIN`),
          ),
        );
      }
      await client.query(
        `INSERT INTO project_counters (project_id, name, value) VALUES ($1, 'test_case_key', $2)
         ON CONFLICT (project_id, name) DO UPDATE SET value = EXCLUDED.value`,
        [projectId, lastKey],
      );
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    return {
      ms,
      rows: Object.fromEntries(dumps.map((d) => [d.table, d.rows])),
      bytes: dumps.reduce((n, d) => n + d.chunks.reduce((m, c) => m + c.length, 0), 0),
    };
  } finally {
    await client.end();
  }
}

function countLines(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) n++;
  return n;
}

/** The database's clock: what `created_at` of the rows an import writes is compared with. */
export async function databaseNow(url: string): Promise<Date> {
  const client = new Client({ connectionString: url, application_name: 'tms-bench-import-limit' });
  await client.connect();
  try {
    const { rows } = await client.query<{ now: Date }>('SELECT clock_timestamp() AS now');
    return rows[0].now;
  } finally {
    await client.end();
  }
}
