import { Injectable } from '@nestjs/common';
import { Db, SnapshotRead } from '../../common/persistence/db.service';
import { STATUS_LETTERS } from './case-stats';
import { CHANGE_CLASSES, changeClassSql, FAILING_STATUSES, PASSING_STATUSES } from './change-class';

/**
 * Every statement of the insights reads (issue #17 §1, §3, §4). Read-only SQL over the tables of
 * the runs, run items, environments and datasets modules; a constant number of statements per
 * request, nothing per item.
 */

/** A run as the comparison answers it (plus what it needs to find the base and the revisions). */
export interface RunRow {
  id: string;
  project_id: string;
  name: string;
  build: string | null;
  status: string;
  environment_id: string | null;
  environment_revision_id: string | null;
  environment_revision_number: number | null;
  created_at: Date;
}

export interface ComparisonRow {
  added: number;
  removed: number;
  newly_failing: number;
  fixed: number;
  still_failing: number;
  unchanged: number;
  changed: number;
  total: number;
  items: Array<{
    test_case_id: string;
    title: string;
    change: string;
    base_status: string | null;
    status: string | null;
  }>;
}

export interface RevisionRow {
  id: string;
  revision_number: number;
  snapshot_hash: string;
  full_snapshot: Record<string, unknown>;
}

export interface DatasetDriftRow {
  dataset_id: string;
  name: string;
  from_revision: number | null;
  to_revision: number | null;
}

export interface HistoryRow {
  total: number;
  items: Array<{
    run_id: string;
    run_name: string;
    build: string | null;
    environment_id: string | null;
    environment_revision_number: number | null;
    status: string;
    finished_at: string | null;
    run_created_at: string;
  }>;
  stats_window: Array<{ run_id: string; status: string; flaky: boolean }>;
}

/** A listed case's window for the flaky list: one letter per run, newest first ({@link flakySql}). */
export interface FlakyWindowRow {
  test_case_id: string;
  title: string;
  w: string;
}

/** A case's window with its run ids ({@link flakyRecentSql}). */
export interface FlakyRecentRow {
  test_case_id: string;
  w: string;
  r: string;
}

interface Versioned<T> {
  version: string;
  windows: T[] | null;
}

const quoted = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/**
 * A row an import marked flaky: the JUnit/results import writes `Flaky: passed after <n> failed
 * attempt(s) …` at the start of the comment of a testcase that passed after failed attempts
 * (`describeAttempts` in imports/junit/dialects.ts). `ix_run_item_rows_flaky` has this predicate.
 */
const FLAKY_ROW = `w.status = 'passed' AND w.comment LIKE 'Flaky: passed after %'`;

const RUN_COLUMNS = `r.id, r.project_id, r.name, r.build, r.status, r.environment_id,
  r.environment_revision_id, r.environment_revision_number, r.created_at`;

const RUNS_BY_ID_SQL = `SELECT ${RUN_COLUMNS} FROM test_runs r WHERE r.id = ANY($1::uuid[])`;

/**
 * The run, then the latest run of its project and environment created before it (if any): one
 * backward step of `ix_test_runs_project_environment_created` from the run's (created_at, id),
 * in the branch for a run with an environment or in the one for a run without (a LATERAL, so the
 * run's values are index bounds, and the branch that does not apply is never run; the ORDER BY
 * names every index column, so that NULL environments are walked in the index's order too).
 */
const RUN_AND_PREVIOUS_SQL = `
  WITH cur AS (SELECT ${RUN_COLUMNS} FROM test_runs r WHERE r.id = $1)
  SELECT * FROM cur
  UNION ALL
  SELECT p.* FROM cur CROSS JOIN LATERAL (
    SELECT ${RUN_COLUMNS} FROM test_runs r
     WHERE r.project_id = cur.project_id AND r.environment_id = cur.environment_id
       AND (r.created_at, r.id) < (cur.created_at, cur.id)
     ORDER BY r.project_id DESC, r.environment_id DESC, r.created_at DESC, r.id DESC
     LIMIT 1) p
   WHERE cur.environment_id IS NOT NULL
  UNION ALL
  SELECT p.* FROM cur CROSS JOIN LATERAL (
    SELECT ${RUN_COLUMNS} FROM test_runs r
     WHERE r.project_id = cur.project_id AND r.environment_id IS NULL
       AND (r.created_at, r.id) < (cur.created_at, cur.id)
     ORDER BY r.project_id DESC, r.environment_id DESC, r.created_at DESC, r.id DESC
     LIMIT 1) p
   WHERE cur.environment_id IS NULL`;

