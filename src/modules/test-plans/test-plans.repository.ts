import { Injectable } from '@nestjs/common';
import { likePattern, offsetOf } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import type { PlanGenerationConfig } from '../products/coverage';
import type { GenerationSource, ListTestPlansQueryDto } from './dto/test-plan.dto';

/** A plan as every read answers it, with its milestone's name and its ordered suites and cases. */
export interface PlanRow {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  tags: string[];
  generation_source: GenerationSource;
  generation_config: Partial<PlanGenerationConfig>;
  generation_summary: Record<string, unknown>;
  milestone_id: string | null;
  milestone_name: string | null;
  suite_ids: string[];
  suite_names: string[];
  case_ids: string[];
  case_keys: string[];
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A plan's generation: source, config as stored, and the summary of the last generation. */
export interface PlanGeneration {
  source: GenerationSource;
  config: Partial<PlanGenerationConfig>;
  summary: Record<string, unknown>;
}

export interface NewPlan {
  id: string;
  projectId: string;
  name: string;
  description: string | null;
  tags: string[];
  generation: PlanGeneration;
  milestoneId: string | null;
  createdBy: string;
}

/** The columns a PATCH may set; absent keys keep their value. */
export interface PlanChanges {
  name?: string;
  description?: string | null;
  tags?: string[];
  milestone_id?: string | null;
  generation?: PlanGeneration;
}

/** A plan locked for an update. */
export interface LockedPlan {
  generation_source: GenerationSource;
  generation_config: Partial<PlanGenerationConfig>;
  milestone_id: string | null;
}

const PLAN_SELECT = `SELECT p.id, p.project_id, p.name, p.description, p.tags, p.generation_source, p.generation_config,
       p.generation_summary, p.milestone_id, m.name AS milestone_name, p.created_by, p.created_at, p.updated_at,
       coalesce((SELECT array_agg(ps.suite_id::text ORDER BY ps.position) FROM test_plan_suites ps
                  WHERE ps.test_plan_id = p.id), '{}') AS suite_ids,
       coalesce((SELECT array_agg(s.name::text ORDER BY ps.position) FROM test_plan_suites ps
                   JOIN suites s ON s.id = ps.suite_id WHERE ps.test_plan_id = p.id), '{}') AS suite_names,
       coalesce((SELECT array_agg(pc.test_case_id::text ORDER BY pc.position) FROM test_plan_cases pc
                  WHERE pc.test_plan_id = p.id), '{}') AS case_ids,
       coalesce((SELECT array_agg(tc.key::text ORDER BY pc.position) FROM test_plan_cases pc
                   JOIN test_cases tc ON tc.id = pc.test_case_id WHERE pc.test_plan_id = p.id), '{}') AS case_keys
  FROM test_plans p LEFT JOIN milestones m ON m.id = p.milestone_id`;

const SORTS: Record<
  ListTestPlansQueryDto['sort_by'],
  { expr: string; defaultOrder: 'asc' | 'desc' }
> = {
  created_at: { expr: 'p.created_at', defaultOrder: 'desc' },
  updated_at: { expr: 'p.updated_at', defaultOrder: 'desc' },
  name: { expr: 'lower(p.name)', defaultOrder: 'asc' },
};

/** The link tables of a plan (code constants). */
const PLAN_LINKS = {
  suites: { table: 'test_plan_suites', column: 'suite_id' },
  cases: { table: 'test_plan_cases', column: 'test_case_id' },
} as const;

/** SQL of test plans (`test_plans`, `test_plan_suites`, `test_plan_cases`). */
@Injectable()
export class TestPlansRepository {
  constructor(private readonly db: Db) {}

