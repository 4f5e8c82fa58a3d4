import { ResourceRef } from '../../common/access/project-access';

export const TEST_CASES: ResourceRef = {
  table: 'test_cases',
  notFound: 'test_case_not_found',
  label: 'Test case',
};
