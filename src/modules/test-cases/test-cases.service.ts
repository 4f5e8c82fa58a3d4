import { Injectable } from '@nestjs/common';
import { AccessService } from '../../common/access/access.service';
import { ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException, FieldErrors } from '../../common/errors/app-exception';
import { registerUniqueConstraints } from '../../common/errors/error-codes';
import { blankToNull, normalizeStringList } from '../../common/normalize';
import { Page, pageOf } from '../../common/pagination/page';
import { CursorCodec, cursorScope } from '../../common/pagination/cursor';
import { CursorPage, KeysetPaging } from '../../common/pagination/keyset';
import { uuidv7 } from '../../common/persistence/ids';
import { WebhookEvents } from '../webhooks/webhook-events.service';
import { BindingsService } from '../datasets/bindings.service';
import { DatasetBindingDto } from '../datasets/dto/binding.dto';
import {
  CoverageDto,
  CoverageInputDto,
  CreateTestCaseDto,
  ListTestCasesQueryDto,
  TestCaseDto,
  TestCaseStepDto,
  UpdateTestCaseDto,
} from './dto/test-case.dto';
import type { TestCaseStep } from './entities/test-case.entity';
import { formatCaseKey, TEST_CASE_KEY_COUNTER } from './case-keys';
import {
  CaseFields,
  caseKeysetOrder,
  CaseRow,
  CoverageRow,
  TestCasesRepository,
} from './test-cases.repository';

registerUniqueConstraints({
  uq_test_cases_project_automation_id: {
    code: 'automation_id_already_exists',
    field: 'automation_id',
    detail: 'Another test case of this project already has this automation_id',
  },
});

@Injectable()
export class TestCasesService {
  constructor(
    private readonly cases: TestCasesRepository,
    private readonly accessService: AccessService,
    private readonly bindings: BindingsService,
    private readonly webhooks: WebhookEvents,
    private readonly cursors: CursorCodec,
  ) {}

  async list(q: ListTestCasesQueryDto): Promise<Page<TestCaseDto> | CursorPage<TestCaseDto>> {
    const keyset =
      q.cursor === undefined
        ? undefined
        : new KeysetPaging(
            this.cursors,
            cursorScope('test-cases', {
              ...q,
              page: undefined,
              page_size: undefined,
              cursor: undefined,
            }),
            caseKeysetOrder(q.sort_by, q.sort_order),
            q.cursor,
            q.page_size,
          );
    const { rows, total } = await this.cases.findPage(q, keyset?.request);
    if (keyset) {
      const page = keyset.page(rows, (r) => r);
      return { ...page, items: await this.withRelations(page.items) };
    }
    const items = await this.withRelations(rows);
    return pageOf(items, q.page, q.page_size, total ?? 0);
  }

  /** Distinct tags (case-insensitive; the spelling of the oldest case wins), sorted case-insensitively. */
  async tags(projectId: string): Promise<{ items: string[] }> {
    return { items: await this.cases.distinctTags(projectId) };
  }

  async get(id: string): Promise<TestCaseDto> {
    const row = await this.cases.findById(id);
    if (!row) throw AppException.notFound('test_case_not_found', 'Test case');
    const [dto] = await this.withRelations([row]);
    return dto;
  }

  async create(
    access: ProjectAccess,
    user: AuthenticatedUser,
    dto: CreateTestCaseDto,
  ): Promise<TestCaseDto> {
    const fields: Required<CaseFields> = {
      title: dto.title,
      description: dto.description ?? null,
      preconditions: dto.preconditions ?? null,
      steps: toSteps(dto.steps ?? []),
      priority: dto.priority ?? null,
      status: dto.status ?? 'active',
      test_case_type: dto.test_case_type ?? 'manual',
      automation_id: blankToNull(dto.automation_id),
      suite_id: dto.suite_id ?? null,
      owner_id: dto.owner_id === undefined ? user.id : dto.owner_id,
      primary_product_id: dto.primary_product_id ?? null,
      tags: normalizeStringList(dto.tags ?? []),
    };
    await this.validateReferences(access.projectId, fields, dto.owner_id !== undefined);
    if (dto.component_coverages)
      await this.validateCoverages(access.projectId, dto.component_coverages);

    const keyNumber = await this.cases.allocateCounter(access.projectId, TEST_CASE_KEY_COUNTER, 1);
    const id = uuidv7();
    await this.cases.insert({
      ...fields,
      id,
      projectId: access.projectId,
      key: formatCaseKey(keyNumber),
      keyNumber,
      createdBy: user.id,
    });
    if (dto.component_coverages?.length)
      await this.insertCoverages(access.projectId, id, dto.component_coverages);
    const created = await this.get(id);
    await this.webhooks.emit(access.projectId, 'test_case.created', created);
    return created;
  }

