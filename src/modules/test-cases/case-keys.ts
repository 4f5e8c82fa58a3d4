import { Db } from '../../common/persistence/db.service';

/** Counter name of test case keys in `project_counters`. */
export const TEST_CASE_KEY_COUNTER = 'test_case_key';

/** `TC-<n>`: the key of the n-th test case of a project (CONTRACT §7). */
export function formatCaseKey(n: number): string {
  return `TC-${n}`;
}

/**
 * Allocates `count` consecutive numbers of a per-project counter and returns the first. The upsert
 * takes the counter row's lock until the request transaction ends, so concurrent creators serialise,
 * numbers stay contiguous, and a number is never handed out twice (deleting a case never frees one).
 */
export async function allocateCounter(
  db: Db,
  projectId: string,
  name: string,
  count: number,
): Promise<number> {
  const rows = await db.query<{ value: number }>(
    `INSERT INTO project_counters (project_id, name, value) VALUES ($1, $2, $3)
     ON CONFLICT (project_id, name) DO UPDATE SET value = project_counters.value + EXCLUDED.value
     RETURNING value`,
    [projectId, name, count],
  );
  return rows[0].value - count + 1;
}
