import { Injectable } from '@nestjs/common';
import { likePattern, offsetOf } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import type { ListSuitesQueryDto } from './dto/suite.dto';

/** A suite as every read answers it: the row plus the counts of its cases. */
export interface SuiteRow {
  id: string;
  project_id: string;
  name: string;
  parent_id: string | null;
  description: string | null;
  position: number;
  test_cases_count: number;
  active_test_cases_count: number;
  created_at: Date;
  updated_at: Date;
}

export interface NewSuite {
  id: string;
  projectId: string;
  parentId: string | null;
  name: string;
  description: string | null;
  position: number;
}

/** A suite created by a JUnit import (ids chosen by the import; parents listed before children). */
export interface SuiteTreeInsert {
  id: string;
  parent_id: string | null;
  name: string;
}

/** The columns a PATCH may set; absent keys keep their value. */
export interface SuiteChanges {
  name?: string;
  parent_id?: string | null;
  description?: string | null;
  position?: number;
}

const SUITE_SELECT = `SELECT s.id, s.project_id, s.name, s.parent_id, s.description, s.position,
       coalesce(c.total, 0)::int AS test_cases_count, coalesce(c.active, 0)::int AS active_test_cases_count,
       s.created_at, s.updated_at
  FROM suites s
  LEFT JOIN LATERAL (
    SELECT count(*) FILTER (WHERE tc.status <> 'archived') AS total,
           count(*) FILTER (WHERE tc.status = 'active') AS active
      FROM test_cases tc WHERE tc.suite_id = s.id
  ) c ON true`;

const SORTS: Record<ListSuitesQueryDto['sort_by'], { expr: string; defaultOrder: 'asc' | 'desc' }> =
  {
    created_at: { expr: 's.created_at', defaultOrder: 'desc' },
    updated_at: { expr: 's.updated_at', defaultOrder: 'desc' },
    name: { expr: 'lower(s.name)', defaultOrder: 'asc' },
    position: { expr: 's.position', defaultOrder: 'asc' },
  };

/** Deeper chains than this cannot exist (4 levels); the walk stops here even on corrupt data. */
const WALK_LIMIT = 16;

/**
 * Before suite $1 is deleted, every test plan that includes it (and no suite above it, which keeps
 * its content in scope anyway) keeps the same cases: the suite's link is followed by links to its
 * child suites (in its place, in tree order; the plan's later suites shift down), and its own test
 * cases become explicit cases of the plan (after the plan's explicit cases, in key order). Links
 * the plan already has are kept as they are. The plans' `updated_at` changes. Without this the
 * link went with the suite (ON DELETE CASCADE) and the plan silently lost the suite's cases.
 */
const KEEP_IN_TEST_PLANS_SQL = `
  WITH RECURSIVE above AS (
    SELECT parent_id AS id FROM suites WHERE id = $1 AND parent_id IS NOT NULL
    UNION
    SELECT s.parent_id FROM suites s JOIN above a ON s.id = a.id WHERE s.parent_id IS NOT NULL
  ), plans AS (
    SELECT ps.test_plan_id, ps.project_id, ps.position FROM test_plan_suites ps
     WHERE ps.suite_id = $1
       AND NOT EXISTS (SELECT 1 FROM test_plan_suites o JOIN above a ON a.id = o.suite_id
                        WHERE o.test_plan_id = ps.test_plan_id)
  ), kids AS (
    SELECT p.test_plan_id, p.project_id, p.position, s.id,
           row_number() OVER (PARTITION BY p.test_plan_id ORDER BY s.position, lower(s.name), s.id) AS n
      FROM plans p JOIN suites s ON s.parent_id = $1
     WHERE NOT EXISTS (SELECT 1 FROM test_plan_suites o
                        WHERE o.test_plan_id = p.test_plan_id AND o.suite_id = s.id)
  ), shifted AS (
    UPDATE test_plan_suites ps SET position = ps.position + k.added
      FROM plans p JOIN (SELECT test_plan_id, count(*)::int AS added FROM kids GROUP BY test_plan_id) k
           USING (test_plan_id)
     WHERE ps.test_plan_id = p.test_plan_id AND ps.position > p.position
  ), linked AS (
    INSERT INTO test_plan_suites (test_plan_id, suite_id, project_id, position)
    SELECT test_plan_id, id, project_id, position + n FROM kids
  ), listed AS (
    INSERT INTO test_plan_cases (test_plan_id, test_case_id, project_id, position)
    SELECT p.test_plan_id, tc.id, p.project_id,
           coalesce((SELECT max(pc.position) FROM test_plan_cases pc
                      WHERE pc.test_plan_id = p.test_plan_id), 0)
             + row_number() OVER (PARTITION BY p.test_plan_id ORDER BY tc.key_number, tc.id)
      FROM plans p JOIN test_cases tc ON tc.suite_id = $1 AND tc.project_id = p.project_id
     WHERE NOT EXISTS (SELECT 1 FROM test_plan_cases pc
                        WHERE pc.test_plan_id = p.test_plan_id AND pc.test_case_id = tc.id)
  )
  UPDATE test_plans SET updated_at = now() WHERE id IN (SELECT test_plan_id FROM plans)`;

