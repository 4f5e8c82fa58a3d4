import { join, resolve } from 'node:path';
import madge from 'madge';

/**
 * `tms` must start at once: it imports nothing of the server (no Nest, TypeORM, pg,
 * reflect-metadata), only node: modules, commander and the files of src/cli.
 */
describe('the tms import graph', () => {
  const root = resolve(__dirname, '..', '..');

  it('stays inside src/cli, with commander as its only package', async () => {
    // includeNpm (a documented option of madge that its typings leave out): list packages too.
    const options = {
      fileExtensions: ['ts'],
      tsConfig: join(root, 'tsconfig.json'),
      includeNpm: true,
      excludeRegExp: [/\.spec\.ts$/],
    };
    const result = await madge(join(root, 'src', 'cli', 'tms.ts'), options);
    const graph = result.obj();
    const files = Object.keys(graph);
    expect(files).toContain('tms.ts');
    const deps = [...new Set(Object.values(graph).flat())].sort();
    const outside = deps.filter(
      (d) => !files.includes(d) && !/^\.\.\/\.\.\/node_modules\/commander\//.test(d),
    );
    expect(outside).toEqual([]);
    // Every file of the graph is a file of src/cli (madge names them relative to it).
    expect(files.filter((f) => f.startsWith('..'))).toEqual(
      files.filter((f) => f.startsWith('../../node_modules/commander/')),
    );
  });
});
