import type { DataSource } from 'typeorm';

/** Arbitrary constant: the advisory lock id every instance takes before migrating. */
export const MIGRATION_LOCK_ID = 72_114_031;

/**
 * Runs pending migrations under a PostgreSQL session advisory lock so several instances can start
 * against one database at once: the first migrates, the others wait and then find nothing to do.
 * `afterMigrate` runs while the lock is still held (used for the one-time bootstrap administrator).
 * Returns the names of the migrations this call applied.
 */
export async function migrateUnderLock(
  dataSource: DataSource,
  afterMigrate?: () => Promise<void>,
): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      if (afterMigrate) await afterMigrate();
      return applied.map((m) => m.name);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
    }
  } finally {
    await runner.release();
  }
}
