import type { MigrationInterface } from 'typeorm';

/**
 * Whether every migration the code has is recorded as applied. A migration's name is its `name`,
 * else its class name (TypeORM's rule for the `name` column of the migrations table).
 */
export function readinessVerdict(
  migrations: readonly MigrationInterface[],
  applied: readonly string[],
): 'ready' | 'migrations_pending' {
  const done = new Set(applied);
  const pending = migrations.some((m) => !done.has(m.name ?? m.constructor.name));
  return pending ? 'migrations_pending' : 'ready';
}
