import { Injectable } from '@nestjs/common';
import { ProjectAccess } from '../../common/access/project-access';
import { AppException } from '../../common/errors/app-exception';
import { Page, pageOf } from '../../common/pagination/page';
import { uuidv7 } from '../../common/persistence/ids';
import { CreateSuiteDto, ListSuitesQueryDto, SuiteDto, UpdateSuiteDto } from './dto/suite.dto';
import { checkSuiteParent } from './suite-tree';
import { SuiteRow, SuitesRepository } from './suites.repository';

@Injectable()
export class SuitesService {
  constructor(private readonly suites: SuitesRepository) {}

  async list(q: ListSuitesQueryDto): Promise<Page<SuiteDto>> {
    const { rows, total } = await this.suites.findPage(q);
    return pageOf(rows.map(toSuiteDto), q.page, q.page_size, total);
  }

  async get(id: string): Promise<SuiteDto> {
    const row = await this.suites.findById(id);
    if (!row) throw AppException.notFound('suite_not_found', 'Suite');
    return toSuiteDto(row);
  }

  async create(access: ProjectAccess, dto: CreateSuiteDto): Promise<SuiteDto> {
    if (dto.parent_id) {
      // Serialises with a concurrent move (which locks every suite of the project) or delete of the
      // parent, so the depth is checked against the committed tree and the parent still exists.
      await this.suites.lockForShare(dto.parent_id);
      await this.assertParent(access.projectId, null, dto.parent_id);
    }
    const id = uuidv7();
    await this.suites.insert({
      id,
      projectId: access.projectId,
      parentId: dto.parent_id ?? null,
      name: dto.name,
      description: dto.description ?? null,
      position: dto.position ?? 100,
    });
    return this.get(id);
  }

  async update(access: ProjectAccess, id: string, dto: UpdateSuiteDto): Promise<SuiteDto> {
    // Moves lock the project's suites in a fixed order so two concurrent moves cannot build a cycle.
    if (dto.parent_id) {
      await this.suites.lockAllOfProject(access.projectId);
      await this.assertParent(access.projectId, id, dto.parent_id);
    }
    await this.suites.update(id, {
      name: dto.name,
      parent_id: dto.parent_id,
      description: dto.description,
      position: dto.position,
    });
    return this.get(id);
  }

  /**
   * Child suites and the suite's test cases move to its parent (or become roots); test plans that
   * included the suite keep the same cases; nothing is lost.
   */
  async remove(id: string): Promise<void> {
    const suite = await this.suites.lockForDelete(id);
    if (!suite) throw AppException.notFound('suite_not_found', 'Suite');
    await this.suites.deleteMovingContentTo(id, suite.parent_id);
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
    const chain = await this.suites.ancestorChain(parentId);
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
    const height = suiteId === null ? 1 : await this.suites.subtreeHeight(suiteId);
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
