import { Injectable } from '@nestjs/common';
import {
  KeysetOrder,
  KeysetRequest,
  keysetAfter,
  keysetColumns,
  keysetOrderBy,
} from '../../common/pagination/keyset';
import { likePattern, offsetOf } from '../../common/pagination/page';
import { copyLines, copyRow } from '../../common/persistence/copy-text';
import { Db } from '../../common/persistence/db.service';
import { RISK_LEVEL_RANK, RISK_LEVELS, RiskLevel } from '../components/risk-score';
import type { CoverageDto, ListTestCasesQueryDto, TestCaseDto } from './dto/test-case.dto';
import type { TestCaseStep } from './entities/test-case.entity';

/** A test case as every read answers it (with its suite's and owner's names). */
export interface CaseRow {
  id: string;
  project_id: string;
  key: string;
  title: string;
  description: string | null;
  preconditions: string | null;
  steps: TestCaseStep[];
  priority: TestCaseDto['priority'];
  status: TestCaseDto['status'];
  test_case_type: TestCaseDto['test_case_type'];
  automation_id: string | null;
  suite_id: string | null;
  suite_name: string | null;
  owner_id: string | null;
  owner_name: string | null;
  primary_product_id: string | null;
  tags: string[];
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

/** One row of `test_case_component_coverages`. */
export interface CoverageRow {
  id: string;
  test_case_id: string;
  component_id: string;
  coverage_type: CoverageDto['coverage_type'];
  coverage_strength: CoverageDto['coverage_strength'];
  is_mandatory_for_release: boolean;
  notes: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A coverage to insert, defaults applied. */
export interface NewCoverage {
  id: string;
  component_id: string;
  coverage_type: string;
  coverage_strength: string;
  is_mandatory_for_release: boolean;
  notes: string | null;
}

/** A case created by a JUnit import: automated, active, tagged `auto-imported`. */
export interface ImportedCase {
  id: string;
  key: string;
  key_number: number;
  title: string;
  automation_id: string | null;
  suite_id: string | null;
  preconditions: string | null;
  /** JSON of the steps array. */
  steps: string;
}

/** The tags of a case the import creates. */
export const IMPORTED_TAGS: readonly string[] = ['auto-imported'];

/** A new test case: its fields with defaults applied, its key and its author. */
export interface NewTestCase extends Required<CaseFields> {
  id: string;
  projectId: string;
  key: string;
  keyNumber: number;
  createdBy: string;
}

const CASE_COLUMNS = `tc.id, tc.project_id, tc.key, tc.title, tc.description, tc.preconditions, tc.steps,
       tc.priority, tc.status, tc.test_case_type, tc.automation_id, tc.suite_id, s.name AS suite_name,
       tc.owner_id, u.username AS owner_name, tc.primary_product_id, tc.tags, tc.created_by,
       tc.created_at, tc.updated_at`;

const CASE_FROM = `FROM test_cases tc
  LEFT JOIN suites s ON s.id = tc.suite_id
  LEFT JOIN users u ON u.id = tc.owner_id`;

const CASE_SELECT = `SELECT ${CASE_COLUMNS}
  ${CASE_FROM}`;

/**
 * Reference §6.7: `status` sorts by its label (active < archived < draft) and `priority` by its label
 * with no priority counting as `medium` (critical < high < low < medium).
 */
const PRIORITY_LABEL = `coalesce(tc.priority, 'medium')`;
const STATUS_LABEL = `tc.status`;

const SORTS: Record<ListTestCasesQueryDto['sort_by'], string> = {
  created_at: 'tc.created_at',
  updated_at: 'tc.updated_at',
  key: 'tc.key_number',
  title: 'lower(tc.title)',
  status: STATUS_LABEL,
  priority: PRIORITY_LABEL,
  owner_name: "lower(coalesce(u.username, ''))",
  suite_name: "lower(coalesce(s.name, ''))",
};

/** The join a sort needs to choose a page's ids (the sorts by a joined name). */
const SORT_JOINS: Partial<Record<ListTestCasesQueryDto['sort_by'], string>> = {
  owner_name: 'LEFT JOIN users u ON u.id = tc.owner_id',
  suite_name: 'LEFT JOIN suites s ON s.id = tc.suite_id',
};

/**
 * From this OFFSET on (page 11 of 50), and for every page of a sort by a joined name, a case list
 * page is a deferred join: the page's ids are chosen from the sort keys alone (an index walk, or a
 * sort of narrow rows), and only the page's rows are then read whole and joined. Choosing them
 * from the whole rows made a deep page join and sort every matching case whole: page 399 of 50
 * among 20,000 cases sorted 10 MB on disk, 58–72 ms by each sort, against 15–32 ms; by owner or
 * suite name every page took 27–29 ms against 15–16 ms. Before this offset the plain statement is
 * as fast or faster: it walks the sort's index and skips the deferred one's 50 lookups (pages 1
 * and 2: 1.0–1.4 ms against 1.2–1.9 ms; about even on page 10). bench/README.md fix 65.
 */
const DEFERRED_JOIN_OFFSET = 500;

/**
 * The keyset order of a case list (`cursor`): the sort key then the id. Indexes after project_id:
 * ix_test_cases_project_created, _updated, uq_test_cases_project_key_number, _title, _status_id,
 * _priority_label; `owner_name` and `suite_name` sort by joined rows' names, which no index of
 * test_cases orders.
 */
export function caseKeysetOrder(
  sortBy: ListTestCasesQueryDto['sort_by'],
  order: 'asc' | 'desc',
): KeysetOrder {
  const type =
    sortBy === 'created_at' || sortBy === 'updated_at'
      ? 'timestamptz'
      : sortBy === 'key'
        ? 'int'
        : 'text';
  return {
    keys: [
      { sql: SORTS[sortBy], type },
      { sql: 'tc.id', type: 'uuid' },
    ],
    dir: order === 'asc' ? 'ASC' : 'DESC',
  };
}

/** The fields a write may set, after defaults (create) or from the present keys (PATCH). */
export interface CaseFields {
  title?: string;
  description?: string | null;
  preconditions?: string | null;
  steps?: TestCaseStep[];
  priority?: string | null;
  status?: string;
  test_case_type?: string;
  automation_id?: string | null;
  suite_id?: string | null;
  owner_id?: string | null;
  primary_product_id?: string | null;
  tags?: string[];
}

const COLUMN_OF: Record<keyof CaseFields, string> = {
  title: 'title',
  description: 'description',
  preconditions: 'preconditions',
  steps: 'steps',
  priority: 'priority',
  status: 'status',
  test_case_type: 'test_case_type',
  automation_id: 'automation_id',
  suite_id: 'suite_id',
  owner_id: 'owner_id',
  primary_product_id: 'primary_product_id',
  tags: 'tags',
};

/**
 * Allocates `count` consecutive numbers of a per-project counter (`project_counters`) and returns
 * the first. The upsert takes the counter row's lock until the transaction ends, so concurrent
 * creators serialise, numbers stay contiguous, and a number is never handed out twice (deleting a
 * case never frees one). A function of `Db` because the JUnit import allocates case keys too.
 */
export async function allocateCounter(
  db: Db,
  projectId: string,
  name: string,
  count: number,
): Promise<number> {
  const rows = await db.query<{ value: number }>(
    `INSERT INTO project_counters (project_id, name, value) VALUES ($1, $2, $3)
     ON CONFLICT (project_id, name) DO UPDATE SET value = project_counters.value + EXCLUDED.value
     RETURNING value`,
    [projectId, name, count],
  );
  return rows[0].value - count + 1;
}

/** SQL of test cases (`test_cases`, `test_case_component_coverages`, `project_counters`). */
@Injectable()
export class TestCasesRepository {
  constructor(private readonly db: Db) {}

