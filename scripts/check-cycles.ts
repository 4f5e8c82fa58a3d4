import { join } from 'node:path';
import madge from 'madge';

/**
 * Dependency-cycle check (issue #16): no cycle between source files, and none between feature
 * modules (`src/modules/<feature>/`): a feature may depend on another only if that one does not
 * depend on it, directly or through others. Exit 1 listing the cycles found.
 */
export function moduleOf(file: string): string | null {
  const m = /^modules\/([^/]+)\//.exec(file);
  return m ? m[1] : null;
}

/** The feature-module graph: which features a feature's files import. */
export function moduleGraph(files: Record<string, string[]>): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const [file, deps] of Object.entries(files)) {
    const from = moduleOf(file);
    if (from === null) continue;
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    for (const dep of deps) {
      const to = moduleOf(dep);
      if (to !== null && to !== from) edges.add(to);
    }
  }
  return graph;
}

/** Every elementary cycle's first sighting, as `a → b → a` (depth-first, no recursion over depth). */
export function findCycles(graph: Map<string, Set<string>>): string[][] {
  const cycles: string[][] = [];
  const seen = new Set<string>();
  for (const start of [...graph.keys()].sort()) {
    const stack: Array<{ node: string; path: string[] }> = [{ node: start, path: [start] }];
    while (stack.length > 0) {
      const { node, path } = stack.pop() as { node: string; path: string[] };
      for (const next of graph.get(node) ?? []) {
        if (next === start) {
          const key = [...path].sort().join('|');
          if (!seen.has(key)) {
            seen.add(key);
            cycles.push([...path, start]);
          }
        } else if (!path.includes(next) && next > start) {
          stack.push({ node: next, path: [...path, next] });
        }
      }
    }
  }
  return cycles;
}

async function main(): Promise<void> {
  const root = join(__dirname, '..', '..');
  const result = await madge(join(root, 'src'), {
    fileExtensions: ['ts'],
    tsConfig: join(root, 'tsconfig.json'),
    excludeRegExp: [/\.spec\.ts$/],
  });
  const fileCycles = result.circular();
  const moduleCycles = findCycles(moduleGraph(result.obj()));
  for (const c of fileCycles) process.stdout.write(`file cycle: ${c.join(' → ')}\n`);
  for (const c of moduleCycles) process.stdout.write(`module cycle: ${c.join(' → ')}\n`);
  if (fileCycles.length + moduleCycles.length > 0) process.exit(1);
  process.stdout.write('No dependency cycle between files or feature modules.\n');
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
