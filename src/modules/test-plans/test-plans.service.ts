import { Injectable } from '@nestjs/common';
import { ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException, FieldErrors } from '../../common/errors/app-exception';
import { normalizeStringList } from '../../common/normalize';
import { likePattern, offsetOf, Page, pageOf } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import { uuidv7 } from '../../common/persistence/ids';
import { normalizePlanGenerationConfig, PlanGenerationConfig } from '../products/coverage';
import { PlanGenerationConfigDto } from '../products/dto/plan-preview.dto';
import { PlanPreviewService } from '../products/plan-preview.service';
import { RunItemsService } from '../run-items/run-items.service';
import { TestRunDto } from '../test-runs/dto/test-run.dto';
import { TestRunsService } from '../test-runs/test-runs.service';
import {
  CreateRunFromPlanDto,
  CreateTestPlanDto,
  GenerationSource,
  ListTestPlansQueryDto,
  TestPlanDto,
  UpdateTestPlanDto,
} from './dto/test-plan.dto';
import { planCaseOrder } from './plan-scope';

interface PlanRow {
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

/** The stored scope of a plan after a create or PATCH. */
interface Scope {
  suiteIds?: string[];
  caseIds?: string[];
  source: GenerationSource;
  config: PlanGenerationConfig;
  summary: Record<string, unknown>;
}

@Injectable()
export class TestPlansService {
  constructor(
    private readonly db: Db,
    private readonly previews: PlanPreviewService,
    private readonly runs: TestRunsService,
    private readonly runItems: RunItemsService,
  ) {}

  async list(q: ListTestPlansQueryDto): Promise<Page<TestPlanDto>> {
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
    const tags = [...(q.tag ?? []), ...(q.tags ?? [])]
      .map((t) => t.trim().toLowerCase())
      .filter((t) => t !== '');
    if (tags.length) where.push(`test_cases_lower_tags(p.tags) && ${p(tags)}::text[]`);
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
    return pageOf(rows.map(toPlanDto), q.page, q.page_size, total[0]?.n ?? 0);
  }

  /** Distinct tags of the project's plans, case-insensitively (oldest spelling), sorted. */
  async tags(projectId: string): Promise<{ items: string[] }> {
    const rows = await this.db.query<{ tag: string }>(
      `SELECT (array_agg(t ORDER BY p.created_at, p.id))[1] AS tag
         FROM test_plans p, unnest(p.tags) AS t
        WHERE p.project_id = $1 AND btrim(t) <> ''
        GROUP BY lower(t) ORDER BY lower(t)`,
      [projectId],
    );
    return { items: rows.map((r) => r.tag) };
  }

  async get(id: string): Promise<TestPlanDto> {
    const rows = await this.db.query<PlanRow>(`${PLAN_SELECT} WHERE p.id = $1`, [id]);
    if (!rows[0]) throw AppException.notFound('test_plan_not_found', 'Test plan');
    return toPlanDto(rows[0]);
  }

  async create(
    access: ProjectAccess,
    user: AuthenticatedUser,
    dto: CreateTestPlanDto,
  ): Promise<TestPlanDto> {
    const projectId = access.projectId;
    const scope = await this.resolveScope(projectId, {
      source: dto.generation_source ?? 'manual',
      config: dto.generation_config,
      suiteIds: dto.suite_ids ?? [],
      caseIds: dto.case_ids ?? [],
      sourceOrConfigChanged: true,
    });
    if (dto.milestone_id) await this.checkMilestone(projectId, dto.milestone_id);
    const id = uuidv7();
    await this.db.query(
      `INSERT INTO test_plans (id, project_id, name, description, tags, generation_source, generation_config,
              generation_summary, milestone_id, created_by)
       VALUES ($1, $2, $3, $4, $5::text[], $6, $7::jsonb, $8::jsonb, $9, $10)`,
      [
        id,
        projectId,
        dto.name,
        dto.description ?? null,
        normalizeStringList(dto.tags ?? []),
        scope.source,
        JSON.stringify(scope.source === 'manual' ? {} : scope.config),
        JSON.stringify(scope.summary),
        dto.milestone_id ?? null,
        user.id,
      ],
    );
    await this.writeLinks(projectId, id, scope);
    return this.get(id);
  }