  /** One page of a project's cases and the number of all that match. */
  async findPage(
    q: ListTestCasesQueryDto,
    keyset?: KeysetRequest,
  ): Promise<{ rows: CaseRow[]; total: number | null }> {
    const params: unknown[] = [q.project_id];
    const p = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    const where = ['tc.project_id = $1'];
    if (q.status?.length) where.push(`tc.status = ANY(${p(q.status)}::text[])`);
    else where.push(`tc.status <> 'archived'`);
    if (q.priority?.length) where.push(`tc.priority = ANY(${p(q.priority)}::text[])`);
    if (q.suite_id?.length) where.push(`tc.suite_id = ANY(${p(q.suite_id)}::uuid[])`);
    if (q.test_case_type?.length)
      where.push(`tc.test_case_type = ANY(${p(q.test_case_type)}::text[])`);
    if (q.product_id?.length) where.push(`tc.primary_product_id = ANY(${p(q.product_id)}::uuid[])`);
    if (q.owner_id?.length) where.push(`tc.owner_id = ANY(${p(q.owner_id)}::uuid[])`);
    if (q.exclude_test_case_id?.length)
      where.push(`NOT (tc.id = ANY(${p(q.exclude_test_case_id)}::uuid[]))`);
    if (q.tag?.length) {
      // Both sides lower-cased by the same SQL function: JavaScript's toLowerCase() follows other
      // rules for some letters (final sigma, dotted I), so a tag could miss its own spelling.
      const tags = q.tag.map((t) => t.trim()).filter((t) => t !== '');
      if (tags.length)
        where.push(`test_cases_lower_tags(tc.tags) && test_cases_lower_tags(${p(tags)}::text[])`);
    }
    if (q.component_id?.length) {
      where.push(
        `EXISTS (SELECT 1 FROM test_case_component_coverages c WHERE c.test_case_id = tc.id AND c.component_id = ANY(${p(q.component_id)}::uuid[]))`,
      );
    }
    if (q.minimum_component_risk_level) {
      const levels = RISK_LEVELS.filter(
        (l) => RISK_LEVEL_RANK[l] >= RISK_LEVEL_RANK[q.minimum_component_risk_level as RiskLevel],
      );
      where.push(
        `EXISTS (SELECT 1 FROM test_case_component_coverages c JOIN components k ON k.id = c.component_id
                  WHERE c.test_case_id = tc.id AND k.risk_level = ANY(${p(levels)}::text[]))`,
      );
    }
    if (q.search) {
      const s = p(likePattern(q.search));
      where.push(
        `(tc.title ILIKE ${s} OR tc.key ILIKE ${s} OR tc.automation_id ILIKE ${s}
          OR EXISTS (SELECT 1 FROM unnest(tc.tags) AS t WHERE t ILIKE ${s}))`,
      );
    }
    const whereSql = where.join(' AND ');
    if (keyset) {
      // A keyset page: a range walk from the cursor's row, no OFFSET and no count.
      const after = keyset.after ? ` AND ${keysetAfter(keyset.order, keyset.after, p)}` : '';
      const rows = await this.db.query<CaseRow>(
        `SELECT ${CASE_COLUMNS}, ${keysetColumns(keyset.order)} ${CASE_FROM}
          WHERE ${whereSql}${after}
          ORDER BY ${keysetOrderBy(keyset.order)}
          LIMIT ${p(keyset.limit)}`,
        params,
      );
      return { rows, total: null };
    }
    const countParams = [...params];
    const dir = q.sort_order === 'asc' ? 'ASC' : 'DESC';
    const order = `${SORTS[q.sort_by]} ${dir}, tc.id ${dir}`;
    const offset = offsetOf(q.page, q.page_size);
    const join = SORT_JOINS[q.sort_by];
    const rows = await this.db.query<CaseRow>(
      join !== undefined || offset >= DEFERRED_JOIN_OFFSET
        ? `WITH page AS (
             SELECT tc.id FROM test_cases tc ${join ?? ''}
              WHERE ${whereSql}
              ORDER BY ${order}
              LIMIT ${p(q.page_size)} OFFSET ${p(offset)}
           )
           SELECT ${CASE_COLUMNS}
             FROM page
             JOIN test_cases tc ON tc.id = page.id
             LEFT JOIN suites s ON s.id = tc.suite_id
             LEFT JOIN users u ON u.id = tc.owner_id
            ORDER BY ${order}`
        : `${CASE_SELECT} WHERE ${whereSql}
            ORDER BY ${order}
            LIMIT ${p(q.page_size)} OFFSET ${p(offset)}`,
      params,
    );
    const total = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM test_cases tc WHERE ${whereSql}`,
      countParams,
    );
    return { rows, total: total[0]?.n ?? 0 };
  }

  /** Distinct tags (case-insensitive; the spelling of the oldest case wins), sorted case-insensitively. */
  async distinctTags(projectId: string): Promise<string[]> {
    const rows = await this.db.query<{ tag: string }>(
      `SELECT (array_agg(t ORDER BY tc.created_at, tc.id))[1] AS tag
         FROM test_cases tc, unnest(tc.tags) AS t
        WHERE tc.project_id = $1 AND btrim(t) <> ''
        GROUP BY lower(t) ORDER BY lower(t)`,
      [projectId],
    );
    return rows.map((r) => r.tag);
  }

  async findById(id: string): Promise<CaseRow | undefined> {
    const rows = await this.db.query<CaseRow>(`${CASE_SELECT} WHERE tc.id = $1`, [id]);
    return rows[0];
  }

  /** Coverages of many cases in one query, by case then creation. */
  async coveragesOf(caseIds: string[]): Promise<CoverageRow[]> {
    return this.db.query<CoverageRow>(
      `SELECT c.id, c.test_case_id, c.component_id, c.coverage_type, c.coverage_strength,
              c.is_mandatory_for_release, c.notes, c.created_at, c.updated_at
         FROM test_case_component_coverages c
        WHERE c.test_case_id = ANY($1::uuid[]) ORDER BY c.test_case_id, c.created_at, c.id`,
      [caseIds],
    );
  }

  /** Allocates `count` consecutive numbers of a project counter; the first. */
  allocateCounter(projectId: string, name: string, count: number): Promise<number> {
    return allocateCounter(this.db, projectId, name, count);
  }

  /** How many numbers a per-project counter has handed out (0 before its first), without a lock. */
  async readCounter(projectId: string, name: string): Promise<number> {
    const rows = await this.db.query<{ value: number }>(
      `SELECT value FROM project_counters WHERE project_id = $1 AND name = $2`,
      [projectId, name],
    );
    return rows[0]?.value ?? 0;
  }

  async insert(c: NewTestCase): Promise<void> {
    await this.db.query(
      `INSERT INTO test_cases (id, project_id, key, key_number, title, description, preconditions, steps, priority,
              status, test_case_type, automation_id, suite_id, owner_id, primary_product_id, tags, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13, $14, $15, $16::text[], $17)`,
      [
        c.id,
        c.projectId,
        c.key,
        c.keyNumber,
        c.title,
        c.description,
        c.preconditions,
        JSON.stringify(c.steps),
        c.priority,
        c.status,
        c.test_case_type,
        c.automation_id,
        c.suite_id,
        c.owner_id,
        c.primary_product_id,
        c.tags,
        c.createdBy,
      ],
    );
  }

  /**
   * Many imported cases in one `COPY` (keys allocated by the caller from the project counter):
   * active, automated, owned and created by the importer, tagged `auto-imported`.
   */
  async insertImported(
    projectId: string,
    userId: string,
    cases: Iterable<ImportedCase>,
  ): Promise<void> {
    await this.db.copyIn(
      `COPY test_cases (id, project_id, key, key_number, title, preconditions, steps, status,
                        test_case_type, automation_id, suite_id, owner_id, tags, created_by)
       FROM STDIN`,
      copyLines(cases, (c) =>
        copyRow([
          c.id,
          projectId,
          c.key,
          c.key_number,
          c.title,
          c.preconditions,
          c.steps,
          'active',
          'automated',
          c.automation_id,
          c.suite_id,
          userId,
          IMPORTED_TAGS,
          userId,
        ]),
      ),
    );
  }

  /**
   * Which of the cases (ids) still exist and are active, each locked `FOR SHARE` (in id order)
   * until the caller's transaction commits: a delete or an archive committed after the ids were
   * read is waited for, then the case is left out (PostgreSQL checks the status again on the locked
   * row), and none can happen before the caller has written what it read them for (an import's
   * results, a plan's run).
   */
  async lockActiveForShare(ids: string[]): Promise<Set<string>> {
    const rows = await this.db.query<{ id: string }>(
      `SELECT id FROM test_cases WHERE id = ANY($1::uuid[]) AND status = 'active' ORDER BY id FOR SHARE`,
      [ids],
    );
    return new Set(rows.map((r) => r.id));
  }

  /** Locks one case; false when there is no such case. */
  async lockForUpdate(id: string): Promise<boolean> {
    const locked = await this.db.query<{ id: string }>(
      `SELECT id FROM test_cases WHERE id = $1 FOR UPDATE`,
      [id],
    );
    return locked.length > 0;
  }

  /** Sets the present fields and `updated_at` (also when no field is present). */
  async update(id: string, fields: CaseFields): Promise<void> {
    const keys = Object.keys(fields) as Array<keyof CaseFields>;
    const params: unknown[] = [id];
    const sets = keys.map((k) => {
      const v = fields[k];
      params.push(k === 'steps' ? JSON.stringify(v) : v);
      const cast = k === 'steps' ? '::jsonb' : k === 'tags' ? '::text[]' : '';
      return `${COLUMN_OF[k]} = $${params.length}${cast}`;
    });
    sets.push('updated_at = now()');
    await this.db.query(`UPDATE test_cases SET ${sets.join(', ')} WHERE id = $1`, params);
  }

  /** Hard delete; coverages and bindings cascade. */
  async delete(id: string): Promise<void> {
    await this.db.query(`DELETE FROM test_cases WHERE id = $1`, [id]);
  }

  async deleteCoverages(caseId: string): Promise<void> {
    await this.db.query(`DELETE FROM test_case_component_coverages WHERE test_case_id = $1`, [
      caseId,
    ]);
  }

  /** One multi-row insert (unnest) for all coverages of a case. */
  async insertCoverages(
    projectId: string,
    caseId: string,
    coverages: NewCoverage[],
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO test_case_component_coverages (id, project_id, test_case_id, component_id, coverage_type,
              coverage_strength, is_mandatory_for_release, notes)
       SELECT u.id, $1, $2, u.component_id, u.coverage_type, u.coverage_strength, u.mandatory, u.notes
         FROM unnest($3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::boolean[], $8::text[])
              AS u(id, component_id, coverage_type, coverage_strength, mandatory, notes)`,
      [
        projectId,
        caseId,
        coverages.map((c) => c.id),
        coverages.map((c) => c.component_id),
        coverages.map((c) => c.coverage_type),
        coverages.map((c) => c.coverage_strength),
        coverages.map((c) => c.is_mandatory_for_release),
        coverages.map((c) => c.notes),
      ],
    );
  }

  /** `FOR KEY SHARE` on a suite a case is put in; its project, or undefined when unknown. */
  async lockSuiteKeyShare(suiteId: string): Promise<string | undefined> {
    const rows = await this.db.query<{ project_id: string }>(
      `SELECT project_id FROM suites WHERE id = $1 FOR KEY SHARE`,
      [suiteId],
    );
    return rows[0]?.project_id;
  }

  /** `FOR KEY SHARE` on a product a case points to; its project, or undefined when unknown. */
  async lockProductKeyShare(productId: string): Promise<string | undefined> {
    const rows = await this.db.query<{ project_id: string }>(
      `SELECT project_id FROM products WHERE id = $1 FOR KEY SHARE`,
      [productId],
    );
    return rows[0]?.project_id;
  }

  /** `FOR KEY SHARE` on those of the components that belong to the project; their ids. */
  async lockProjectComponentsKeyShare(
    projectId: string,
    componentIds: string[],
  ): Promise<string[]> {
    const found = await this.db.query<{ id: string }>(
      `SELECT id FROM components WHERE project_id = $1 AND id = ANY($2::uuid[]) FOR KEY SHARE`,
      [projectId, componentIds],
    );
    return found.map((r) => r.id);
  }
}
