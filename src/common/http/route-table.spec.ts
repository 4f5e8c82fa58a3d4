import { allowedMethodsFor, registerRoutes, requestPath, routeTemplateFor } from './route-table';

describe('requestPath', () => {
  it.each([
    ['/api/v1/projects?x=1', '/api/v1/projects'],
    ['/api/v1/projects', '/api/v1/projects'],
    // Absolute form (RFC 9112 §3.2.2, as proxies send it): the path after the authority.
    ['http://127.0.0.1:8080/api/v1/projects/abc?x=1', '/api/v1/projects/abc'],
    ['HTTPS://user@Example.com/api/v1/Projects', '/api/v1/Projects'],
    ['http://example.com', '/'],
    ['http://example.com?x=1', '/'],
    // Kept as sent, as Express's router reads it: no dot segments resolved, no escapes changed.
    ['http://example.com/api/v1/x/../projects', '/api/v1/x/../projects'],
    ['http://example.com/a%2Fb', '/a%2Fb'],
    // Not absolute form: before `?`, as ever (`//host/x` is a path whose first segment is empty).
    ['//example.com/api/v1/projects?x=1', '//example.com/api/v1/projects'],
    ['*', '*'],
    ['', ''],
  ])('%p → %p', (target, path) => {
    expect(requestPath({ originalUrl: target, url: '/stripped' })).toBe(path);
  });

  it('falls back to url without originalUrl', () => {
    expect(requestPath({ url: 'http://h/api/v1/runs?page=2' })).toBe('/api/v1/runs');
  });
});

describe('route table', () => {
  beforeAll(() => {
    registerRoutes({
      '/api/v1/projects': { get: {}, post: {} },
      '/api/v1/projects/{id}': { get: {}, patch: {}, delete: {} },
      '/api/v1/environments/{id}': { get: {}, patch: {}, delete: {} },
      '/api/v1/environments/use-cases': { get: {} },
      '/api/v1/run-cases/{id}': { get: {}, patch: {}, delete: {} },
      '/api/v1/run-cases/bulk': { post: {} },
      '/redoc': { get: {} },
    });
  });

  it('matches API paths in any letter case, as Express routes them', () => {
    expect(allowedMethodsFor('/api/v1/Projects')).toEqual(['GET', 'POST', 'HEAD']);
    expect(allowedMethodsFor('/API/V1/PROJECTS/')).toEqual(['GET', 'POST', 'HEAD']);
    expect(routeTemplateFor('/api/v1/PROJECTS/ABC')).toBe('/api/v1/projects/:id');
  });

  it('matches the pages setup-app answers itself exactly, as it does', () => {
    expect(allowedMethodsFor('/redoc')).toEqual(['GET', 'HEAD']);
    expect(allowedMethodsFor('/REDOC')).toEqual([]);
    expect(routeTemplateFor('/Redoc')).toBeNull();
  });

  it("a path with a template of its own offers that template's methods only", () => {
    expect(allowedMethodsFor('/api/v1/environments/use-cases')).toEqual(['GET', 'HEAD']);
    expect(allowedMethodsFor('/api/v1/Environments/Use-Cases/')).toEqual(['GET', 'HEAD']);
    expect(allowedMethodsFor('/api/v1/run-cases/bulk')).toEqual(['POST']);
    expect(routeTemplateFor('/api/v1/run-cases/bulk')).toBe('/api/v1/run-cases/bulk');
    // Any other value of the parameter is the parameterised template's.
    expect(allowedMethodsFor('/api/v1/environments/use-case')).toEqual([
      'GET',
      'PATCH',
      'DELETE',
      'HEAD',
    ]);
    expect(allowedMethodsFor('/api/v1/nothing')).toEqual([]);
  });
});
