/**
 * Jest transform: ts-jest in transpile-only mode, plus a rewrite of `import.meta` for the ES-module
 * dependencies (NestJS 12) that jest runs as CommonJS.
 */
const path = require('node:path');
const tsJest = require('ts-jest').default;

const inner = tsJest.createTransformer({
  tsconfig: path.join(__dirname, '..', '..', 'tsconfig.jest.json'),
  diagnostics: false,
});

const META =
  "({ url: 'file://' + __filename, dirname: __dirname, filename: __filename })";

function fix(src, file) {
  if (!file.includes(`${path.sep}node_modules${path.sep}`) || !src.includes('import.meta')) return src;
  return src
    // ESM code that builds its own `require`: CommonJS already has one.
    .replace(/^\s*const require = createRequire\(import\.meta\.url\);?\s*$/gm, '')
    .replace(/\bimport\.meta\b/g, META);
}

module.exports = {
  process(src, file, options) {
    return inner.process(fix(src, file), file, options);
  },
  getCacheKey(src, file, options) {
    return inner.getCacheKey(fix(src, file), file, options) + ':meta2';
  },
};
