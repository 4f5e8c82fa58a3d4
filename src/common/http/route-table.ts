/**
 * Known routes (from the OpenAPI document, built at startup) so that a request on an existing path
 * with a wrong method answers 405 with `Allow`, OPTIONS answers with `Allow`, an unknown path 404
 * `route_not_found`, and metrics label requests answered before routing by their route template.
 */
const routes: Array<{ pattern: RegExp; methods: string[]; template: string; params: number }> = [];

/**
 * Templates the application's Express router matches in any letter case (its `case sensitive
 * routing` setting is off, as Nest leaves it: `GET /api/v1/Projects` is the project list), so their
 * 405s and OPTIONS do too. The pages outside the prefix that setup-app answers itself (ReDoc, the
 * error catalogue, the favicon, the dashboard) compare paths exactly, and so does their pattern.
 */
const CASE_INSENSITIVE_TEMPLATES = /^\/api\/v1\//;

export function registerRoutes(paths: Record<string, Record<string, unknown>>): void {
  routes.length = 0;
  for (const [path, ops] of Object.entries(paths)) {
    const pattern = new RegExp(
      '^' +
        path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+') +
        '/?$',
      CASE_INSENSITIVE_TEMPLATES.test(path) ? 'i' : '',
    );
    const methods = Object.keys(ops)
      .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
      .map((m) => m.toUpperCase());
    if (methods.includes('GET')) methods.push('HEAD');
    const template = path.replace(/\{([^}]+)\}/g, ':$1');
    routes.push({ pattern, methods, template, params: (template.match(/:/g) ?? []).length });
  }
  // Literal segments win over parameters (`/users/me/api-keys` before `/users/{id}/…`).
  routes.sort((a, b) => a.params - b.params);
}

/**
 * The methods of the route templates a concrete path matches with the fewest parameters: a path
 * with a template of its own offers that template's methods only (`/environments/use-cases` is
 * GET, though `/environments/{id}` matches it too). A method only the parameterised template has is
 * still routed there, as Express routes it (DELETE answers 404 environment_not_found), never 405.
 */
export function allowedMethodsFor(path: string): string[] {
  const set = new Set<string>();
  let params = Infinity;
  for (const r of routes) {
    // Sorted by parameter count: once a match is found, the templates with more parameters are out.
    if (r.params > params) break;
    if (!r.pattern.test(path)) continue;
    params = r.params;
    r.methods.forEach((m) => set.add(m));
  }
  return [...set];
}

/** The route template (`/api/v1/projects/:id`) of a concrete path, or null for an unknown path. */
export function routeTemplateFor(path: string): string | null {
  for (const r of routes) if (r.pattern.test(path)) return r.template;
  return null;
}

/** `scheme://authority` at the start of a request target in absolute form. */
const ABSOLUTE_FORM = /^[a-z][a-z\d+.-]*:\/\/[^/?#]*/i;

/**
 * The path of a request, without its query: what follows the authority of a target in absolute
 * form (`GET http://host/api/v1/projects?x=1`, as proxies send it: RFC 9112 §3.2.2; Express routes
 * its path), else the target before `?`. The path is kept as sent (no dot segments resolved, no
 * escapes changed), as the router reads it. The original target, not `url`: a router mounted at a
 * path (the not-found handler) leaves `req.url` stripped.
 */
export function requestPath(req: { originalUrl?: string; url?: string }): string {
  const target = req.originalUrl ?? req.url ?? '';
  const authority = ABSOLUTE_FORM.exec(target);
  if (authority === null) return target.split('?')[0];
  const path = target.slice(authority[0].length).split('?')[0];
  return path.startsWith('/') ? path : `/${path}`;
}