/**
 * The classes of both runs' cases in one statement: a FULL JOIN of the two runs' items on the test
 * case id (the unique (test_run_id, test_case_id) index reads each run), the counts per class and
 * one page of items. $1 this run, $2 the base, $3 the classes listed, $4 limit, $5 offset.
 *
 * The items are ordered by class, then title: from the counts, the statement knows where each
 * listed class starts in that order (`spans`), so it looks up titles (test_cases' primary key)
 * and sorts only the rows of the classes the page overlaps, skipping the rows of the classes
 * before it (`OFFSET` less their count). A first page of a large comparison reads the titles of
 * its first class(es) only, not of every case of both runs.
 */
export const COMPARE_SQL = `
  WITH cur AS (
    SELECT test_case_id, status, test_case_title FROM run_items
     WHERE test_run_id = $1 AND test_case_id IS NOT NULL
  ), base AS (
    SELECT test_case_id, status, test_case_title FROM run_items
     WHERE test_run_id = $2 AND test_case_id IS NOT NULL
  ), j AS MATERIALIZED (
    SELECT coalesce(cur.test_case_id, base.test_case_id) AS test_case_id,
           coalesce(cur.test_case_title, base.test_case_title) AS snapshot_title,
           base.status AS base_status, cur.status AS status,
           ${changeClassSql('base.status', 'cur.status')} AS change
      FROM cur FULL JOIN base ON base.test_case_id = cur.test_case_id
  ), per_class AS MATERIALIZED (
    SELECT change, count(*)::int AS n FROM j GROUP BY change
  ), spans AS MATERIALIZED (
    SELECT k.change, k.rank,
           coalesce(sum(p.n) OVER (ORDER BY k.rank ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
                    0)::int AS start,
           coalesce(p.n, 0) AS n
      FROM unnest(ARRAY[${quoted(CHANGE_CLASSES)}]::text[]) WITH ORDINALITY k(change, rank)
      LEFT JOIN per_class p ON p.change = k.change
     WHERE k.change = ANY($3::text[])
  ), wanted AS MATERIALIZED (
    SELECT change, rank, start FROM spans
     WHERE n > 0 AND start < $5::bigint + $4::bigint AND start + n > $5::bigint
  ), page AS (
    SELECT j.test_case_id, coalesce(c.title, j.snapshot_title, '') AS title, j.change,
           j.base_status, j.status, w.rank
      FROM j JOIN wanted w ON w.change = j.change
      LEFT JOIN test_cases c ON c.id = j.test_case_id
     ORDER BY w.rank, lower(coalesce(c.title, j.snapshot_title, '')), j.test_case_id
     LIMIT $4 OFFSET $5::bigint - (SELECT coalesce(min(start), 0) FROM wanted)
  )
  SELECT ${CHANGE_CLASSES.map((c) => `coalesce((SELECT n FROM per_class WHERE change = '${c}'), 0) AS ${c}`).join(',\n         ')},
         (SELECT coalesce(sum(n), 0)::int FROM spans) AS total,
         (SELECT coalesce(json_agg(json_build_object(
                   'test_case_id', p.test_case_id, 'title', p.title, 'change', p.change,
                   'base_status', p.base_status, 'status', p.status)
                 ORDER BY p.rank, lower(p.title), p.test_case_id), '[]'::json)
            FROM page p) AS items`;

/**
 * {@link COMPARE_SQL} with the version of the project's results ($6) read in the same snapshot,
 * the comparison only when the version is not `$7` (the version of the answer the caller holds):
 * as {@link flakySql}, an init plan is evaluated only when used.
 */
const COMPARE_VERSIONED_SQL = `
  SELECT v.version,
         CASE WHEN v.version IS DISTINCT FROM $7::text
              THEN (SELECT row_to_json(x) FROM (${COMPARE_SQL}) x) END AS result
    FROM (${resultVersionSql('$6')}) v`;

