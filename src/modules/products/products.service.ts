import { Injectable } from '@nestjs/common';
import type { ProjectAccess } from '../../common/access/project-access';
import { AppException } from '../../common/errors/app-exception';
import { registerUniqueConstraints } from '../../common/errors/error-codes';
import { normalizeStringList } from '../../common/normalize';
import { offsetOf, Page, pageOf } from '../../common/pagination/page';
import { canonicalId, isUuid, uuidv7 } from '../../common/persistence/ids';
import { CatalogService } from '../components/catalog.service';
import { ComponentsService } from '../components/components.service';
import { buildProductSummary, type ProductSummarySnapshot } from './coverage';
import {
  CreateProductDto,
  ListProductsQueryDto,
  ProductComponentLinkDto,
  ProductComponentLinkListDto,
  ProductDto,
  ProductSummaryDto,
  ReplaceProductComponentsDto,
  UpdateProductDto,
} from './dto/product.dto';
import { ReadinessDto, ReadinessQueryDto } from './dto/readiness.dto';
import { EMPTY_SNAPSHOT, ProductCoverageRepository } from './product-coverage.repository';
import { LinkRow, ProductRow, ProductsRepository } from './products.repository';
import { atLeastRiskLevel, DEFAULT_MIN_RISK_LEVEL, evaluateReadiness } from './readiness';

registerUniqueConstraints({
  uq_products_project_key: {
    code: 'product_already_exists',
    field: 'key',
    detail: 'A product with this key already exists in this project',
  },
  uq_product_components_product_component: {
    code: 'validation_error',
    field: 'links',
    detail: 'A component is linked more than once',
  },
});

