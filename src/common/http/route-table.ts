/**
 * Known routes (from the OpenAPI document, built at startup) so that a request on an existing path
 * with a wrong method answers 405 with `Allow`, and an unknown path 404 `route_not_found`.
 */
const routes: Array<{ pattern: RegExp; methods: string[] }> = [];

export function registerRoutes(paths: Record<string, Record<string, unknown>>): void {
  routes.length = 0;
  for (const [path, ops] of Object.entries(paths)) {
    const pattern = new RegExp(
      '^' + path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+') + '/?$',
    );
    const methods = Object.keys(ops)
      .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
      .map((m) => m.toUpperCase());
    if (methods.includes('GET')) methods.push('HEAD');
    routes.push({ pattern, methods });
  }
}

export function allowedMethodsFor(path: string): string[] {
  const set = new Set<string>();
  for (const r of routes) if (r.pattern.test(path)) r.methods.forEach((m) => set.add(m));
  return [...set];
}
