import { Injectable } from '@nestjs/common';
import { AppException } from '../../common/errors/app-exception';
import { registerUniqueConstraints } from '../../common/errors/error-codes';
import { normalizeStringList } from '../../common/normalize';
import { likePattern, offsetOf, Page, pageOf } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import { canonicalId, isUuid, uuidv7 } from '../../common/persistence/ids';
import { CatalogService } from '../components/catalog.service';
import type { RiskLevel } from '../components/risk-score';
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
import { ProductEntity } from './entities/product.entity';
import { EMPTY_SNAPSHOT, ProductCoverageRepository } from './product-coverage.repository';

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

interface ProductRow {
  id: string;
  project_id: string;
  name: string;
  key: string;
  description: string | null;
  owner_id: string | null;
  status: 'active' | 'archived';
  tags: string[];
  created_at: Date;
  updated_at: Date;
}

interface LinkRow {
  id: string;
  product_id: string;
  component_id: string;
  component_key: string;
  component_name: string;
  component_status: 'active' | 'archived';
  risk_level: RiskLevel;
  risk_score: number;
  is_core: boolean;
  sort_order: number;
}

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
    private readonly db: Db,
    private readonly catalog: CatalogService,
    private readonly coverage: ProductCoverageRepository,
  ) {}

  /** One page: three queries (rows, total, the snapshots of the whole page in one aggregate). */
  async list(q: ListProductsQueryDto): Promise<Page<ProductDto>> {
    const params: unknown[] = [q.project_id];
    const where = ['p.project_id = $1'];
    const add = (sql: (n: number) => string, value: unknown) => {
      params.push(value);
      where.push(sql(params.length));
    };
    if (q.status?.length) add((n) => `p.status = ANY($${n}::text[])`, q.status);
    const tags = normalizeStringList(q.tag ?? []).map((t) => t.toLowerCase());
    if (tags.length) add((n) => `catalog_lower_tags(p.tags) && $${n}::text[]`, tags);
    const search = q.search?.trim();
    if (search) {
      add(
        (n) => `(p.name ILIKE $${n} OR p.key ILIKE $${n} OR p.description ILIKE $${n})`,
        likePattern(search),
      );
    }
    const whereSql = where.join(' AND ');
    const rows = await this.db.query<ProductRow>(
      `SELECT p.* FROM products p WHERE ${whereSql}
        ORDER BY p.updated_at DESC, p.id DESC
        LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, q.page_size, offsetOf(q.page, q.page_size)],
    );
    const count = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM products p WHERE ${whereSql}`,
      params,
    );
    const snapshots = await this.coverage.snapshots(rows.map((r) => r.id));
    return pageOf(
      rows.map((r) => toProductDto(r, snapshots.get(r.id))),
      q.page,
      q.page_size,
      count[0]?.n ?? 0,
    );
  }

  async get(id: string): Promise<ProductDto> {
    const row = await this.row(id);
    const snapshots = await this.coverage.snapshots([id]);
    return toProductDto(row, snapshots.get(id));
  }

  async create(dto: CreateProductDto): Promise<ProductDto> {
    const id = uuidv7();
    await this.db.repo(ProductEntity).insert({
      id,
      projectId: dto.project_id,
      ...(await this.catalog.newColumns('products', dto.project_id, dto)),
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
    if (Object.keys(patch).length > 0) await this.db.repo(ProductEntity).update({ id }, patch);
    return this.get(id);
  }

  /** Hard delete; its component links go with it (the components stay). */
  async remove(id: string): Promise<void> {
    await this.db.query(`DELETE FROM products WHERE id = $1`, [id]);
  }

  /**
   * Links ordered by sort_order, then link id (time-ordered, allocated in payload order: ties keep
   * the order of the PUT body).
   */
  async links(id: string): Promise<ProductComponentLinkListDto> {
    const rows = await this.db.query<LinkRow>(
      `SELECT pc.id, pc.product_id, pc.component_id, c.key AS component_key,
              c.name AS component_name, c.status AS component_status, c.risk_level, c.risk_score,
              pc.is_core, pc.sort_order
         FROM product_components pc JOIN components c ON c.id = pc.component_id
        WHERE pc.product_id = $1
        ORDER BY pc.sort_order, pc.id`,
      [id],
    );
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
      const found = await this.db.query<{ id: string }>(
        `SELECT id FROM components WHERE project_id = $1 AND id = ANY($2::uuid[]) FOR KEY SHARE`,
        [projectId, ids.filter((componentId) => isUuid(componentId))],
      );
      const inProject = new Set(found.map((r) => r.id));
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
    await this.db.query(`DELETE FROM product_components WHERE product_id = $1`, [id]);
    if (ids.length > 0) {
      await this.db.query(
        `INSERT INTO product_components (id, product_id, component_id, project_id, is_core, sort_order)
         SELECT u.id, $1::uuid, u.component_id, $2::uuid, u.is_core, u.sort_order
           FROM unnest($6::uuid[], $3::uuid[], $4::boolean[], $5::int[])
                AS u(id, component_id, is_core, sort_order)`,
        [
          id,
          projectId,
          ids,
          links.map((l) => l.is_core ?? false),
          links.map((l) => l.sort_order ?? 0),
          ids.map(() => uuidv7()),
        ],
      );
    }
    return this.links(id);
  }

  /** The full summary: two queries (links, coverages of active cases) + buildProductSummary. */
  async summary(id: string): Promise<ProductSummaryDto> {
    const components = await this.coverage.linkedComponents(id);
    const coverages = components.length > 0 ? await this.coverage.activeCoverages(id) : [];
    return buildProductSummary(id, components, coverages);
  }

  private async row(id: string, lock = false): Promise<ProductRow> {
    const rows = await this.db.query<ProductRow>(
      `SELECT p.* FROM products p WHERE p.id = $1${lock ? ' FOR NO KEY UPDATE' : ''}`,
      [id],
    );
    if (!rows[0]) throw AppException.notFound('product_not_found', 'Product');
    return rows[0];
  }
}
