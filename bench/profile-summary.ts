/**
 * Summarises a V8 .cpuprofile (from `BENCH_CPU_PROF=<dir> npm run bench`): self time by function
 * and by package/file, so the hot spots of a scenario are visible without a browser.
 *
 *   node dist/bench/profile-summary.js <file.cpuprofile> [top=25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

function where(url: string): string {
  if (!url) return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

function main(): void {
  const file = process.argv[2];
  const top = Number(process.argv[3] ?? 25);
  if (!file) {
    process.stderr.write('usage: node dist/bench/profile-summary.js <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    self.set(samples[i], (self.get(samples[i]) ?? 0) + (deltas[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byFn = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id);
    if (!n) continue;
    const fn = `${n.callFrame.functionName || '(anonymous)'}  ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
    byFn.set(fn, (byFn.get(fn) ?? 0) + us);
    const f = where(n.callFrame.url);
    byFile.set(f, (byFile.get(f) ?? 0) + us);
  }
  const show = (title: string, m: Map<string, number>) => {
    process.stdout.write(`\n${title}\n`);
    for (const [k, us] of [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      process.stdout.write(
        `${((us / total) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}\n`,
      );
    }
  };
  process.stdout.write(`profile ${file}: ${(total / 1e6).toFixed(1)} s sampled\n`);
  show('self time by package / file', byFile);
  show('self time by function', byFn);
}

main();