  /**
   * PATCH: present keys only. `suite_ids`/`case_ids` replace the lists. Changing the generation
   * source or config of a product-generated plan regenerates its cases; switching to manual keeps the
   * cases and resets the summary.
   */
  async update(access: ProjectAccess, id: string, dto: UpdateTestPlanDto): Promise<TestPlanDto> {
    const locked = await this.db.query<{
      generation_source: GenerationSource;
      generation_config: Partial<PlanGenerationConfig>;
      milestone_id: string | null;
    }>(
      `SELECT generation_source, generation_config, milestone_id FROM test_plans WHERE id = $1 FOR UPDATE`,
      [id],
    );
    const plan = locked[0];
    if (!plan) throw AppException.notFound('test_plan_not_found', 'Test plan');
    const projectId = access.projectId;
    const source = dto.generation_source ?? plan.generation_source;
    const sourceOrConfigChanged =
      dto.generation_source !== undefined || dto.generation_config !== undefined;
    const scope = await this.resolveScope(projectId, {
      source,
      // A manual plan stores `{}`: switching it to product_generated needs a config in the body.
      config:
        dto.generation_config !== undefined
          ? dto.generation_config
          : sourceOrConfigChanged && plan.generation_source === 'product_generated'
            ? plan.generation_config
            : undefined,
      suiteIds: dto.suite_ids,
      caseIds: dto.case_ids,
      sourceOrConfigChanged,
    });
    if (dto.milestone_id && dto.milestone_id !== plan.milestone_id)
      await this.checkMilestone(projectId, dto.milestone_id);

    const sets: string[] = [];
    const params: unknown[] = [id];
    const set = (col: string, v: unknown, cast = '') => {
      params.push(v);
      sets.push(`${col} = $${params.length}${cast}`);
    };
    if (dto.name !== undefined) set('name', dto.name);
    if (dto.description !== undefined) set('description', dto.description);
    if (dto.tags !== undefined) set('tags', normalizeStringList(dto.tags), '::text[]');
    if (dto.milestone_id !== undefined) set('milestone_id', dto.milestone_id);
    if (sourceOrConfigChanged) {
      set('generation_source', scope.source);
      set(
        'generation_config',
        JSON.stringify(scope.source === 'manual' ? {} : scope.config),
        '::jsonb',
      );
      set('generation_summary', JSON.stringify(scope.summary), '::jsonb');
    }
    const linksChanged = scope.suiteIds !== undefined || scope.caseIds !== undefined;
    if (sets.length > 0 || linksChanged) {
      sets.push('updated_at = now()');
      await this.db.query(`UPDATE test_plans SET ${sets.join(', ')} WHERE id = $1`, params);
    }
    await this.writeLinks(projectId, id, scope);
    return this.get(id);
  }

  async remove(id: string): Promise<void> {
    await this.db.query(`DELETE FROM test_plans WHERE id = $1`, [id]);
  }

