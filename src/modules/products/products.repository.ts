import { Injectable } from '@nestjs/common';
import { likePattern } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import { uuidv7 } from '../../common/persistence/ids';
import type { CatalogRow } from '../components/catalog.repository';
import type { CatalogStatus } from '../components/dto/component.dto';
import type { RiskLevel } from '../components/risk-score';
import { ProductEntity } from './entities/product.entity';
import { readsRunsByKey, RUNS_PER_ITEM_BY_KEY } from './readiness';

/** A `products` row (`SELECT p.*`): the one read shape of the table (ProductEntity writes). */
export interface ProductRow extends CatalogRow {
  created_at: Date;
  updated_at: Date;
}

/** A `product_components` link joined with its component. */
export interface LinkRow {
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

export interface ProductPageQuery {
  projectId: string;
  statuses?: CatalogStatus[];
  /** Lower-cased tags; a product matches when it has any of them. */
  tags: string[];
  search?: string;
  limit: number;
  offset: number;
}

/** A link to write (payload order; the link ids are allocated in this order). */
export interface NewLink {
  componentId: string;
  isCore: boolean;
  sortOrder: number;
}

/** `products` and `product_components`. */
@Injectable()
export class ProductsRepository {
  constructor(private readonly db: Db) {}

  /** One page, newest change first: two queries (rows, total). */
  async page(q: ProductPageQuery): Promise<{ rows: ProductRow[]; total: number }> {
    const params: unknown[] = [q.projectId];
    const where = ['p.project_id = $1'];
    const add = (sql: (n: number) => string, value: unknown) => {
      params.push(value);
      where.push(sql(params.length));
    };
    if (q.statuses?.length) add((n) => `p.status = ANY($${n}::text[])`, q.statuses);
    // Both sides lower-cased by the same SQL function (see ComponentsRepository.page).
    if (q.tags.length)
      add((n) => `catalog_lower_tags(p.tags) && catalog_lower_tags($${n}::text[])`, q.tags);
    if (q.search) {
      add(
        (n) => `(p.name ILIKE $${n} OR p.key ILIKE $${n} OR p.description ILIKE $${n})`,
        likePattern(q.search),
      );
    }
    const whereSql = where.join(' AND ');
    const rows = await this.db.query<ProductRow>(
      `SELECT p.* FROM products p WHERE ${whereSql}
        ORDER BY p.updated_at DESC, p.id DESC
        LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, q.limit, q.offset],
    );
    const count = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM products p WHERE ${whereSql}`,
      params,
    );
    return { rows, total: count[0]?.n ?? 0 };
  }

  async findById(id: string): Promise<ProductRow | null> {
    return this.row(id, false);
  }

  /** The product, locked FOR NO KEY UPDATE in the request's transaction. */
  async findByIdForUpdate(id: string): Promise<ProductRow | null> {
    return this.row(id, true);
  }

  private async row(id: string, lock: boolean): Promise<ProductRow | null> {
    const rows = await this.db.query<ProductRow>(
      `SELECT p.* FROM products p WHERE p.id = $1${lock ? ' FOR NO KEY UPDATE' : ''}`,
      [id],
    );
    return rows[0] ?? null;
  }

  async insert(product: Partial<ProductEntity>): Promise<void> {
    await this.db.repo(ProductEntity).insert(product);
  }

  async update(id: string, patch: Partial<ProductEntity>): Promise<void> {
    await this.db.repo(ProductEntity).update({ id }, patch);
  }

  /** Hard delete; its component links go with it (the components stay). */
  async delete(id: string): Promise<void> {
    await this.db.query(`DELETE FROM products WHERE id = $1`, [id]);
  }

  /**
   * Links ordered by sort_order, then link id (time-ordered, allocated in payload order: ties keep
   * the order of the PUT body).
   */
  async linksOf(productId: string): Promise<LinkRow[]> {
    return this.db.query<LinkRow>(
      `SELECT pc.id, pc.product_id, pc.component_id, c.key AS component_key,
              c.name AS component_name, c.status AS component_status, c.risk_level, c.risk_score,
              pc.is_core, pc.sort_order
         FROM product_components pc JOIN components c ON c.id = pc.component_id
        WHERE pc.product_id = $1
        ORDER BY pc.sort_order, pc.id`,
      [productId],
    );
  }

  /** Replaces the product's links: one DELETE, then one INSERT of all `links` (none when empty). */
  async replaceLinks(projectId: string, productId: string, links: NewLink[]): Promise<void> {
    await this.db.query(`DELETE FROM product_components WHERE product_id = $1`, [productId]);
    if (links.length === 0) return;
    await this.db.query(
      `INSERT INTO product_components (id, product_id, component_id, project_id, is_core, sort_order)
         SELECT u.id, $1::uuid, u.component_id, $2::uuid, u.is_core, u.sort_order
           FROM unnest($6::uuid[], $3::uuid[], $4::boolean[], $5::int[])
                AS u(id, component_id, is_core, sort_order)`,
      [
        productId,
        projectId,
        links.map((l) => l.componentId),
        links.map((l) => l.isCore),
        links.map((l) => l.sortOrder),
        links.map(() => uuidv7()),
      ],
    );
  }

