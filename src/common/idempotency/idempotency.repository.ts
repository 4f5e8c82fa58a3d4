import { Injectable } from '@nestjs/common';
import { Db } from '../persistence/db.service';

/** What a key is scoped to: the principal (a user; an API key acts as its user), method and path. */
export interface IdempotencyScope {
  principalId: string;
  method: string;
  path: string;
  key: string;
}

/** A response stored with its key. */
export interface StoredResponse {
  fingerprint: string;
  status: number;
  /** Response headers to give back (Content-Type, Location, …). */
  headers: Record<string, string>;
  body: Buffer;
}

/** Rows deleted per statement by the purge of expired keys. */
export const IDEMPOTENCY_PURGE_BATCH = 1000;

/** The SQL of `idempotency_keys` (owned by the idempotency layer of src/common). */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly db: Db) {}

  /**
   * Takes the key's transaction-scoped advisory lock without waiting: false when another
   * transaction (a request with the same key still running, on any instance) holds it. The lock
   * goes with the transaction (commit, rollback, or a connection that died).
   */
  async tryLock(scope: IdempotencyScope): Promise<boolean> {
    const rows = await this.db.query<{ locked: boolean }>(
      `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked`,
      [`idempotency:${scope.principalId}:${scope.method}:${scope.path}:${scope.key}`],
    );
    return rows[0]?.locked === true;
  }

  /** The unexpired response stored under the key, or null. */
  async find(scope: IdempotencyScope): Promise<StoredResponse | null> {
    const rows = await this.db.query<StoredResponse>(
      `SELECT fingerprint, status, headers, body FROM idempotency_keys
        WHERE principal_id = $1 AND method = $2 AND path = $3 AND key = $4 AND expires_at > now()`,
      [scope.principalId, scope.method, scope.path, scope.key],
    );
    return rows[0] ?? null;
  }

  /** Stores the response of the key (replacing an expired one not purged yet), valid for `ttlHours`. */
  async save(scope: IdempotencyScope, response: StoredResponse, ttlHours: number): Promise<void> {
    await this.db.query(
      `INSERT INTO idempotency_keys
         (principal_id, method, path, key, fingerprint, status, headers, body, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, now(), now() + make_interval(hours => $9))
       ON CONFLICT ON CONSTRAINT pk_idempotency_keys DO UPDATE SET
         fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status, headers = EXCLUDED.headers,
         body = EXCLUDED.body, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at`,
      [
        scope.principalId,
        scope.method,
        scope.path,
        scope.key,
        response.fingerprint,
        response.status,
        JSON.stringify(response.headers),
        response.body,
        ttlHours,
      ],
    );
  }

  /** Marks where the handler's work starts, so a 4xx can undo it and still store its answer. */
  async savepoint(): Promise<void> {
    await this.db.query(`SAVEPOINT idempotent_work`);
  }

  /** Undoes the handler's work (the transaction stays open for storing the answer). */
  async rollbackToSavepoint(): Promise<void> {
    await this.db.query(`ROLLBACK TO SAVEPOINT idempotent_work`);
  }

  /**
   * Deletes up to {@link IDEMPOTENCY_PURGE_BATCH} expired keys (by `ix_idempotency_keys_expires_at`);
   * rows another instance's purge is deleting are skipped, so any number of instances may purge at
   * once. Returns how many were deleted.
   */
  async purgeExpiredBatch(): Promise<number> {
    const result = await this.db.query<unknown>(
      `DELETE FROM idempotency_keys WHERE ctid IN (
         SELECT ctid FROM idempotency_keys WHERE expires_at <= now()
          ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
      [IDEMPOTENCY_PURGE_BATCH],
    );
    // DELETE answers [rows, rowCount] (Db.query keeps TypeORM's shape).
    return Number((result as unknown as [unknown[], number])[1] ?? 0);
  }
}