  /**
   * Creates a run from the plan (reference §6.4): the active cases of the plan's suites and their
   * descendants, then its active explicit cases, without duplicates; none → 422 no_active_cases.
   * The milestone is inherited when the key is absent; null means none. Items get rows expanded
   * from dataset bindings. `start_immediately` moves the run to in_progress.
   */
  async createRun(
    access: ProjectAccess,
    user: AuthenticatedUser,
    id: string,
    dto: CreateRunFromPlanDto,
  ): Promise<TestRunDto> {
    const plans = await this.db.query<{ milestone_id: string | null }>(
      `SELECT milestone_id FROM test_plans WHERE id = $1`,
      [id],
    );
    if (!plans[0]) throw AppException.notFound('test_plan_not_found', 'Test plan');
    const suiteCases = await this.db.query<{ id: string }>(
      `WITH RECURSIVE tree(id, pos) AS (
         SELECT ps.suite_id, ps.position FROM test_plan_suites ps WHERE ps.test_plan_id = $1
         UNION
         SELECT s.id, t.pos FROM suites s JOIN tree t ON s.parent_id = t.id
       ), ranked AS (SELECT id, min(pos) AS pos FROM tree GROUP BY id)
       SELECT tc.id FROM test_cases tc JOIN ranked r ON r.id = tc.suite_id
        WHERE tc.project_id = $2 AND tc.status = 'active'
        ORDER BY r.pos, tc.key_number, tc.id`,
      [id, access.projectId],
    );
    const explicitCases = await this.db.query<{ id: string }>(
      `SELECT tc.id FROM test_plan_cases pc JOIN test_cases tc ON tc.id = pc.test_case_id
        WHERE pc.test_plan_id = $1 AND tc.status = 'active' ORDER BY pc.position`,
      [id],
    );
    const caseIds = planCaseOrder(
      suiteCases.map((r) => r.id),
      explicitCases.map((r) => r.id),
    );
    if (caseIds.length === 0) {
      throw new AppException('no_active_cases', 'The test plan yields no active test case', {
        test_plan_id: ['The plan has no active test case in its suites or explicit cases'],
      });
    }
    const run = await this.runs.create(access, user, {
      name: dto.name,
      description: dto.description,
      environment_id: dto.environment_id,
      milestone_id: dto.milestone_id === undefined ? plans[0].milestone_id : dto.milestone_id,
      build: dto.build,
      assignee: dto.assignee,
    });
    await this.runItems.addCases(run.id, caseIds, { onExisting: 'skip' });
    if (dto.start_immediately)
      return this.runs.update(access, user, run.id, { status: 'in_progress' });
    return this.runs.get(run.id);
  }

  /**
   * Validates suites and cases (duplicates → 422 validation_error, unknown → 404, another project
   * → 422 suite_project_mismatch / test_case_project_mismatch) and, for product-generated plans,
   * computes the cases from the config (missing config → 422 validation_error).
   */
  private async resolveScope(
    projectId: string,
    input: {
      source: GenerationSource;
      config: PlanGenerationConfigDto | Partial<PlanGenerationConfig> | null | undefined;
      suiteIds: string[] | undefined;
      caseIds: string[] | undefined;
      sourceOrConfigChanged: boolean;
    },
  ): Promise<Scope> {
    if (input.suiteIds) await this.checkIds(projectId, 'suites', input.suiteIds, 'suite_ids');
    let caseIds = input.caseIds;
    let config = normalizePlanGenerationConfig(input.config ?? undefined);
    let summary: Record<string, unknown> = {};
    if (input.source === 'product_generated' && input.sourceOrConfigChanged) {
      if (input.config === null || input.config === undefined) {
        throw AppException.validation({
          generation_config: [
            'generation_config is required when generation_source is product_generated',
          ],
        });
      }
      const preview = await this.previews.preview(projectId, config);
      config = normalizePlanGenerationConfig(config);
      caseIds = preview.resolved_case_ids;
      summary = {
        ...preview,
        reason_map: Object.fromEntries(
          preview.included_cases.map((c) => [c.test_case_id, c.reason_codes]),
        ),
      };
    } else if (input.source === 'product_generated' && caseIds !== undefined) {
      // A generated plan's cases come from its config; an explicit list is not applied.
      caseIds = undefined;
    } else if (caseIds) {
      await this.checkIds(projectId, 'test_cases', caseIds, 'case_ids');
    }
    return { suiteIds: input.suiteIds, caseIds, source: input.source, config, summary };
  }

