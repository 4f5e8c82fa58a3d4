import { ResourceRef } from '../../common/access/project-access';

export const SUITES: ResourceRef = { table: 'suites', notFound: 'suite_not_found', label: 'Suite' };
