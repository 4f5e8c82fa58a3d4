import { Injectable } from '@nestjs/common';
import { AppException } from '../../common/errors/app-exception';
import { isUuid } from '../../common/persistence/ids';
import { normalizeStringList } from '../../common/normalize';
import { CatalogRepository, CatalogTable } from './catalog.repository';
import { firstFreeKey, keyCandidates, slugifyKey } from './catalog-keys';
import type {
  CatalogCreateFieldsDto,
  CatalogUpdateFieldsDto,
  CatalogStatus,
} from './dto/component.dto';

const LABEL: Record<
  CatalogTable,
  { entity: string; exhausted: 'product_key_collision' | 'component_key_collision' }
> = {
  products: { entity: 'product', exhausted: 'product_key_collision' },
  components: { entity: 'component', exhausted: 'component_key_collision' },
};

/** Columns products and components share (entity property names). */
export interface CatalogColumns {
  name: string;
  key: string;
  description: string | null;
  ownerId: string | null;
  status: CatalogStatus;
  tags: string[];
}

export interface KeyRequest {
  /** A key given by the client (non-empty after trimming); `null`/`undefined`/`''` → from the name. */
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
  constructor(private readonly catalog: CatalogRepository) {}

  /**
   * Allocates the key of a new or updated row (reference §7.3) under a per-project advisory lock
   * (held until the request's transaction ends, so two concurrent creates never pick the same key):
   * the slug of the explicit key, or of the name when none is given, then the first of `base`,
   * `base-2` … `base-1000` no other row of the project has (a taken explicit key is suffixed too,
   * never refused). All 1000 taken → 422 `<entity>_key_collision`. One query over the candidates.
   */
  async allocateKey(table: CatalogTable, projectId: string, req: KeyRequest): Promise<string> {
    const { entity, exhausted } = LABEL[table];
    await this.catalog.lockKeys(table, projectId);
    const base = slugifyKey(req.explicit ? req.explicit : req.name);
    const candidates = keyCandidates(base);
    const taken = await this.catalog.takenKeys(table, projectId, candidates, req.excludeId ?? null);
    const key = firstFreeKey(base, new Set(taken));
    if (key === null) {
      throw new AppException(
        exhausted,
        `Could not generate a unique key for '${base}' after ${candidates.length} attempts`,
        { key: [`every ${entity} key derived from '${base}' is taken; give another key`] },
      );
    }
    return key;
  }

  /**
   * Owner rule: a non-null owner must be an active user who is a member of the project
   * (administrators without membership are not accepted) → else 422 `invalid_owner`. An id that
   * is not a user id at all (malformed included) is an unknown user.
   */
  async assertOwner(projectId: string, ownerId: string | null | undefined): Promise<void> {
    if (ownerId === null || ownerId === undefined) return;
    const row = isUuid(ownerId) ? await this.catalog.ownerCandidate(ownerId, projectId) : null;
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
        { owner_id: [problem] },
      );
    }
  }

  /** Shared columns of a new product or component: owner rule, key allocation, defaults. */
  async newColumns(
    table: CatalogTable,
    projectId: string,
    dto: CatalogCreateFieldsDto & { name: string },
  ): Promise<CatalogColumns> {
    await this.assertOwner(projectId, dto.owner_id);
    return {
      name: dto.name,
      key: await this.allocateKey(table, projectId, { explicit: dto.key, name: dto.name }),
      description: dto.description ?? null,
      ownerId: dto.owner_id ?? null,
      status: dto.status ?? 'active',
      tags: normalizeStringList(dto.tags ?? []),
    };
  }

  /**
   * Shared columns of a PATCH: only the keys present change. The key changes only when `key` is in
   * the body (slugified and suffixed when taken; null/empty → regenerated from the (new) name).
   */
  async patchColumns(
    table: CatalogTable,
    current: { id: string; project_id: string; name: string },
    dto: CatalogUpdateFieldsDto & { name?: string },
  ): Promise<Partial<CatalogColumns>> {
    const patch: Partial<CatalogColumns> = {};
    if (dto.owner_id !== undefined) {
      await this.assertOwner(current.project_id, dto.owner_id);
      patch.ownerId = dto.owner_id;
    }
    if (dto.name !== undefined) patch.name = dto.name;
    if (dto.key !== undefined) {
      patch.key = await this.allocateKey(table, current.project_id, {
        explicit: dto.key,
        name: dto.name ?? current.name,
        excludeId: current.id,
      });
    }
    if (dto.description !== undefined) patch.description = dto.description;
    if (dto.status !== undefined) patch.status = dto.status;
    if (dto.tags !== undefined) patch.tags = normalizeStringList(dto.tags);
    return patch;
  }
}
