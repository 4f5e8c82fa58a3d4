import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What the README and the deployment files promise agrees with the code. The curl examples share one
 * convention (found by an audit: most examples were written as
 * `$BASE/api/v1/...` while the walkthrough set `BASE=http://localhost:3000/api/v1`, so they
 * requested /api/v1/api/v1/...): BASE and TOKEN are set once, before the first example, and every
 * `$BASE` path, once BASE is substituted, is a route of the API document. And Docker waits longer
 * than the shutdown's own grace period before it kills the container. Text only: no server.
 */
const root = join(__dirname, '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const routes = Object.keys(
  (JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8')) as { paths: object }).paths,
);

/** The lines of the README's fenced code blocks, with their line numbers. */
function codeLines(): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let inBlock = false;
  readme.split('\n').forEach((text, i) => {
    if (/^\s*```/.test(text)) inBlock = !inBlock;
    else if (inBlock) out.push({ line: i + 1, text });
  });
  return out;
}

/** A route template of the document (`/api/v1/test-runs/{id}`) as a pattern for a concrete path. */
function routePattern(template: string): RegExp {
  const escaped = template
    .split(/\{[^}]+\}/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]+');
  return new RegExp(`^${escaped}$`);
}

describe('README: curl examples', () => {
  const lines = codeLines();
  const assignments = (name: string) =>
    lines.filter((l) => new RegExp(`^\\s*(export\\s+)?${name}=`).test(l.text));
  const firstUse = (pattern: RegExp) => lines.find((l) => pattern.test(l.text))?.line ?? Infinity;

  it('sets BASE and TOKEN once, before the first example that uses them', () => {
    const base = assignments('BASE');
    const token = assignments('TOKEN');
    expect([base.length, token.length]).toEqual([1, 1]);
    const firstCurl = firstUse(/\bcurl\b/);
    expect(base[0].line).toBeLessThanOrEqual(firstCurl);
    // TOKEN's own login request is the first curl; every other one comes after it.
    expect(token[0].line).toBeLessThanOrEqual(
      lines.find((l) => /\bcurl\b/.test(l.text) && l.line !== token[0].line)?.line ?? Infinity,
    );
    expect(token[0].line).toBeLessThanOrEqual(firstUse(/\$\{?TOKEN\b/));
  });

  it('every $BASE path, with BASE substituted, starts with /api/v1/ once and names a route', () => {
    const [base] = assignments('BASE');
    const value = base.text.replace(/^\s*(export\s+)?BASE=/, '').replace(/^["']|["']$/g, '');
    const prefix = new URL(value).pathname.replace(/\/$/, '');
    const uses = lines.flatMap((l) =>
      [...l.text.matchAll(/\$\{?BASE\}?([^\s"'`?#\\)]*)/g)].map((m) => ({
        line: l.line,
        path: prefix + m[1],
      })),
    );
    expect(uses.length).toBeGreaterThan(20);
    const wrong = uses.filter(
      ({ path }) =>
        !path.startsWith('/api/v1/') ||
        path.split('/api/v1/').length !== 2 ||
        !routes.some((route) => routePattern(route).test(path)),
    );
    expect(wrong).toEqual([]);
  });
});

describe('shutdown grace: Docker waits longer than the service drains', () => {
  const seconds = (value: string) => {
    const m = /^(\d+)(ms|s|m)$/.exec(value);
    if (m === null) throw new Error(`not a duration: ${value}`);
    return Number(m[1]) * { ms: 0.001, s: 1, m: 60 }[m[2] as 'ms' | 's' | 'm'];
  };
  const main = readFileSync(join(root, 'src', 'main.ts'), 'utf8');
  const graceMs = Number(/SHUTDOWN_GRACE_MS = ([\d_]+);/.exec(main)?.[1].replace(/_/g, ''));

  it('README states the drain main.ts allows', () => {
    expect(graceMs).toBeGreaterThan(0);
    expect(readme.replace(/\s+/g, ' ')).toContain(
      `finishes in-flight requests (at most ${graceMs / 1000} s)`,
    );
  });

  it('docker-compose.yml gives the app more than that before it kills it (Docker: 10 s)', () => {
    const compose = readFileSync(join(root, 'docker-compose.yml'), 'utf8');
    const app = compose.split(/^ {2}app:$/m)[1]?.split(/^ {2}\S/m)[0] ?? '';
    const grace = /^ {4}stop_grace_period: (\S+)$/m.exec(app)?.[1];
    expect(grace).toBeDefined();
    expect(seconds(grace ?? '10s')).toBeGreaterThan(graceMs / 1000);
    // The docker run example says the same.
    expect(readme).toMatch(/docker run [^\n]*--stop-timeout (\d+)/);
    expect(Number(/docker run [^\n]*--stop-timeout (\d+)/.exec(readme)?.[1])).toBeGreaterThan(
      graceMs / 1000,
    );
  });
});