function toProductDto(r: ProductRow, snapshot: ProductSummarySnapshot | undefined): ProductDto {
  return {
    id: r.id,
    project_id: r.project_id,
    name: r.name,
    key: r.key,
    description: r.description,
    owner_id: r.owner_id,
    status: r.status,
    tags: r.tags,
    summary_snapshot: { ...(snapshot ?? EMPTY_SNAPSHOT) },
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}

function toLinkDto(r: LinkRow): ProductComponentLinkDto {
  return { ...r };
}

@Injectable()
export class ProductsService {
  constructor(
    private readonly products: ProductsRepository,
    private readonly catalog: CatalogService,
    private readonly components: ComponentsService,
    private readonly coverage: ProductCoverageRepository,
  ) {}

  /** One page: three queries (rows, total, the snapshots of the whole page in one aggregate). */
  async list(q: ListProductsQueryDto): Promise<Page<ProductDto>> {
    const { rows, total } = await this.products.page({
      projectId: q.project_id,
      statuses: q.status,
      // Lower-cased by the database, with the rule of the stored side (see the repository).
      tags: normalizeStringList(q.tag ?? []),
      search: q.search?.trim(),
      limit: q.page_size,
      offset: offsetOf(q.page, q.page_size),
    });
    const snapshots = await this.coverage.snapshots(rows.map((r) => r.id));
    return pageOf(
      rows.map((r) => toProductDto(r, snapshots.get(r.id))),
      q.page,
      q.page_size,
      total,
    );
  }

  async get(id: string): Promise<ProductDto> {
    const row = await this.row(id);
    const snapshots = await this.coverage.snapshots([id]);
    return toProductDto(row, snapshots.get(id));
  }

  async create(dto: CreateProductDto): Promise<ProductDto> {
    const id = uuidv7();
    // As the database spells it: the key allocation's lock is keyed by this text.
    const projectId = canonicalId(dto.project_id);
    await this.products.insert({
      id,
      projectId,
      ...(await this.catalog.newColumns('products', projectId, dto)),
    });
    return this.get(id);
  }

  /**
   * Partial update. The key changes only when `key` is in the body (slugified and suffixed when
   * taken; null/empty → regenerated from the (new) name).
   */
  async update(id: string, dto: UpdateProductDto): Promise<ProductDto> {
    const current = await this.row(id, true);
    const patch = await this.catalog.patchColumns('products', current, dto);
    if (Object.keys(patch).length > 0) await this.products.update(id, patch);
    return this.get(id);
  }

  /** Hard delete; its component links go with it (the components stay). */
  async remove(id: string): Promise<void> {
    await this.products.delete(id);
  }

  /**
   * Links ordered by sort_order, then link id (time-ordered, allocated in payload order: ties keep
   * the order of the PUT body).
   */
  async links(id: string): Promise<ProductComponentLinkListDto> {
    const rows = await this.products.linksOf(id);
    return { items: rows.map(toLinkDto) };
  }

  /**
   * Replaces all links. The product row is locked so concurrent replacements serialise. A component
   * listed twice → 422 `validation_error`; a component missing or of another project → 422
   * `component_project_mismatch` (every offending entry is named). Then one DELETE and one INSERT.
   */
  async replaceLinks(
    projectId: string,
    productId: string,
    dto: ReplaceProductComponentsDto,
  ): Promise<ProductComponentLinkListDto> {
    const { id } = await this.row(productId, true);
    const links = dto.links ?? [];
    // uuids are case-insensitive: compare and store them lower-cased.
    const ids = links.map((l) => canonicalId(l.component_id));
    const firstIndex = new Map<string, number>();
    const duplicates: Record<string, string[]> = {};
    ids.forEach((componentId, index) => {
      const first = firstIndex.get(componentId);
      if (first === undefined) firstIndex.set(componentId, index);
      else duplicates[`links.${index}.component_id`] = [`duplicate of links.${first}`];
    });
    if (Object.keys(duplicates).length > 0) {
      throw AppException.validation(duplicates, 'A component is linked more than once');
    }
    if (ids.length > 0) {
      const inProject = await this.components.keyShareInProject(
        projectId,
        ids.filter((componentId) => isUuid(componentId)),
      );
      const errors: Record<string, string[]> = {};
      ids.forEach((componentId, index) => {
        if (!inProject.has(componentId)) {
          errors[`links.${index}.component_id`] = [`invalid component_id: ${componentId}`];
        }
      });
      if (Object.keys(errors).length > 0) {
        throw new AppException(
          'component_project_mismatch',
          'All components must belong to the same project as the product',
          errors,
        );
      }
    }
    await this.products.replaceLinks(
      projectId,
      id,
      links.map((l, index) => ({
        componentId: ids[index],
        isCore: l.is_core ?? false,
        sortOrder: l.sort_order ?? 0,
      })),
    );
    return this.links(id);
  }

  /** The full summary: links and coverages of active cases (one statement) + buildProductSummary. */
  async summary(id: string): Promise<ProductSummaryDto> {
    const { components, coverages } = await this.coverage.summaryInputs(id);
    return buildProductSummary(id, components, coverages);
  }

  /**
   * Release readiness (issue #17 §5): the links and the active coverages (the summary's one
   * statement), the environment check when one is given, and the latest results of the mandatory
   * cases in one set-based query; then the pure rule of readiness.ts.
   */
  async readiness(access: ProjectAccess, id: string, q: ReadinessQueryDto): Promise<ReadinessDto> {
    const environmentId = q.environment_id ?? null;
    const build = q.build ?? null;
    const minLevel = q.min_risk_level ?? DEFAULT_MIN_RISK_LEVEL;
    if (
      environmentId !== null &&
      !(await this.products.environmentInProject(access.projectId, environmentId))
    ) {
      throw new AppException(
        'invalid_environment',
        'The environment does not exist in this project',
        { 'query.environment_id': ['must be the id of an environment of this project'] },
      );
    }
    const inputs = await this.coverage.summaryInputs(id);
    const components = inputs.components.filter((c) => atLeastRiskLevel(c.risk_level, minLevel));
    const coverages = components.length > 0 ? inputs.coverages : [];
    const evaluated = new Set(components.map((c) => c.component_id));
    const caseIds = [
      ...new Set(
        coverages
          .filter((c) => c.is_mandatory_for_release && evaluated.has(c.component_id))
          .map((c) => c.test_case_id),
      ),
    ];
    const latest = await this.products.latestResults(
      access.projectId,
      caseIds,
      environmentId,
      build,
    );
    const result = evaluateReadiness(components, coverages, latest, minLevel);
    return {
      verdict: result.verdict,
      product_id: id,
      evaluated_at: new Date().toISOString(),
      criteria: { environment_id: environmentId, build, min_risk_level: minLevel },
      counts: result.counts,
      blockers: result.blockers,
    };
  }

  private async row(id: string, lock = false): Promise<ProductRow> {
    const row = lock ? await this.products.findByIdForUpdate(id) : await this.products.findById(id);
    if (!row) throw AppException.notFound('product_not_found', 'Product');
    return row;
  }
}