const REVISIONS_SQL = `
  SELECT id, revision_number, snapshot_hash, full_snapshot
    FROM environment_revisions WHERE id = ANY($1::uuid[])`;

/**
 * Datasets whose highest revision used differs between the runs: the revisions each run case used
 * are in its dataset snapshot (`{"bindings": [{dataset_id, revision_number, …}]}`, raised by a rerun
 * on the latest revisions). Run cases whose test case was deleted are left out, as in the
 * comparison. $1 this run, $2 the base, $3 the project.
 */
const DATASET_DRIFT_SQL = `
  WITH used AS (
    SELECT ri.test_run_id, b->>'dataset_id' AS dataset_id, max((b->>'revision_number')::int) AS rev
      FROM run_items ri
     CROSS JOIN LATERAL jsonb_array_elements(
             CASE WHEN jsonb_typeof(ri.dataset_snapshot->'bindings') = 'array'
                  THEN ri.dataset_snapshot->'bindings' ELSE '[]'::jsonb END) b
     WHERE ri.test_run_id = ANY(ARRAY[$1, $2]::uuid[])
       AND ri.test_case_id IS NOT NULL -- as the comparison: a deleted case's run cases are left out
     GROUP BY 1, 2
  ), pairs AS (
    SELECT dataset_id,
           max(rev) FILTER (WHERE test_run_id = $2) AS from_revision,
           max(rev) FILTER (WHERE test_run_id = $1) AS to_revision
      FROM used GROUP BY dataset_id
  )
  SELECT d.id AS dataset_id, d.name, p.from_revision, p.to_revision
    FROM pairs p JOIN datasets d ON d.id::text = p.dataset_id AND d.project_id = $3
   WHERE p.from_revision IS DISTINCT FROM p.to_revision
   ORDER BY lower(d.name), d.id`;

/**
 * A case's history: the total, one page and the stats window in one statement, both newest run
 * first by run id (uuidv7: creation order), the order of the flaky windows too. (The page was
 * ordered by `created_at`, the run's transaction start: a create that waited on a lock got an
 * earlier `created_at` than a run created meanwhile with a smaller id, and the page then disagreed
 * with its own stats.) $1 case, $2 limit, $3 offset, $4 window, then the filters.
 */
function historySql(environment: boolean, build: boolean): string {
  let n = 4;
  const filters = [
    environment ? ` AND r.environment_id = $${++n}` : '',
    build ? ` AND r.build = $${++n}` : '',
  ].join('');
  return `
  WITH f AS (
    SELECT ri.id, ri.test_run_id, ri.status, ri.last_executed_at, r.name, r.build,
           r.environment_id, r.environment_revision_number, r.created_at
      FROM run_items ri JOIN test_runs r ON r.id = ri.test_run_id
     WHERE ri.test_case_id = $1${filters}
  ), page AS (
    SELECT * FROM f ORDER BY test_run_id DESC LIMIT $2 OFFSET $3
  ), win AS (
    SELECT id, test_run_id, status FROM f ORDER BY test_run_id DESC LIMIT $4
  )
  SELECT (SELECT count(*) FROM f)::int AS total,
         (SELECT coalesce(json_agg(json_build_object(
                   'run_id', p.test_run_id, 'run_name', p.name, 'build', p.build,
                   'environment_id', p.environment_id,
                   'environment_revision_number', p.environment_revision_number,
                   'status', p.status,
                   'finished_at', coalesce(
                      (SELECT max(w.finished_at) FROM run_item_rows w WHERE w.run_item_id = p.id),
                      p.last_executed_at),
                   'run_created_at', p.created_at)
                 ORDER BY p.test_run_id DESC), '[]'::json)
            FROM page p) AS items,
         (SELECT coalesce(json_agg(json_build_object(
                   'run_id', x.test_run_id, 'status', x.status,
                   'flaky', EXISTS (SELECT 1 FROM run_item_rows w
                                     WHERE w.run_item_id = x.id AND ${FLAKY_ROW}))
                 ORDER BY x.test_run_id DESC), '[]'::json)
            FROM win x) AS stats_window`;
}

