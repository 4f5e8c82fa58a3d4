/** Project roles, lowest to highest. */
export const PROJECT_ROLES = ['viewer', 'tester', 'lead'] as const;
export type ProjectRole = (typeof PROJECT_ROLES)[number];

export function roleRank(role: ProjectRole): number {
  return PROJECT_ROLES.indexOf(role);
}

export function hasRole(actual: ProjectRole, needed: ProjectRole): boolean {
  return roleRank(actual) >= roleRank(needed);
}

export function isProjectRole(v: unknown): v is ProjectRole {
  return typeof v === 'string' && (PROJECT_ROLES as readonly string[]).includes(v);
}
