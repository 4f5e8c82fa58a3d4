import { ResourceRef } from '../../common/access/project-access';

export const TEST_PLANS: ResourceRef = {
  table: 'test_plans',
  notFound: 'test_plan_not_found',
  label: 'Test plan',
};