const LETTER_OF_STATUS = `CASE ri.status ${Object.entries(STATUS_LETTERS)
  .map(([status, letter]) => `WHEN '${status}' THEN '${letter}'`)
  .join(' ')} END`;

/** The letters of some statuses, both cases (for a regular expression's bracket). */
const lettersOf = (statuses: readonly string[]) =>
  statuses.map((st) => STATUS_LETTERS[st] + STATUS_LETTERS[st].toUpperCase()).join('');
const OTHER_LETTERS = lettersOf(
  Object.keys(STATUS_LETTERS).filter(
    (st) => !([...PASSING_STATUSES, ...FAILING_STATUSES] as string[]).includes(st),
  ),
);

/** Letters of passing results become P, of failing ones F; the others are dropped (no counterpart). */
const PASS_FAIL_FROM = lettersOf([...PASSING_STATUSES, ...FAILING_STATUSES]) + OTHER_LETTERS;
const PASS_FAIL_TO = `${'P'.repeat(2 * PASSING_STATUSES.length)}${'F'.repeat(2 * FAILING_STATUSES.length)}`;
const UPPER_LETTERS = Object.values(STATUS_LETTERS)
  .map((l) => l.toUpperCase())
  .join('');

/**
 * `isFlaky` (case-stats.ts) over a window's letters `w` and their pass-or-fail letters `pf`: at
 * least `min` pass-or-fail results, and a flip (a passing and a failing result both in the
 * window) or a result marked flaky (upper case). Plain string functions: regular expressions over
 * every case's letters cost more.
 */
function flakyLettersSql(w: string, pf: string, min: string): string {
  return `length(${pf}) >= ${min}
         AND ((strpos(${pf}, 'P') > 0 AND strpos(${pf}, 'F') > 0)
              OR length(translate(${w}, '${UPPER_LETTERS}', '')) < length(${w}))`;
}

/**
 * A case's window (`c.id`), newest run first (run ids are uuidv7: creation order), at most `$2`
 * results: a walk of `ix_run_items_project_case_run` (project, case, run id descending) that stops
 * after `$2`, so the cost follows cases × window, not the project's whole history. With an
 * environment (`env`, a parameter) the window is taken over that environment's runs only.
 */
function windowSql(env: string | null): string {
  return env !== null
    ? `SELECT ri.id, ri.status, ri.test_run_id
         FROM run_items ri JOIN test_runs r ON r.id = ri.test_run_id
        WHERE ri.project_id = $1 AND ri.test_case_id = c.id AND r.environment_id = ${env}
        ORDER BY ri.test_run_id DESC LIMIT $2`
    : `SELECT ri.id, ri.status, ri.test_run_id
         FROM run_items ri
        WHERE ri.project_id = $1 AND ri.test_case_id = c.id
        ORDER BY ri.test_run_id DESC LIMIT $2`;
}

/**
 * The flaky list's windows: per test case of the project, its window ({@link windowSql}) as `w`,
 * one letter per run ({@link STATUS_LETTERS}), newest first, upper case when the result has a row
 * an import marked flaky (the project's flaky rows are read once, through
 * `ix_run_item_rows_flaky`). Only the windows that `isFlaky` lists with `$4` min_runs are
 * answered (about one case in five at bench scale), with their case's title; the stats and the
 * ranking are the pure rules' ({@link statsFromLetters}, {@link rankFlaky}). The run ids of a
 * window are not read here: only the cases of the page answered need them
 * ({@link flakyRecentSql}), and reading them for every listed case was a sixth of this
 * statement's time and most of what the service parsed (full bench scale: 2,660 windows of 30).
 *
 * Shape (full bench scale, 20,000 cases, 101,000 results read): the window is a scalar subquery
 * per case (an aggregate under a `LATERAL` cost more per case), the letters one `string_agg`, the
 * filter on the letters (`pf` keeps the pass-or-fail results as P and F), and the titles are read
 * for the listed cases only, by primary key.
 *
 * One statement, one snapshot: `version` is the project's result version
 * ({@link resultVersionSql}) and `windows` (a JSON array) is read only when the version differs
 * from `$3`, the version of the answer the caller already holds (NULL: none). An uncorrelated
 * scalar subquery is an init plan, evaluated when first used: not at all when the `CASE` does not
 * take its branch. With an environment, `$5`.
 */
