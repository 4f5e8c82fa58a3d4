import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Request, Response } from 'express';

/**
 * The dashboard (issue #21): a static single-page app built by Vite from `web/` into `dist/web`
 * (`npm run build`), served at `/app/` (`/` redirects there). It talks to the public API like any
 * other client; the service only hands out its files.
 */
export const WEB_APP_PATH = '/app';

/**
 * The dashboard's Content-Security-Policy: scripts, styles, images, fonts and API calls from this
 * service only — no inline script or style element, no eval, no third-party origin, no framing.
 * (Styles set through the CSSOM, as Preact and Chart.js do, are not inline styles for CSP.)
 */
export const WEB_APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Hashed asset files are immutable: a new build writes new names. */
const ASSET_MAX_AGE_MS = 365 * 24 * 3600 * 1000;

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': WEB_APP_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

/** `dist/web` of the package this file belongs to (found from here upwards by its package.json). */
export function defaultWebDir(from = __dirname): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) return resolve('dist', 'web');
    dir = parent;
  }
  return join(dir, 'dist', 'web');
}

export interface WebApp {
  /** The directory served (WEB_DIR, or the package's dist/web). */
  dir: string;
  /** Paths for the route table (405 with Allow for other methods, metrics labels). */
  routes: string[];
  /**
   * Answers a GET/HEAD request for the dashboard and returns true, or returns false for a path
   * that is not one of its files (the caller answers it, with a 404 problem for an unknown one).
   */
  handle(req: Request, res: Response): boolean;
}

/**
 * The dashboard's files, read once at startup (a rebuild takes effect at the next start), or null
 * when `dir` holds no build (no `index.html`): then nothing is served under /app.
 */
export function loadWebApp(dir: string): WebApp | null {
  const indexFile = join(dir, 'index.html');
  if (!existsSync(indexFile)) return null;
  const index = readFileSync(indexFile);
  const assetsDir = join(dir, 'assets');
  const assets = new Set(existsSync(assetsDir) ? readdirSync(assetsDir) : []);
  const prefix = `${WEB_APP_PATH}/assets/`;
  return {
    dir,
    routes: ['/', WEB_APP_PATH],
    handle(req, res) {
      const path = req.path;
      if (path === '/') {
        res.redirect(302, `${WEB_APP_PATH}/`);
        return true;
      }
      if (path === WEB_APP_PATH) {
        res.redirect(301, `${WEB_APP_PATH}/`);
        return true;
      }
      if (path === `${WEB_APP_PATH}/`) {
        for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
        // The page names the current build's assets: always revalidated.
        res.setHeader('Cache-Control', 'no-cache');
        res.type('html').send(index);
        return true;
      }
      if (path.startsWith(prefix)) {
        const name = path.slice(prefix.length);
        if (!assets.has(name)) return false;
        res.sendFile(name, {
          root: assetsDir,
          maxAge: ASSET_MAX_AGE_MS,
          immutable: true,
          headers: SECURITY_HEADERS,
        });
        return true;
      }
      return false;
    },
  };
}
