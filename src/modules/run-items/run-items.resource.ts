import type { ResourceRef } from '../../common/access/project-access';

/** Run items addressed by id (`/run-cases/{id}`). */
export const RUN_ITEMS: ResourceRef = {
  table: 'run_items',
  notFound: 'run_case_not_found',
  label: 'Run case',
};

/** Rows addressed by id (`/run-cases/rows/{row_id}`). */
export const RUN_ITEM_ROWS: ResourceRef = {
  table: 'run_item_rows',
  notFound: 'run_case_row_not_found',
  label: 'Run case row',
};
