import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultWebDir, loadWebApp, WEB_APP_CSP } from './web-app';

const ROOT = join(__dirname, '..', '..', '..');

describe('web app (dashboard) files', () => {
  it.each([
    ['the TypeScript sources (tests)', join(ROOT, 'src', 'common', 'http')],
    ['the compiled service (npm start, the Docker image)', join(ROOT, 'dist', 'src', 'common', 'http')],
  ])('defaults to the package’s dist/web from %s', (_what, from) => {
    expect(defaultWebDir(from)).toBe(join(ROOT, 'dist', 'web'));
  });

  it('serves nothing from a directory without a build', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tms-web-none-'));
    try {
      expect(loadWebApp(dir)).toBeNull();
      mkdirSync(join(dir, 'assets'));
      writeFileSync(join(dir, 'assets', 'index.js'), '');
      expect(loadWebApp(dir)).toBeNull();
      writeFileSync(join(dir, 'index.html'), '<!doctype html>');
      expect(loadWebApp(dir)?.routes).toEqual(['/', '/app']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('allows nothing inline, nothing evaluated and no other origin', () => {
    const directives = new Map(WEB_APP_CSP.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
    expect(directives.get('default-src')).toEqual(["'self'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('style-src')).toEqual(["'self'"]);
    expect(directives.get('connect-src')).toEqual(["'self'"]);
    expect(directives.get('object-src')).toEqual(["'none'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    for (const sources of directives.values()) for (const s of sources) expect(["'self'", "'none'"]).toContain(s);
  });
});
