import { ResourceRef } from '../../common/access/project-access';

export const DATASETS: ResourceRef = {
  table: 'datasets',
  notFound: 'dataset_not_found',
  label: 'Dataset',
};
