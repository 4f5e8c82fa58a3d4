import { ErrorCode } from '../errors/error-codes';
import { ProjectRole } from './roles';

/** The caller's standing in the project a request addresses (set by the RolesGuard). */
export interface ProjectAccess {
  projectId: string;
  /** Effective role: administrators act as lead. */
  role: ProjectRole;
  isAdmin: boolean;
}

/** A project-scoped table that endpoints address by id. Every such table has a `project_id` column. */
export interface ResourceRef {
  table: string;
  notFound: ErrorCode;
  label: string;
  /** Column holding the project id; `id` for the projects table itself. */
  projectColumn?: string;
}

/** Where the RolesGuard finds the project of a request. */
export type ProjectSource =
  | { in: 'query' | 'body'; key?: string }
  | { resource: ResourceRef; param?: string };

export const PROJECTS: ResourceRef = {
  table: 'projects',
  notFound: 'project_not_found',
  label: 'Project',
  projectColumn: 'id',
};

/** Project from `?project_id=` (lists). */
export const fromQuery = (key = 'project_id'): ProjectSource => ({ in: 'query', key });
/** Project from the JSON body's `project_id` (creates). */
export const fromBody = (key = 'project_id'): ProjectSource => ({ in: 'body', key });
/** Project of the resource addressed by path parameter `param` (default `id`). */
export const fromResource = (resource: ResourceRef, param = 'id'): ProjectSource => ({ resource, param });
