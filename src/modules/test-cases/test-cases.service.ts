import { Injectable } from '@nestjs/common';
import { AccessService } from '../../common/access/access.service';
import { ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { AppException, FieldErrors } from '../../common/errors/app-exception';
import { registerUniqueConstraints } from '../../common/errors/error-codes';
import { normalizeStringList } from '../../common/normalize';
import { likePattern, offsetOf, Page, pageOf } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import { uuidv7 } from '../../common/persistence/ids';
import { RISK_LEVEL_RANK, RISK_LEVELS, RiskLevel } from '../components/risk-score';
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
import { allocateCounter, formatCaseKey, TEST_CASE_KEY_COUNTER } from './case-keys';

registerUniqueConstraints({
  uq_test_cases_project_automation_id: {
    code: 'automation_id_already_exists',
    field: 'automation_id',
    detail: 'Another test case of this project already has this automation_id',
  },
});

interface CaseRow {
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

interface CoverageRow {
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

const CASE_SELECT = `SELECT tc.id, tc.project_id, tc.key, tc.title, tc.description, tc.preconditions, tc.steps,
       tc.priority, tc.status, tc.test_case_type, tc.automation_id, tc.suite_id, s.name AS suite_name,
       tc.owner_id, u.username AS owner_name, tc.primary_product_id, tc.tags, tc.created_by,
       tc.created_at, tc.updated_at
  FROM test_cases tc
  LEFT JOIN suites s ON s.id = tc.suite_id
  LEFT JOIN users u ON u.id = tc.owner_id`;

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

/** The fields a write may set, after defaults (create) or from the present keys (PATCH). */
interface CaseFields {
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

@Injectable()
export class TestCasesService {
  constructor(
    private readonly db: Db,
    private readonly accessService: AccessService,
    private readonly bindings: BindingsService,
  ) {}

  async list(q: ListTestCasesQueryDto): Promise<Page<TestCaseDto>> {
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
      const tags = q.tag.map((t) => t.trim().toLowerCase()).filter((t) => t !== '');
      if (tags.length) where.push(`test_cases_lower_tags(tc.tags) && ${p(tags)}::text[]`);
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
    const countParams = [...params];
    const dir = q.sort_order === 'asc' ? 'ASC' : 'DESC';
    const rows = await this.db.query<CaseRow>(
      `${CASE_SELECT} WHERE ${whereSql}
        ORDER BY ${SORTS[q.sort_by]} ${dir}, tc.id ${dir}
        LIMIT ${p(q.page_size)} OFFSET ${p(offsetOf(q.page, q.page_size))}`,
      params,
    );
    const total = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM test_cases tc WHERE ${whereSql}`,
      countParams,
    );
    const items = await this.withRelations(rows);
    return pageOf(items, q.page, q.page_size, total[0]?.n ?? 0);
  }

  /** Distinct tags (case-insensitive; the spelling of the oldest case wins), sorted case-insensitively. */
  async tags(projectId: string): Promise<{ items: string[] }> {
    const rows = await this.db.query<{ tag: string }>(
      `SELECT (array_agg(t ORDER BY tc.created_at, tc.id))[1] AS tag
         FROM test_cases tc, unnest(tc.tags) AS t
        WHERE tc.project_id = $1 AND btrim(t) <> ''
        GROUP BY lower(t) ORDER BY lower(t)`,
      [projectId],
    );
    return { items: rows.map((r) => r.tag) };
  }

  async get(id: string): Promise<TestCaseDto> {
    const rows = await this.db.query<CaseRow>(`${CASE_SELECT} WHERE tc.id = $1`, [id]);
    if (!rows[0]) throw AppException.notFound('test_case_not_found', 'Test case');
    const [dto] = await this.withRelations(rows);
    return dto;
  }

  async create(
    access: ProjectAccess,
    user: AuthenticatedUser,
    dto: CreateTestCaseDto,
  ): Promise<TestCaseDto> {
    const fields: CaseFields = {
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

    const keyNumber = await allocateCounter(this.db, access.projectId, TEST_CASE_KEY_COUNTER, 1);
    const id = uuidv7();
    await this.db.query(
      `INSERT INTO test_cases (id, project_id, key, key_number, title, description, preconditions, steps, priority,
              status, test_case_type, automation_id, suite_id, owner_id, primary_product_id, tags, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13, $14, $15, $16::text[], $17)`,
      [
        id,
        access.projectId,
        formatCaseKey(keyNumber),
        keyNumber,
        fields.title,
        fields.description,
        fields.preconditions,
        JSON.stringify(fields.steps),
        fields.priority,
        fields.status,
        fields.test_case_type,
        fields.automation_id,
        fields.suite_id,
        fields.owner_id,
        fields.primary_product_id,
        fields.tags,
        user.id,
      ],
    );
    if (dto.component_coverages?.length)
      await this.insertCoverages(access.projectId, id, dto.component_coverages);
    return this.get(id);
  }

  /** PATCH: only present keys change; `null` clears nullable fields; coverages are replaced as a whole. */
  async update(access: ProjectAccess, id: string, dto: UpdateTestCaseDto): Promise<TestCaseDto> {
    const locked = await this.db.query<{ id: string }>(
      `SELECT id FROM test_cases WHERE id = $1 FOR UPDATE`,
      [id],
    );
    if (!locked[0]) throw AppException.notFound('test_case_not_found', 'Test case');
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

    const keys = Object.keys(fields) as Array<keyof CaseFields>;
    if (keys.length > 0 || dto.component_coverages !== undefined) {
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
    if (dto.component_coverages !== undefined) {
      await this.db.query(`DELETE FROM test_case_component_coverages WHERE test_case_id = $1`, [
        id,
      ]);
      if (dto.component_coverages.length)
        await this.insertCoverages(access.projectId, id, dto.component_coverages);
    }
    return this.get(id);
  }

  /** Hard delete; coverages and bindings go with it, run items keep their snapshots. */
  async remove(id: string): Promise<void> {
    await this.db.query(`DELETE FROM test_cases WHERE id = $1`, [id]);
  }

  /** Coverages and bindings of a page of cases: two queries whatever the page size. */
  private async withRelations(rows: CaseRow[]): Promise<TestCaseDto[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const coverages = await this.db.query<CoverageRow>(
      `SELECT c.id, c.test_case_id, c.component_id, c.coverage_type, c.coverage_strength,
              c.is_mandatory_for_release, c.notes, c.created_at, c.updated_at
         FROM test_case_component_coverages c
        WHERE c.test_case_id = ANY($1::uuid[]) ORDER BY c.test_case_id, c.created_at, c.id`,
      [ids],
    );
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
      const rows = await this.db.query<{ project_id: string }>(
        `SELECT project_id FROM suites WHERE id = $1 FOR KEY SHARE`,
        [f.suite_id],
      );
      if (!rows[0]) {
        throw new AppException('suite_not_found', 'Suite not found', {
          suite_id: ['No suite with this id'],
        });
      }
      if (rows[0].project_id !== projectId) {
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
      const rows = await this.db.query<{ project_id: string }>(
        `SELECT project_id FROM products WHERE id = $1 FOR KEY SHARE`,
        [f.primary_product_id],
      );
      if (rows[0]?.project_id !== projectId) {
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
    const found = await this.db.query<{ id: string }>(
      `SELECT id FROM components WHERE project_id = $1 AND id = ANY($2::uuid[]) FOR KEY SHARE`,
      [projectId, coverages.map((c) => c.component_id)],
    );
    const ok = new Set(found.map((r) => r.id.toLowerCase()));
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
    await this.db.query(
      `INSERT INTO test_case_component_coverages (id, project_id, test_case_id, component_id, coverage_type,
              coverage_strength, is_mandatory_for_release, notes)
       SELECT u.id, $1, $2, u.component_id, u.coverage_type, u.coverage_strength, u.mandatory, u.notes
         FROM unnest($3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::boolean[], $8::text[])
              AS u(id, component_id, coverage_type, coverage_strength, mandatory, notes)`,
      [
        projectId,
        caseId,
        coverages.map(() => uuidv7()),
        coverages.map((c) => c.component_id),
        coverages.map((c) => c.coverage_type ?? 'direct'),
        coverages.map((c) => c.coverage_strength ?? 'regression'),
        coverages.map((c) => c.is_mandatory_for_release ?? false),
        coverages.map((c) => c.notes ?? null),
      ],
    );
  }
}

function blankToNull(v: string | null | undefined): string | null {
  return v === undefined || v === null || v.trim() === '' ? null : v;
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
