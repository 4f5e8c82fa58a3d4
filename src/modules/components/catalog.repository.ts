import { Injectable } from '@nestjs/common';
import { Db } from '../../common/persistence/db.service';
import type { CatalogStatus } from './dto/component.dto';

/** The two catalogue tables with keys (code constants, never input). */
export type CatalogTable = 'products' | 'components';

/** The columns products and components share, as their rows are read (`SELECT p.*`, `c.*`). */
export interface CatalogRow {
  id: string;
  project_id: string;
  name: string;
  key: string;
  description: string | null;
  owner_id: string | null;
  status: CatalogStatus;
  tags: string[];
}

/** A would-be owner: whether the user is active, and its role in the project (`null`: no member). */
export interface OwnerCandidateRow {
  is_active: boolean;
  role: string | null;
}

/** Reads and locks shared by products and components: key allocation and the owner rule. */
@Injectable()
export class CatalogRepository {
  constructor(private readonly db: Db) {}

  /**
   * The per-project advisory lock of `table`'s keys, held until the request's transaction ends (so
   * two concurrent creates never pick the same key).
   */
  async lockKeys(table: CatalogTable, projectId: string): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
      `${table}:key:${projectId}`,
    ]);
  }

  /** Which of `candidates` other rows of the project (all but `excludeId`) have as key. */
  async takenKeys(
    table: CatalogTable,
    projectId: string,
    candidates: string[],
    excludeId: string | null,
  ): Promise<string[]> {
    const rows = await this.db.query<{ key: string }>(
      `SELECT key FROM ${table}
        WHERE project_id = $1 AND key = ANY($2::text[]) AND id IS DISTINCT FROM $3::uuid`,
      [projectId, candidates, excludeId],
    );
    return rows.map((r) => r.key);
  }

  /** The user `userId` (a uuid) and its membership of the project; `null` for no such user. */
  async ownerCandidate(userId: string, projectId: string): Promise<OwnerCandidateRow | null> {
    const rows = await this.db.query<OwnerCandidateRow>(
      `SELECT u.is_active, m.role FROM users u
             LEFT JOIN project_members m ON m.user_id = u.id AND m.project_id = $2
            WHERE u.id = $1`,
      [userId, projectId],
    );
    return rows[0] ?? null;
  }
}