  /** One page of a project's plans and the number of all that match. */
  async findPage(q: ListTestPlansQueryDto): Promise<{ rows: PlanRow[]; total: number }> {
    const params: unknown[] = [q.project_id];
    const p = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    const where = ['p.project_id = $1'];
    if (q.search) {
      const s = p(likePattern(q.search));
      where.push(`(p.name ILIKE ${s} OR p.description ILIKE ${s})`);
    }
    const tags = [...(q.tag ?? []), ...(q.tags ?? [])].map((t) => t.trim()).filter((t) => t !== '');
    // Both sides lower-cased by the same SQL function (see TestCasesRepository).
    if (tags.length)
      where.push(`test_cases_lower_tags(p.tags) && test_cases_lower_tags(${p(tags)}::text[])`);
    if (q.milestone_id?.length) where.push(`p.milestone_id = ANY(${p(q.milestone_id)}::uuid[])`);
    if (q.generation_source?.length)
      where.push(`p.generation_source = ANY(${p(q.generation_source)}::text[])`);
    const whereSql = where.join(' AND ');
    const countParams = [...params];
    const sort = SORTS[q.sort_by];
    const dir = (q.sort_order ?? sort.defaultOrder) === 'asc' ? 'ASC' : 'DESC';
    const rows = await this.db.query<PlanRow>(
      `${PLAN_SELECT} WHERE ${whereSql} ORDER BY ${sort.expr} ${dir}, p.id ${dir}
        LIMIT ${p(q.page_size)} OFFSET ${p(offsetOf(q.page, q.page_size))}`,
      params,
    );
    const total = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM test_plans p WHERE ${whereSql}`,
      countParams,
    );
    return { rows, total: total[0]?.n ?? 0 };
  }

  /** Distinct tags of the project's plans, case-insensitively (oldest spelling), sorted. */
  async distinctTags(projectId: string): Promise<string[]> {
    const rows = await this.db.query<{ tag: string }>(
      `SELECT (array_agg(t ORDER BY p.created_at, p.id))[1] AS tag
         FROM test_plans p, unnest(p.tags) AS t
        WHERE p.project_id = $1 AND btrim(t) <> ''
        GROUP BY lower(t) ORDER BY lower(t)`,
      [projectId],
    );
    return rows.map((r) => r.tag);
  }

  async findById(id: string): Promise<PlanRow | undefined> {
    const rows = await this.db.query<PlanRow>(`${PLAN_SELECT} WHERE p.id = $1`, [id]);
    return rows[0];
  }

  /** The milestone of a plan (`null` for none); undefined when there is no such plan. */
  async findMilestoneOf(id: string): Promise<{ milestone_id: string | null } | undefined> {
    const plans = await this.db.query<{ milestone_id: string | null }>(
      `SELECT milestone_id FROM test_plans WHERE id = $1`,
      [id],
    );
    return plans[0];
  }

  async insert(p: NewPlan): Promise<void> {
    await this.db.query(
      `INSERT INTO test_plans (id, project_id, name, description, tags, generation_source, generation_config,
              generation_summary, milestone_id, created_by)
       VALUES ($1, $2, $3, $4, $5::text[], $6, $7::jsonb, $8::jsonb, $9, $10)`,
      [
        p.id,
        p.projectId,
        p.name,
        p.description,
        p.tags,
        p.generation.source,
        JSON.stringify(p.generation.config),
        JSON.stringify(p.generation.summary),
        p.milestoneId,
        p.createdBy,
      ],
    );
  }

  /** Locks one plan; undefined when there is no such plan. */
  async lockForUpdate(id: string): Promise<LockedPlan | undefined> {
    const locked = await this.db.query<LockedPlan>(
      `SELECT generation_source, generation_config, milestone_id FROM test_plans WHERE id = $1 FOR UPDATE`,
      [id],
    );
    return locked[0];
  }

  /** Sets the present keys and `updated_at` (also when no key is present). */
  async update(id: string, changes: PlanChanges): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    const set = (col: string, v: unknown, cast = '') => {
      params.push(v);
      sets.push(`${col} = $${params.length}${cast}`);
    };
    if (changes.name !== undefined) set('name', changes.name);
    if (changes.description !== undefined) set('description', changes.description);
    if (changes.tags !== undefined) set('tags', changes.tags, '::text[]');
    if (changes.milestone_id !== undefined) set('milestone_id', changes.milestone_id);
    if (changes.generation !== undefined) {
      set('generation_source', changes.generation.source);
      set('generation_config', JSON.stringify(changes.generation.config), '::jsonb');
      set('generation_summary', JSON.stringify(changes.generation.summary), '::jsonb');
    }
    sets.push('updated_at = now()');
    await this.db.query(`UPDATE test_plans SET ${sets.join(', ')} WHERE id = $1`, params);
  }

  async delete(id: string): Promise<void> {
    await this.db.query(`DELETE FROM test_plans WHERE id = $1`, [id]);
  }

  /**
   * Active cases of the project in the plan's suites and their descendants (recursive), in suite
   * position order (a suite reached twice counts at its first position), then key.
   */
  async activeSuiteCaseIds(planId: string, projectId: string): Promise<string[]> {
    const suiteCases = await this.db.query<{ id: string }>(
      `WITH RECURSIVE tree(id, pos) AS (
         SELECT ps.suite_id, ps.position FROM test_plan_suites ps WHERE ps.test_plan_id = $1
         UNION
         SELECT s.id, t.pos FROM suites s JOIN tree t ON s.parent_id = t.id
       ), ranked AS (SELECT id, min(pos) AS pos FROM tree GROUP BY id)
       SELECT tc.id FROM test_cases tc JOIN ranked r ON r.id = tc.suite_id
        WHERE tc.project_id = $2 AND tc.status = 'active'
        ORDER BY r.pos, tc.key_number, tc.id`,
      [planId, projectId],
    );
    return suiteCases.map((r) => r.id);
  }

  /** The plan's explicit cases that are active, in plan order. */
  async activeExplicitCaseIds(planId: string): Promise<string[]> {
    const explicitCases = await this.db.query<{ id: string }>(
      `SELECT tc.id FROM test_plan_cases pc JOIN test_cases tc ON tc.id = pc.test_case_id
        WHERE pc.test_plan_id = $1 AND tc.status = 'active' ORDER BY pc.position`,
      [planId],
    );
    return explicitCases.map((r) => r.id);
  }

  /** `FOR KEY SHARE` on the suites or cases of these ids that exist; their ids and projects. */
  async lockKeyShare(
    table: 'suites' | 'test_cases',
    ids: string[],
  ): Promise<Array<{ id: string; project_id: string }>> {
    // Table names are code constants.
    return this.db.query<{ id: string; project_id: string }>(
      `SELECT id, project_id FROM ${table} WHERE id = ANY($1::uuid[]) FOR KEY SHARE`,
      [ids],
    );
  }

  /** `FOR KEY SHARE` on a milestone of the project; its status, undefined when there is none. */
  async lockMilestoneKeyShare(
    milestoneId: string,
    projectId: string,
  ): Promise<{ status: string } | undefined> {
    const rows = await this.db.query<{ status: string }>(
      `SELECT status FROM milestones WHERE id = $1 AND project_id = $2 FOR KEY SHARE`,
      [milestoneId, projectId],
    );
    return rows[0];
  }

  /** Replaces the plan's suites or explicit cases (one statement each, unnest), in the given order. */
  async replaceLinks(
    kind: 'suites' | 'cases',
    planId: string,
    projectId: string,
    ids: string[],
  ): Promise<void> {
    const { table, column } = PLAN_LINKS[kind];
    await this.db.query(`DELETE FROM ${table} WHERE test_plan_id = $1`, [planId]);
    if (ids.length) {
      await this.db.query(
        `INSERT INTO ${table} (test_plan_id, ${column}, project_id, position)
           SELECT $1, u.id, $2, u.pos FROM unnest($3::uuid[]) WITH ORDINALITY AS u(id, pos)`,
        [planId, projectId, ids],
      );
    }
  }
}
