import { Injectable } from '@nestjs/common';
import { ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException, FieldErrors } from '../../common/errors/app-exception';
import { JsonBody } from '../../common/http/json-body';
import { blankToNull, normalizeStringList } from '../../common/normalize';
import { Page, pageOf } from '../../common/pagination/page';
import { canonicalId, uuidv7 } from '../../common/persistence/ids';
import {
  normalizePlanGenerationConfig,
  PlanGenerationConfig,
  PlanGenerationPreview,
} from '../products/coverage';
import { PlanGenerationConfigDto } from '../products/dto/plan-preview.dto';
import { PlanPreviewService } from '../products/plan-preview.service';
import { RunResultsWriter } from '../run-items/run-results.writer';
import { TestCasesRepository } from '../test-cases/test-cases.repository';
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
import { PlanChanges, PlanGeneration, PlanRow, TestPlansRepository } from './test-plans.repository';

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
    private readonly plans: TestPlansRepository,
    private readonly previews: PlanPreviewService,
    private readonly runs: TestRunsService,
    private readonly results: RunResultsWriter,
    private readonly cases: TestCasesRepository,
  ) {}

  async list(q: ListTestPlansQueryDto): Promise<Page<TestPlanDto>> {
    const { rows, total } = await this.plans.findPage(q);
    return pageOf(rows.map(toPlanDto), q.page, q.page_size, total);
  }

  /** Distinct tags of the project's plans, case-insensitively (oldest spelling), sorted. */
  async tags(projectId: string): Promise<{ items: string[] }> {
    return { items: await this.plans.distinctTags(projectId) };
  }

  async get(id: string): Promise<TestPlanDto> {
    const row = await this.plans.findById(id);
    if (!row) throw AppException.notFound('test_plan_not_found', 'Test plan');
    return toPlanDto(row);
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
    const milestoneId = blankToNull(dto.milestone_id);
    if (milestoneId) await this.checkMilestone(projectId, milestoneId);
    const id = uuidv7();
    await this.plans.insert({
      id,
      projectId,
      name: dto.name,
      description: dto.description ?? null,
      tags: normalizeStringList(dto.tags ?? []),
      generation: storedGeneration(scope),
      milestoneId,
      createdBy: user.id,
    });
    await this.writeLinks(projectId, id, scope);
    return this.get(id);
  }

  /**
   * PATCH: present keys only. `suite_ids`/`case_ids` replace the lists. Changing the generation
   * source or config of a product-generated plan regenerates its cases; switching to manual keeps the
   * cases and resets the summary.
   */
  async update(access: ProjectAccess, id: string, dto: UpdateTestPlanDto): Promise<TestPlanDto> {
    const plan = await this.plans.lockForUpdate(id);
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
    const sent = dto.milestone_id === undefined ? undefined : blankToNull(dto.milestone_id);
    // As the database spells it: re-sending the current (even archived) milestone is accepted.
    const milestoneId = typeof sent === 'string' ? canonicalId(sent) : sent;
    if (milestoneId && milestoneId !== plan.milestone_id)
      await this.checkMilestone(projectId, milestoneId);

    const changes: PlanChanges = {};
    if (dto.name !== undefined) changes.name = dto.name;
    if (dto.description !== undefined) changes.description = dto.description;
    if (dto.tags !== undefined) changes.tags = normalizeStringList(dto.tags);
    if (milestoneId !== undefined) changes.milestone_id = milestoneId;
    if (sourceOrConfigChanged) changes.generation = storedGeneration(scope);
    const linksChanged = scope.suiteIds !== undefined || scope.caseIds !== undefined;
    if (Object.keys(changes).length > 0 || linksChanged) await this.plans.update(id, changes);
    await this.writeLinks(projectId, id, scope);
    return this.get(id);
  }

  async remove(id: string): Promise<void> {
    await this.plans.delete(id);
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
  ): Promise<JsonBody> {
    const plan = await this.plans.findMilestoneOf(id);
    if (!plan) throw AppException.notFound('test_plan_not_found', 'Test plan');
    const suiteCases = await this.plans.activeSuiteCaseIds(id, access.projectId);
    const explicitCases = await this.plans.activeExplicitCaseIds(id);
    // Held until the run is written: a case deleted or archived since it was read is waited for and
    // left out (the run gets the plan's cases as one of the two orders would), never a 422 about a
    // `test_case_ids` field the caller did not send.
    const ordered = planCaseOrder(suiteCases, explicitCases);
    const alive = ordered.length > 0 ? await this.cases.lockActiveForShare(ordered) : new Set();
    const caseIds = ordered.filter((caseId) => alive.has(caseId));
    if (caseIds.length === 0) {
      throw new AppException('no_active_cases', 'The test plan yields no active test case', {
        test_plan_id: ['The plan has no active test case in its suites or explicit cases'],
      });
    }
    // An inherited milestone is validated as a sent one (reference §6.4 step 4), but the caller
    // did not send it: the problem says where it comes from and how to create the run anyway.
    if (dto.milestone_id === undefined && plan.milestone_id !== null) {
      const milestone = await this.plans.lockMilestoneKeyShare(plan.milestone_id, access.projectId);
      if (milestone?.status === 'archived') {
        throw new AppException(
          'invalid_milestone',
          "The test plan's milestone is archived: send milestone_id (null for no milestone, or another milestone)",
          {
            milestone_id: [
              "omitted, so the plan's milestone would be inherited, and it is archived; send null or another milestone",
            ],
          },
        );
      }
    }
    const runId = await this.runs.create(access, user, {
      name: dto.name,
      description: dto.description,
      environment_id: dto.environment_id,
      milestone_id: dto.milestone_id === undefined ? plan.milestone_id : dto.milestone_id,
      build: dto.build,
      assignee: dto.assignee,
      ci: dto.ci,
      attributes: dto.attributes,
    });
    // One lock of the new run for adding its items and starting it.
    const locked = await this.results.lockRun(runId);
    await this.results.applyResults(locked, { addCases: { caseIds } });
    if (dto.start_immediately)
      return this.runs.updateJson(access, user, locked, { status: 'in_progress' });
    return this.runs.getJson(runId);
  }

  /**
   * Validates suites and cases (duplicates → 422 validation_error, unknown → 404, another project
   * → 422 suite_project_mismatch / test_case_project_mismatch; given cases are checked for
   * product-generated plans too, which do not apply them) and, for product-generated plans,
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
    // Checked even where a generated plan does not apply them: a bad list is never taken silently.
    if (input.caseIds) await this.checkIds(projectId, 'test_cases', input.caseIds, 'case_ids');
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
      const preview = await this.generatedCases(projectId, config);
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
    }
    return { suiteIds: input.suiteIds, caseIds, source: input.source, config, summary };
  }

  /**
   * The preview of a product-generated plan, its cases key-share locked until the plan is written
   * (its case links are foreign keys): a case deleted after the preview read it would fail the insert
   * of the links (409). When one is gone by the time it is locked, the preview is computed again
   * (the delete has committed by then); after three tries the gone cases are left out of the links.
   */
  private async generatedCases(
    projectId: string,
    config: Partial<PlanGenerationConfig>,
  ): Promise<PlanGenerationPreview> {
    for (let attempt = 1; ; attempt++) {
      const preview = await this.previews.preview(projectId, config);
      const ids = preview.resolved_case_ids;
      const locked = ids.length > 0 ? await this.plans.lockKeyShare('test_cases', ids) : [];
      if (locked.length === ids.length) return preview;
      if (attempt === 3) {
        const present = new Set(locked.map((r) => r.id));
        return { ...preview, resolved_case_ids: ids.filter((caseId) => present.has(caseId)) };
      }
    }
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
    const rows = await this.plans.lockKeyShare(table, ids);
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
    const milestone = await this.plans.lockMilestoneKeyShare(milestoneId, projectId);
    if (!milestone || milestone.status === 'archived') {
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
    if (scope.suiteIds !== undefined)
      await this.plans.replaceLinks('suites', planId, projectId, scope.suiteIds);
    if (scope.caseIds !== undefined)
      await this.plans.replaceLinks('cases', planId, projectId, scope.caseIds);
  }
}

/** The generation a plan stores: a manual plan stores `{}` as its config. */
function storedGeneration(scope: Scope): PlanGeneration {
  return {
    source: scope.source,
    config: scope.source === 'manual' ? {} : scope.config,
    summary: scope.summary,
  };
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