export function flakySql(environment: boolean): string {
  return `
  SELECT v.version,
         CASE WHEN v.version IS DISTINCT FROM $3::text THEN (
           WITH flaky AS MATERIALIZED (
             SELECT w.run_item_id FROM run_item_rows w WHERE w.project_id = $1 AND ${FLAKY_ROW}
           )
           SELECT coalesce(json_agg(json_build_object(
                    'test_case_id', s.id,
                    'title', (SELECT t.title FROM test_cases t WHERE t.id = s.id),
                    'w', s.w)), '[]'::json)
             FROM (
               SELECT s.id, s.w, translate(s.w, '${PASS_FAIL_FROM}', '${PASS_FAIL_TO}') AS pf
                 FROM (
                   SELECT c.id,
                          (SELECT string_agg(CASE WHEN ri.id IN (SELECT run_item_id FROM flaky)
                                                  THEN upper(${LETTER_OF_STATUS})
                                                  ELSE ${LETTER_OF_STATUS} END,
                                             '' ORDER BY ri.test_run_id DESC)
                             FROM (${windowSql(environment ? '$5' : null)}) ri) AS w
                     FROM test_cases c
                    WHERE c.project_id = $1
                   OFFSET 0 -- one window per case: the filters below must not recompute it
                 ) s
                WHERE length(s.w) >= $4::int
               OFFSET 0
             ) s
            WHERE ${flakyLettersSql('s.w', 's.pf', '$4::int')}
         ) END AS windows
    FROM (${resultVersionSql('$1')}) v`;
}

/**
 * The windows of some cases (`$4`, the page answered) with their run ids, when the project's
 * result version is `$3` (else `windows` is NULL: the ranking the page was cut from is not the
 * current one). `w` as in {@link flakySql} but without the flaky mark, `r` the window's run ids
 * in the same order: their 16 bytes each, in base64 (the line breaks `encode` puts every 76
 * characters are left in; the decoder skips them). With an environment, `$5`.
 */
export function flakyRecentSql(environment: boolean): string {
  return `
  SELECT v.version,
         CASE WHEN v.version = $3::text THEN (
           SELECT coalesce(json_agg(json_build_object(
                    'test_case_id', c.id, 'w', s.w, 'r', encode(s.r, 'base64'))), '[]'::json)
             FROM unnest($4::uuid[]) c(id)
             CROSS JOIN LATERAL (
               SELECT coalesce(string_agg(${LETTER_OF_STATUS}, '' ORDER BY ri.test_run_id DESC), '')
                        AS w,
                      coalesce(string_agg(uuid_send(ri.test_run_id), ''::bytea
                                          ORDER BY ri.test_run_id DESC), ''::bytea) AS r
                 FROM (${windowSql(environment ? '$5' : null)}) ri
             ) s
         ) END AS windows
    FROM (${resultVersionSql('$1')}) v`;
}

/**
 * The version of the results of the project in parameter `project`: the number of committed transactions that changed
 * what the insights read (see the ProjectResultVersions migration), as text.
 */
function resultVersionSql(project: string): string {
  return `SELECT coalesce(sum(changes), 0)::text AS version
    FROM project_result_changes WHERE project_id = ${project}`;
}

const HISTORY_SQL = {
  none: historySql(false, false),
  env: historySql(true, false),
  build: historySql(false, true),
  both: historySql(true, true),
};
const FLAKY_SQL = { all: flakySql(false), env: flakySql(true) };
const FLAKY_RECENT_SQL = { all: flakyRecentSql(false), env: flakyRecentSql(true) };

@Injectable()
export class InsightsRepository {
  constructor(private readonly db: Db) {}

  runsById(ids: string[]): Promise<RunRow[]> {
    return this.db.query<RunRow>(RUNS_BY_ID_SQL, [ids]);
  }

