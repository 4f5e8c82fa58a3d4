import type { ResourceRef } from '../../common/access/project-access';

/** Import records addressed by id (`/imports/{id}`). */
export const IMPORTS: ResourceRef = {
  table: 'junit_imports',
  notFound: 'import_not_found',
  label: 'Import',
};
