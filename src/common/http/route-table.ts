/**
 * Known routes (from the OpenAPI document, built at startup) so that a request on an existing path
 * with a wrong method answers 405 with `Allow`, OPTIONS answers with `Allow`, an unknown path 404
 * `route_not_found`, and metrics label requests answered before routing by their route template.
 */
const routes: Array<{ pattern: RegExp; methods: string[]; template: string }> = [];

export function registerRoutes(paths: Record<string, Record<string, unknown>>): void {
  routes.length = 0;
  for (const [path, ops] of Object.entries(paths)) {
    const pattern = new RegExp(
      '^' +
        path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+') +
        '/?$',
    );
    const methods = Object.keys(ops)
      .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
      .map((m) => m.toUpperCase());
    if (methods.includes('GET')) methods.push('HEAD');
    routes.push({ pattern, methods, template: path.replace(/\{([^}]+)\}/g, ':$1') });
  }
  // Literal segments win over parameters (`/users/me/api-keys` before `/users/{id}/…`).
  routes.sort((a, b) => paramCount(a.template) - paramCount(b.template));
}

function paramCount(template: string): number {
  return (template.match(/:/g) ?? []).length;
}

export function allowedMethodsFor(path: string): string[] {
  const set = new Set<string>();
  for (const r of routes) if (r.pattern.test(path)) r.methods.forEach((m) => set.add(m));
  return [...set];
}

/** The route template (`/api/v1/projects/:id`) of a concrete path, or null for an unknown path. */
export function routeTemplateFor(path: string): string | null {
  for (const r of routes) if (r.pattern.test(path)) return r.template;
  return null;
}
