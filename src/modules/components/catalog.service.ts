import { Injectable } from '@nestjs/common';
import { AppException } from '../../common/errors/app-exception';
import { Db } from '../../common/persistence/db.service';
import { firstFreeKey, keyCandidates, slugifyKey } from './catalog-keys';

/** The two catalogue tables with keys (code constants, never input). */
export type CatalogTable = 'products' | 'components';

const LABEL: Record<
  CatalogTable,
  { entity: string; conflict: 'product_already_exists' | 'component_already_exists' }
> = {
  products: { entity: 'product', conflict: 'product_already_exists' },
  components: { entity: 'component', conflict: 'component_already_exists' },
};

export interface KeyRequest {
  /** A key given by the client (non-empty after trimming); `null`/`undefined` → generate. */
  explicit?: string | null;
  /** Name the key is generated from. */
  name: string;
  /** Row being updated: its own key never counts as taken. */
  excludeId?: string;
}

/**
 * Rules shared by products and components: key allocation and the owner rule
 * (reference products-auth-errors.md §7.3–7.4).
 */
@Injectable()
export class CatalogService {
  constructor(private readonly db: Db) {}

  /**
   * Allocates the key of a new or updated row under a per-project advisory lock (held until the
   * request's transaction ends, so two concurrent creates never pick the same key):
   * - an explicit key is slugified; when another row of the project has it → 409
   *   `<entity>_already_exists`;
   * - otherwise the slug of the name, suffixed `-2`, `-3` … when taken (one query over all 1000
   *   candidates).
   */
  async allocateKey(table: CatalogTable, projectId: string, req: KeyRequest): Promise<string> {
    const { entity, conflict } = LABEL[table];
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
      `${table}:key:${projectId}`,
    ]);
    if (req.explicit) {
      const key = slugifyKey(req.explicit);
      const taken = await this.db.query<{ id: string }>(
        `SELECT id FROM ${table} WHERE project_id = $1 AND key = $2 AND id IS DISTINCT FROM $3::uuid`,
        [projectId, key, req.excludeId ?? null],
      );
      if (taken.length > 0) {
        throw new AppException(
          conflict,
          `A ${entity} with key '${key}' already exists in this project`,
          {
            key: [`key '${key}' is already used by another ${entity} of this project`],
          },
        );
      }
      return key;
    }
    const base = slugifyKey(req.name);
    const candidates = keyCandidates(base);
    const rows = await this.db.query<{ key: string }>(
      `SELECT key FROM ${table}
        WHERE project_id = $1 AND key = ANY($2::text[]) AND id IS DISTINCT FROM $3::uuid`,
      [projectId, candidates, req.excludeId ?? null],
    );
    const key = firstFreeKey(base, new Set(rows.map((r) => r.key)));
    if (key === null) {
      throw new AppException(
        conflict,
        `Could not generate a unique key for '${base}' after ${candidates.length} attempts; give an explicit key`,
        { key: [`no free key derived from '${base}'`] },
      );
    }
    return key;
  }

  /**
   * Owner rule: a non-null owner must be an active user who is a member of the project
   * (administrators without membership are not accepted) → else 422 `invalid_owner`.
   */
  async assertOwner(projectId: string, ownerId: string | null | undefined): Promise<void> {
    if (ownerId === null || ownerId === undefined) return;
    const rows = await this.db.query<{ is_active: boolean; role: string | null }>(
      `SELECT u.is_active, m.role FROM users u
         LEFT JOIN project_members m ON m.user_id = u.id AND m.project_id = $2
        WHERE u.id = $1`,
      [ownerId, projectId],
    );
    const row = rows[0];
    const problem = !row
      ? 'no user with this id'
      : !row.is_active
        ? 'the user is deactivated'
        : row.role === null
          ? 'owner must be a project member'
          : null;
    if (problem) {
      throw new AppException(
        'invalid_owner',
        `The owner must be an active member of the project: ${problem}`,
        {
          owner_id: [problem],
        },
      );
    }
  }
}
