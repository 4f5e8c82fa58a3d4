import type { ResourceRef } from '../../common/access/project-access';

/** Test runs addressed by id (`/test-runs/{id}`). */
export const TEST_RUNS: ResourceRef = {
  table: 'test_runs',
  notFound: 'test_run_not_found',
  label: 'Test run',
};
