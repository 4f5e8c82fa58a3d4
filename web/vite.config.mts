// The dashboard (issue #21): a static Preact app the service serves under /app (see
// src/common/http/web-app.ts). `npm run build` writes it to dist/web; `--outDir` overrides that
// (the browser test builds into a temporary directory).
import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  // Served under /app/ by the service; every asset URL is absolute under it.
  base: '/app/',
  plugins: [preact()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    // Nothing inlined as data: URIs, no modulepreload polyfill script: the page's
    // Content-Security-Policy allows scripts, styles and images from the service itself only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
    chunkSizeWarningLimit: 600,
  },
  logLevel: 'warn',
});