  private async checkIds(
    projectId: string,
    table: 'suites' | 'test_cases',
    ids: string[],
    field: string,
  ): Promise<void> {
    const errors: FieldErrors = {};
    const seen = new Set<string>();
    ids.forEach((id, i) => {
      const k = id.toLowerCase();
      if (seen.has(k)) errors[`${field}.${i}`] = ['Duplicate id'];
      seen.add(k);
    });
    if (Object.keys(errors).length) throw AppException.validation(errors);
    if (ids.length === 0) return;
    // Table names are code constants.
    const rows = await this.db.query<{ id: string; project_id: string }>(
      `SELECT id, project_id FROM ${table} WHERE id = ANY($1::uuid[]) FOR KEY SHARE`,
      [ids],
    );
    const byId = new Map(rows.map((r) => [r.id.toLowerCase(), r.project_id]));
    const unknown = ids.filter((id) => !byId.has(id.toLowerCase()));
    const foreign = ids.filter(
      (id) => byId.has(id.toLowerCase()) && byId.get(id.toLowerCase()) !== projectId,
    );
    const suites = table === 'suites';
    if (unknown.length) {
      throw new AppException(
        suites ? 'suite_not_found' : 'test_case_not_found',
        `Unknown ${suites ? 'suites' : 'test cases'}`,
        {
          [field]: [`unknown ids: ${unknown.join(', ')}`],
        },
      );
    }
    if (foreign.length) {
      throw new AppException(
        suites ? 'suite_project_mismatch' : 'test_case_project_mismatch',
        `Some ${suites ? 'suites' : 'test cases'} belong to another project`,
        { [field]: [`not of this project: ${foreign.join(', ')}`] },
      );
    }
  }

  /** Milestone of a plan: of the project and not archived (422 invalid_milestone). */
  private async checkMilestone(projectId: string, milestoneId: string): Promise<void> {
    const rows = await this.db.query<{ status: string }>(
      `SELECT status FROM milestones WHERE id = $1 AND project_id = $2 FOR KEY SHARE`,
      [milestoneId, projectId],
    );
    if (!rows[0] || rows[0].status === 'archived') {
      throw new AppException(
        'invalid_milestone',
        'The milestone does not exist in this project or is archived',
        {
          milestone_id: ['must be the id of a milestone of this project that is not archived'],
        },
      );
    }
  }

  /** Replaces the suite and case links that changed (one statement each, unnest). */
  private async writeLinks(projectId: string, planId: string, scope: Scope): Promise<void> {
    if (scope.suiteIds !== undefined) {
      await this.db.query(`DELETE FROM test_plan_suites WHERE test_plan_id = $1`, [planId]);
      if (scope.suiteIds.length) {
        await this.db.query(
          `INSERT INTO test_plan_suites (test_plan_id, suite_id, project_id, position)
           SELECT $1, u.id, $2, u.pos FROM unnest($3::uuid[]) WITH ORDINALITY AS u(id, pos)`,
          [planId, projectId, scope.suiteIds],
        );
      }
    }
    if (scope.caseIds !== undefined) {
      await this.db.query(`DELETE FROM test_plan_cases WHERE test_plan_id = $1`, [planId]);
      if (scope.caseIds.length) {
        await this.db.query(
          `INSERT INTO test_plan_cases (test_plan_id, test_case_id, project_id, position)
           SELECT $1, u.id, $2, u.pos FROM unnest($3::uuid[]) WITH ORDINALITY AS u(id, pos)`,
          [planId, projectId, scope.caseIds],
        );
      }
    }
  }
}

function toPlanDto(r: PlanRow): TestPlanDto {
  return {
    id: r.id,
    project_id: r.project_id,
    name: r.name,
    description: r.description,
    tags: r.tags,
    generation_source: r.generation_source,
    generation_config: normalizePlanGenerationConfig(r.generation_config),
    generation_summary: r.generation_summary,
    milestone_id: r.milestone_id,
    milestone_name: r.milestone_name,
    suite_ids: r.suite_ids,
    suite_names: r.suite_names,
    case_ids: r.case_ids,
    case_keys: r.case_keys,
    created_by: r.created_by,
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}
