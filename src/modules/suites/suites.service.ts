import { Injectable } from '@nestjs/common';
import { ProjectAccess } from '../../common/access/project-access';
import { AppException } from '../../common/errors/app-exception';
import { likePattern, offsetOf, Page, pageOf } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import { uuidv7 } from '../../common/persistence/ids';
import { CreateSuiteDto, ListSuitesQueryDto, SuiteDto, UpdateSuiteDto } from './dto/suite.dto';
import { checkSuiteParent } from './suite-tree';

interface SuiteRow {
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

@Injectable()
export class SuitesService {
  constructor(private readonly db: Db) {}

  async list(q: ListSuitesQueryDto): Promise<Page<SuiteDto>> {
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
    return pageOf(rows.map(toSuiteDto), q.page, q.page_size, total[0]?.n ?? 0);
  }

  async get(id: string): Promise<SuiteDto> {
    const rows = await this.db.query<SuiteRow>(`${SUITE_SELECT} WHERE s.id = $1`, [id]);
    if (!rows[0]) throw AppException.notFound('suite_not_found', 'Suite');
    return toSuiteDto(rows[0]);
  }

  async create(access: ProjectAccess, dto: CreateSuiteDto): Promise<SuiteDto> {
    if (dto.parent_id) {
      // Serialises with a concurrent move (which locks every suite of the project) or delete of the
      // parent, so the depth is checked against the committed tree and the parent still exists.
      await this.db.query(`SELECT 1 FROM suites WHERE id = $1 FOR SHARE`, [dto.parent_id]);
      await this.assertParent(access.projectId, null, dto.parent_id);
    }
    const id = uuidv7();
    await this.db.query(
      `INSERT INTO suites (id, project_id, parent_id, name, description, position) VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        id,
        access.projectId,
        dto.parent_id ?? null,
        dto.name,
        dto.description ?? null,
        dto.position ?? 100,
      ],
    );
    return this.get(id);
  }

  async update(access: ProjectAccess, id: string, dto: UpdateSuiteDto): Promise<SuiteDto> {
    // Moves lock the project's suites in a fixed order so two concurrent moves cannot build a cycle.
    if (dto.parent_id) {
      await this.db.query(`SELECT id FROM suites WHERE project_id = $1 ORDER BY id FOR UPDATE`, [
        access.projectId,
      ]);
      await this.assertParent(access.projectId, id, dto.parent_id);
    }
    const sets: string[] = [];
    const params: unknown[] = [id];
    const set = (col: string, v: unknown) => {
      params.push(v);
      sets.push(`${col} = $${params.length}`);
    };
    if (dto.name !== undefined) set('name', dto.name);
    if (dto.parent_id !== undefined) set('parent_id', dto.parent_id);
    if (dto.description !== undefined) set('description', dto.description);
    if (dto.position !== undefined) set('position', dto.position);
    if (sets.length > 0)
      await this.db.query(
        `UPDATE suites SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`,
        params,
      );
    return this.get(id);
  }

  /** Child suites and the suite's test cases move to its parent (or become roots); nothing is lost. */
  async remove(id: string): Promise<void> {
    const rows = await this.db.query<{ parent_id: string | null }>(
      `SELECT parent_id FROM suites WHERE id = $1 FOR UPDATE`,
      [id],
    );
    if (!rows[0]) throw AppException.notFound('suite_not_found', 'Suite');
    const parent = rows[0].parent_id;
    await this.db.query(
      `UPDATE suites SET parent_id = $2, updated_at = now() WHERE parent_id = $1`,
      [id, parent],
    );
    await this.db.query(
      `UPDATE test_cases SET suite_id = $2, updated_at = now() WHERE suite_id = $1`,
      [id, parent],
    );
    await this.db.query(`DELETE FROM suites WHERE id = $1`, [id]);
  }

  /**
   * Parent of a new or moved suite: unknown → 404 suite_not_found, other project → 422
   * suite_project_mismatch, itself or a descendant → 422 suite_parent_cycle, deeper than four levels
   * (counting the moved subtree) → 422 suite_depth_limit_exceeded.
   */
  private async assertParent(
    projectId: string,
    suiteId: string | null,
    parentId: string,
  ): Promise<void> {
    const chain = await this.db.query<{ id: string; project_id: string }>(
      `WITH RECURSIVE a AS (
         SELECT id, parent_id, project_id, 1 AS lvl FROM suites WHERE id = $1
         UNION ALL
         SELECT s.id, s.parent_id, s.project_id, a.lvl + 1 FROM suites s JOIN a ON s.id = a.parent_id WHERE a.lvl < $2
       ) SELECT id, project_id FROM a ORDER BY lvl`,
      [parentId, WALK_LIMIT],
    );
    if (chain.length === 0) {
      throw new AppException('suite_not_found', 'Parent suite not found', {
        parent_id: ['No suite with this id'],
      });
    }
    if (chain[0].project_id !== projectId) {
      throw new AppException(
        'suite_project_mismatch',
        'The parent suite belongs to another project',
        {
          parent_id: ['The parent suite must belong to the same project'],
        },
      );
    }
    let height = 1;
    if (suiteId !== null) {
      const h = await this.db.query<{ height: number }>(
        `WITH RECURSIVE d AS (
           SELECT id, 1 AS lvl FROM suites WHERE id = $1
           UNION ALL
           SELECT s.id, d.lvl + 1 FROM suites s JOIN d ON s.parent_id = d.id WHERE d.lvl < $2
         ) SELECT max(lvl)::int AS height FROM d`,
        [suiteId, WALK_LIMIT],
      );
      height = h[0]?.height ?? 1;
    }
    const problem = checkSuiteParent({
      suiteId,
      parentChain: chain.map((c) => c.id),
      subtreeHeight: height,
    });
    if (problem === 'suite_parent_cycle') {
      throw new AppException(
        'suite_parent_cycle',
        'A suite cannot be placed under itself or one of its descendants',
        {
          parent_id: ['The parent would create a cycle'],
        },
      );
    }
    if (problem === 'suite_depth_limit_exceeded') {
      throw new AppException(
        'suite_depth_limit_exceeded',
        'Suites can be nested at most 4 levels deep',
        {
          parent_id: ['The suite tree would exceed 4 levels'],
        },
      );
    }
  }
}

function toSuiteDto(r: SuiteRow): SuiteDto {
  return {
    id: r.id,
    project_id: r.project_id,
    name: r.name,
    parent_id: r.parent_id,
    description: r.description,
    position: r.position,
    test_cases_count: r.test_cases_count,
    active_test_cases_count: r.active_test_cases_count,
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}