  /** PATCH: only present keys change; `null` clears nullable fields; coverages are replaced as a whole. */
  /**
   * PATCH. Locks in the order a suite delete does (the suite, then the cases it moves): the named
   * suite first, then `precondition` (`If-Match`, which locks the case) and the case itself. The
   * other order deadlocked with a delete of that suite, its parent or a child (409 after a second).
   */
  async update(
    access: ProjectAccess,
    id: string,
    dto: UpdateTestCaseDto,
    precondition: () => Promise<void> = async () => undefined,
  ): Promise<TestCaseDto> {
    // Checked (existence, project) with the other references below, once the case is locked.
    if (dto.suite_id) await this.cases.lockSuiteKeyShare(dto.suite_id);
    await precondition();
    if (!(await this.cases.lockForUpdate(id)))
      throw AppException.notFound('test_case_not_found', 'Test case');
    const fields: CaseFields = {};
    if (dto.title !== undefined) fields.title = dto.title;
    if (dto.description !== undefined) fields.description = dto.description;
    if (dto.preconditions !== undefined) fields.preconditions = dto.preconditions;
    if (dto.steps !== undefined) fields.steps = toSteps(dto.steps);
    if (dto.priority !== undefined) fields.priority = dto.priority;
    if (dto.status !== undefined) fields.status = dto.status;
    if (dto.test_case_type !== undefined) fields.test_case_type = dto.test_case_type;
    if (dto.automation_id !== undefined) fields.automation_id = blankToNull(dto.automation_id);
    if (dto.suite_id !== undefined) fields.suite_id = dto.suite_id;
    if (dto.owner_id !== undefined) fields.owner_id = dto.owner_id;
    if (dto.primary_product_id !== undefined) fields.primary_product_id = dto.primary_product_id;
    if (dto.tags !== undefined) fields.tags = normalizeStringList(dto.tags);
    await this.validateReferences(access.projectId, fields, true);
    if (dto.component_coverages)
      await this.validateCoverages(access.projectId, dto.component_coverages);

    if (Object.keys(fields).length > 0 || dto.component_coverages !== undefined)
      await this.cases.update(id, fields);
    if (dto.component_coverages !== undefined) {
      await this.cases.deleteCoverages(id);
      if (dto.component_coverages.length)
        await this.insertCoverages(access.projectId, id, dto.component_coverages);
    }
    return this.get(id);
  }

  /** Hard delete; coverages and bindings go with it, run items keep their snapshots. */
  async remove(id: string): Promise<void> {
    await this.cases.delete(id);
  }

  /** Coverages and bindings of a page of cases: two queries whatever the page size. */
  private async withRelations(rows: CaseRow[]): Promise<TestCaseDto[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const coverages = await this.cases.coveragesOf(ids);
    const byCase = new Map<string, CoverageDto[]>(ids.map((id) => [id, []]));
    for (const c of coverages) byCase.get(c.test_case_id)?.push(toCoverageDto(c));
    const bindings = await this.bindings.listForCases(ids);
    return rows.map((r) => toTestCaseDto(r, byCase.get(r.id) ?? [], bindings.get(r.id) ?? []));
  }

