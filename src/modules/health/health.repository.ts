import { Injectable } from '@nestjs/common';
import { DatabaseError, type QueryConfig } from 'pg';
import type { MigrationInterface } from 'typeorm';
import { Db } from '../../common/persistence/db.service';
import { poolOf } from '../../database/data-source-options';

/** What the readiness probe reads: the migrations the code has and those the database applied. */
@Injectable()
export class HealthRepository {
  constructor(private readonly db: Db) {}

  /** The migrations this build of the code has. */
  migrations(): readonly MigrationInterface[] {
    return this.db.dataSource.migrations;
  }

  /**
   * Names of the applied migrations: one statement on the pool with its own query deadline `ms`,
   * so a probe that times out releases (and discards) its connection at once instead of holding it
   * for DB_QUERY_TIMEOUT_MS.
   */
  async appliedMigrations(ms: number): Promise<string[]> {
    const query: QueryConfig & { query_timeout: number } = {
      text: 'SELECT name FROM schema_migrations',
      query_timeout: ms,
    };
    try {
      const res = await poolOf(this.db.dataSource).query<{ name: string }>(query);
      return res.rows.map((r) => r.name);
    } catch (err) {
      // No migrations table yet (undefined_table): nothing is applied.
      if (err instanceof DatabaseError && err.code === '42P01') return [];
      throw err;
    }
  }
}