/** SQL of the suite tree (`suites`). */
@Injectable()
export class SuitesRepository {
  constructor(private readonly db: Db) {}

  /** One page of a project's suites and the number of all that match. */
  async findPage(q: ListSuitesQueryDto): Promise<{ rows: SuiteRow[]; total: number }> {
    const params: unknown[] = [q.project_id];
    const p = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    const where = ['s.project_id = $1'];
    if (q.parent_id) where.push(`s.parent_id = ${p(q.parent_id)}`);
    if (q.root_only) where.push('s.parent_id IS NULL');
    if (q.search) where.push(`s.name ILIKE ${p(likePattern(q.search))}`);
    const whereSql = where.join(' AND ');
    const countParams = [...params];
    const sort = SORTS[q.sort_by];
    const dir = (q.sort_order ?? sort.defaultOrder) === 'asc' ? 'ASC' : 'DESC';
    const rows = await this.db.query<SuiteRow>(
      `${SUITE_SELECT} WHERE ${whereSql} ORDER BY ${sort.expr} ${dir}, s.id ${dir}
        LIMIT ${p(q.page_size)} OFFSET ${p(offsetOf(q.page, q.page_size))}`,
      params,
    );
    const total = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM suites s WHERE ${whereSql}`,
      countParams,
    );
    return { rows, total: total[0]?.n ?? 0 };
  }

  async findById(id: string): Promise<SuiteRow | undefined> {
    const rows = await this.db.query<SuiteRow>(`${SUITE_SELECT} WHERE s.id = $1`, [id]);
    return rows[0];
  }

  /** `FOR SHARE` on one suite (a parent that must not move or vanish until the transaction ends). */
  async lockForShare(id: string): Promise<void> {
    await this.db.query(`SELECT 1 FROM suites WHERE id = $1 FOR SHARE`, [id]);
  }

  /** Locks every suite of the project, in id order (moves serialise and cannot build a cycle). */
  async lockAllOfProject(projectId: string): Promise<void> {
    await this.db.query(`SELECT id FROM suites WHERE project_id = $1 ORDER BY id FOR UPDATE`, [
      projectId,
    ]);
  }

  /**
   * Locks a suite about to be deleted with every suite its deletion writes or checks: its parent
   * (the new parent of its content) and its child suites, in id order. Deleting a suite and its
   * parent at once then queue instead of deadlocking (each needs the other's rows: the parent's
   * delete moves this suite, this one's moves its children under the parent). Returns the suite's
   * parent, or undefined when there is no such suite. Should the parent change while waiting (it
   * was deleted, its content moved up), the new parent is locked as well.
   */
  async lockForDelete(id: string): Promise<{ parent_id: string | null } | undefined> {
    await this.db.query(
      `SELECT id FROM suites
        WHERE id IN (SELECT $1::uuid
                     UNION SELECT parent_id FROM suites WHERE id = $1
                     UNION SELECT id FROM suites WHERE parent_id = $1)
        ORDER BY id FOR UPDATE`,
      [id],
    );
    for (let locked: string | null = null; ; ) {
      const rows = await this.db.query<{ parent_id: string | null }>(
        `SELECT parent_id FROM suites WHERE id = $1`,
        [id],
      );
      const parent = rows[0]?.parent_id ?? null;
      if (!rows[0] || parent === null || parent === locked) return rows[0];
      await this.db.query(`SELECT 1 FROM suites WHERE id = $1 FOR UPDATE`, [parent]);
      locked = parent;
    }
  }

  async insert(s: NewSuite): Promise<void> {
    await this.db.query(
      `INSERT INTO suites (id, project_id, parent_id, name, description, position) VALUES ($1, $2, $3, $4, $5, $6)`,
      [s.id, s.projectId, s.parentId, s.name, s.description, s.position],
    );
  }

  /** One INSERT for many suites (parents and children together: FKs are checked per statement). */
  async insertTree(projectId: string, suites: SuiteTreeInsert[]): Promise<void> {
    if (suites.length === 0) return;
    await this.db.query(
      `INSERT INTO suites (id, project_id, parent_id, name)
       SELECT u.id, $1, u.parent_id, u.name
         FROM unnest($2::uuid[], $3::uuid[], $4::text[]) AS u(id, parent_id, name)`,
      [
        projectId,
        suites.map((s) => s.id),
        suites.map((s) => s.parent_id),
        suites.map((s) => s.name),
      ],
    );
  }

  /** Sets the present keys and `updated_at`; nothing when no key is present. */
  async update(id: string, changes: SuiteChanges): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    const set = (col: string, v: unknown) => {
      params.push(v);
      sets.push(`${col} = $${params.length}`);
    };
    if (changes.name !== undefined) set('name', changes.name);
    if (changes.parent_id !== undefined) set('parent_id', changes.parent_id);
    if (changes.description !== undefined) set('description', changes.description);
    if (changes.position !== undefined) set('position', changes.position);
    if (sets.length > 0)
      await this.db.query(
        `UPDATE suites SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`,
        params,
      );
  }

  /**
   * Deletes a suite after moving its child suites and its test cases to `parentId` (null: they
   * become roots / suite-less); test plans that included it keep the same cases
   * (`KEEP_IN_TEST_PLANS_SQL`).
   */
  async deleteMovingContentTo(id: string, parentId: string | null): Promise<void> {
    await this.db.query(KEEP_IN_TEST_PLANS_SQL, [id]);
    await this.db.query(
      `UPDATE suites SET parent_id = $2, updated_at = now() WHERE parent_id = $1`,
      [id, parentId],
    );
    await this.db.query(
      `UPDATE test_cases SET suite_id = $2, updated_at = now() WHERE suite_id = $1`,
      [id, parentId],
    );
    await this.db.query(`DELETE FROM suites WHERE id = $1`, [id]);
  }

  /** The suite, then its parent, … up to the root (at most WALK_LIMIT); empty when unknown. */
  async ancestorChain(id: string): Promise<Array<{ id: string; project_id: string }>> {
    return this.db.query<{ id: string; project_id: string }>(
      `WITH RECURSIVE a AS (
         SELECT id, parent_id, project_id, 1 AS lvl FROM suites WHERE id = $1
         UNION ALL
         SELECT s.id, s.parent_id, s.project_id, a.lvl + 1 FROM suites s JOIN a ON s.id = a.parent_id WHERE a.lvl < $2
       ) SELECT id, project_id FROM a ORDER BY lvl`,
      [id, WALK_LIMIT],
    );
  }

  /** Levels of the subtree under a suite: 1 for a leaf (and for an unknown id). */
  async subtreeHeight(id: string): Promise<number> {
    const h = await this.db.query<{ height: number }>(
      `WITH RECURSIVE d AS (
         SELECT id, 1 AS lvl FROM suites WHERE id = $1
         UNION ALL
         SELECT s.id, d.lvl + 1 FROM suites s JOIN d ON s.parent_id = d.id WHERE d.lvl < $2
       ) SELECT max(lvl)::int AS height FROM d`,
      [id, WALK_LIMIT],
    );
    return h[0]?.height ?? 1;
  }
}