  /** True when `environmentId` is an environment of the project (archived ones included). */
  async environmentInProject(projectId: string, environmentId: string): Promise<boolean> {
    const rows = await this.db.query<{ one: number }>(
      `SELECT 1 AS one FROM environments WHERE id = $1 AND project_id = $2`,
      [environmentId, projectId],
    );
    return rows.length > 0;
  }

  /**
   * The latest result of each case of `caseIds` (release readiness, issue #17 §5): the status of
   * its run item in the newest run (by `created_at`, then id) of the project that contains it,
   * among runs not archived and, when given, on `environmentId` and with exactly `build`; cases
   * without such a run are absent from the map. Two set-based statements at most: without an
   * environment or build, the cases' items are counted first (bounded), and when they are few
   * beside the project's runs (`readsRunsByKey`) each item's run is read by key; otherwise one
   * statement joins them as PostgreSQL plans it (with a filter, the runs come from their index).
   * Both answer the same rows.
   */
  async latestResults(
    projectId: string,
    caseIds: readonly string[],
    environmentId: string | null,
    build: string | null,
  ): Promise<Map<string, string>> {
    if (caseIds.length === 0) return new Map();
    const byKey =
      environmentId === null &&
      build === null &&
      (await this.fewItemsBesideRuns(projectId, caseIds));
    const rows = await this.db.query<{ test_case_id: string; status: string }>(
      byKey ? LATEST_RESULTS_BY_RUN_KEY_SQL : LATEST_RESULTS_SQL,
      byKey ? [projectId, caseIds] : [projectId, caseIds, environmentId, build],
    );
    return new Map(rows.map((r) => [r.test_case_id, r.status]));
  }

  /** {@link readsRunsByKey} of the cases' items (counted up to where it answers false). */
  private async fewItemsBesideRuns(
    projectId: string,
    caseIds: readonly string[],
  ): Promise<boolean> {
    const [row] = await this.db.query<{ items: number; runs: number }>(ITEMS_BESIDE_RUNS_SQL, [
      projectId,
      caseIds,
      RUNS_PER_ITEM_BY_KEY,
    ]);
    return readsRunsByKey(row.items, row.runs);
  }
}

/** The newest non-archived run's item of each case, joined as PostgreSQL plans it. */
const LATEST_RESULTS_SQL = `
  SELECT DISTINCT ON (ri.test_case_id) ri.test_case_id, ri.status
    FROM run_items ri
    JOIN test_runs r ON r.id = ri.test_run_id
   WHERE ri.test_case_id = ANY($2::uuid[])
     AND r.project_id = $1
     AND r.status <> 'archived'
     AND ($3::uuid IS NULL OR r.environment_id = $3::uuid)
     AND ($4::text IS NULL OR r.build = $4::text)
   ORDER BY ri.test_case_id, r.created_at DESC, r.id DESC`;

/**
 * The same answer without filters, each item's run read by its key: the cases' items from
 * `ix_run_items_project_case_run`, then per item its run through `pk_test_runs` (`OFFSET 0` keeps
 * the subquery from being flattened into a join PostgreSQL would plan as a hash over every run).
 */
const LATEST_RESULTS_BY_RUN_KEY_SQL = `
  SELECT DISTINCT ON (ri.test_case_id) ri.test_case_id, ri.status
    FROM run_items ri
   CROSS JOIN LATERAL (
     SELECT r.created_at, r.id FROM test_runs r
      WHERE r.id = ri.test_run_id AND r.status <> 'archived'
     OFFSET 0) r
   WHERE ri.project_id = $1
     AND ri.test_case_id = ANY($2::uuid[])
   ORDER BY ri.test_case_id, r.created_at DESC, r.id DESC`;

/**
 * The project's non-archived runs (its run-count slots) and the cases' items, counted up to
 * `runs / $3 + 1` (where `readsRunsByKey` turns false) from the items' index.
 */
const ITEMS_BESIDE_RUNS_SQL = `
  WITH runs AS MATERIALIZED (
    SELECT coalesce(sum(n), 0)::bigint AS n
      FROM project_run_counts
     WHERE project_id = $1 AND status <> 'archived')
  SELECT (SELECT n FROM runs)::float8 AS runs,
         (SELECT count(*) FROM (
            SELECT 1 FROM run_items
             WHERE project_id = $1 AND test_case_id = ANY($2::uuid[])
             LIMIT (SELECT n / $3::int + 1 FROM runs)) s)::float8 AS items`;