  /**
   * Suite (unknown → 404 suite_not_found, other project → 422 suite_project_mismatch), owner (must
   * have access → 422 invalid_owner), primary product (unknown or other project → 422
   * product_project_mismatch).
   */
  private async validateReferences(
    projectId: string,
    f: CaseFields,
    ownerExplicit: boolean,
  ): Promise<void> {
    if (f.suite_id) {
      const suiteProject = await this.cases.lockSuiteKeyShare(f.suite_id);
      if (suiteProject === undefined) {
        throw new AppException('suite_not_found', 'Suite not found', {
          suite_id: ['No suite with this id'],
        });
      }
      if (suiteProject !== projectId) {
        throw new AppException('suite_project_mismatch', 'The suite belongs to another project', {
          suite_id: ['The suite must belong to the same project'],
        });
      }
    }
    if (f.owner_id && ownerExplicit) {
      const ok = await this.accessService.canAccess(f.owner_id, projectId);
      if (!ok) {
        throw new AppException(
          'invalid_owner',
          'The owner must be a user with access to the project',
          {
            owner_id: ['No active user with access to this project'],
          },
        );
      }
    }
    if (f.primary_product_id) {
      const productProject = await this.cases.lockProductKeyShare(f.primary_product_id);
      if (productProject !== projectId) {
        throw new AppException(
          'product_project_mismatch',
          'The primary product must be a product of the same project',
          {
            primary_product_id: ['No product with this id in the project'],
          },
        );
      }
    }
  }

  /** Duplicate components → 422 validation_error; unknown or foreign ones → 422 component_project_mismatch. */
  private async validateCoverages(projectId: string, coverages: CoverageInputDto[]): Promise<void> {
    const dupErrors: FieldErrors = {};
    const seen = new Set<string>();
    coverages.forEach((c, i) => {
      const k = c.component_id.toLowerCase();
      if (seen.has(k))
        dupErrors[`component_coverages.${i}.component_id`] = ['Duplicate component in coverages'];
      seen.add(k);
    });
    if (Object.keys(dupErrors).length) throw AppException.validation(dupErrors);
    if (coverages.length === 0) return;
    const found = await this.cases.lockProjectComponentsKeyShare(
      projectId,
      coverages.map((c) => c.component_id),
    );
    const ok = new Set(found.map((id) => id.toLowerCase()));
    const errors: FieldErrors = {};
    coverages.forEach((c, i) => {
      if (!ok.has(c.component_id.toLowerCase())) {
        errors[`component_coverages.${i}.component_id`] = [
          `invalid component_id: ${c.component_id}`,
        ];
      }
    });
    if (Object.keys(errors).length) {
      throw new AppException(
        'component_project_mismatch',
        'component coverages must reference components from the same project',
        errors,
      );
    }
  }

  /** One multi-row insert (unnest) for all coverages of a case. */
  private async insertCoverages(
    projectId: string,
    caseId: string,
    coverages: CoverageInputDto[],
  ): Promise<void> {
    await this.cases.insertCoverages(
      projectId,
      caseId,
      coverages.map((c) => ({
        id: uuidv7(),
        component_id: c.component_id,
        coverage_type: c.coverage_type ?? 'direct',
        coverage_strength: c.coverage_strength ?? 'regression',
        is_mandatory_for_release: c.is_mandatory_for_release ?? false,
        notes: c.notes ?? null,
      })),
    );
  }
}

function toSteps(steps: TestCaseStepDto[]): TestCaseStep[] {
  return steps.map((s) => ({ action: s.action, expected: s.expected ?? null }));
}

function toCoverageDto(c: CoverageRow): CoverageDto {
  return {
    id: c.id,
    test_case_id: c.test_case_id,
    component_id: c.component_id,
    coverage_type: c.coverage_type,
    coverage_strength: c.coverage_strength,
    is_mandatory_for_release: c.is_mandatory_for_release,
    notes: c.notes,
    created_at: new Date(c.created_at).toISOString(),
    updated_at: new Date(c.updated_at).toISOString(),
  };
}

function toTestCaseDto(
  r: CaseRow,
  coverages: CoverageDto[],
  bindings: DatasetBindingDto[],
): TestCaseDto {
  return {
    id: r.id,
    project_id: r.project_id,
    key: r.key,
    title: r.title,
    description: r.description,
    preconditions: r.preconditions,
    steps: r.steps.map((s) => ({ action: s.action, expected: s.expected ?? null })),
    priority: r.priority,
    status: r.status,
    test_case_type: r.test_case_type,
    automation_id: r.automation_id,
    suite_id: r.suite_id,
    suite_name: r.suite_name,
    owner_id: r.owner_id,
    owner_name: r.owner_name,
    primary_product_id: r.primary_product_id,
    tags: r.tags,
    component_coverages: coverages,
    dataset_bindings: bindings,
    created_by: r.created_by,
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}