  /** The run (first) and the previous run of its project and environment (second, if any). */
  runAndPrevious(runId: string): Promise<RunRow[]> {
    return this.db.query<RunRow>(RUN_AND_PREVIOUS_SQL, [runId]);
  }

  /**
   * The project's result version and, when it is not `knownVersion`, the comparison
   * ({@link COMPARE_VERSIONED_SQL}): one statement.
   */
  async compare(
    projectId: string,
    runId: string,
    baseId: string,
    changes: readonly string[],
    limit: number,
    offset: number,
    knownVersion: string | null,
  ): Promise<{ version: string; result: ComparisonRow | null }> {
    // Prepared: planning the whole text took ten times a version-only read (3 ms against 0.2).
    const [row] = await this.db.prepared<{ version: string; result: ComparisonRow | null }>(
      'insights_compare',
      COMPARE_VERSIONED_SQL,
      [runId, baseId, changes, limit, offset, projectId, knownVersion],
    );
    return row;
  }

  revisions(ids: string[]): Promise<RevisionRow[]> {
    return ids.length === 0
      ? Promise.resolve([])
      : this.db.query<RevisionRow>(REVISIONS_SQL, [ids]);
  }

  datasetDrift(runId: string, baseId: string, projectId: string): Promise<DatasetDriftRow[]> {
    return this.db.query<DatasetDriftRow>(DATASET_DRIFT_SQL, [runId, baseId, projectId]);
  }

  async history(
    caseId: string,
    f: { environment_id?: string; build?: string },
    limit: number,
    offset: number,
    window: number,
  ): Promise<HistoryRow> {
    const params: unknown[] = [caseId, limit, offset, window];
    if (f.environment_id !== undefined) params.push(f.environment_id);
    if (f.build !== undefined) params.push(f.build);
    const sql =
      f.environment_id !== undefined
        ? f.build !== undefined
          ? HISTORY_SQL.both
          : HISTORY_SQL.env
        : f.build !== undefined
          ? HISTORY_SQL.build
          : HISTORY_SQL.none;
    const [row] = await this.db.query<HistoryRow>(sql, params);
    return row;
  }

  /**
   * The project's result version and, when it is not `knownVersion`, the listed cases' windows
   * ({@link flakySql}): one statement.
   */
  async flakyWindows(
    projectId: string,
    window: number,
    minRuns: number,
    environmentId: string | undefined,
    knownVersion: string | null,
    read: SnapshotRead = (name, sql, params) => this.db.prepared(name, sql, params),
  ): Promise<Versioned<FlakyWindowRow>> {
    // Prepared: most reads are a version lookup (planning the whole text took longer than that).
    const params: unknown[] = [projectId, window, knownVersion, minRuns];
    const [row] =
      environmentId === undefined
        ? await read<Versioned<FlakyWindowRow>>('insights_flaky', FLAKY_SQL.all, params)
        : await read<Versioned<FlakyWindowRow>>('insights_flaky_environment', FLAKY_SQL.env, [
            ...params,
            environmentId,
          ]);
    return row;
  }

  /**
   * The project's result version and, when it is `version`, the windows of `caseIds` with their
   * run ids ({@link flakyRecentSql}): one statement.
   */
  async flakyRecent(
    projectId: string,
    window: number,
    environmentId: string | undefined,
    version: string,
    caseIds: readonly string[],
    read: SnapshotRead = (name, sql, params) => this.db.prepared(name, sql, params),
  ): Promise<Versioned<FlakyRecentRow>> {
    const params: unknown[] = [projectId, window, version, caseIds];
    const [row] =
      environmentId === undefined
        ? await read<Versioned<FlakyRecentRow>>(
            'insights_flaky_recent',
            FLAKY_RECENT_SQL.all,
            params,
          )
        : await read<Versioned<FlakyRecentRow>>(
            'insights_flaky_recent_environment',
            FLAKY_RECENT_SQL.env,
            [...params, environmentId],
          );
    return row;
  }

  /**
   * `fn` with reads that all see one snapshot ({@link Db.readSnapshot}): a ranking and the run ids
   * of its page read apart still agree.
   */
  snapshot<T>(fn: (read: SnapshotRead) => Promise<T>): Promise<T> {
    return this.db.readSnapshot(fn);
  }
}
