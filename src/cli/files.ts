import { type Dirent, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { UsageError } from './errors';

/**
 * The report files of `tms import <files or globs…>`. Each argument is a file, a directory (its
 * `*.xml` and `*.json` files, not its subdirectories) or a pattern the shell left unexpanded
 * (quoted): `*` (within a directory level), `**` (any number of levels) and `?`, matched against
 * the path relative to the working directory. No other glob syntax (no braces, no classes).
 */
export const REPORT_EXTENSIONS = ['.xml', '.json'] as const;

export function hasMagic(arg: string): boolean {
  return /[*?]/.test(arg);
}

/** The pattern as a regular expression over `/`-separated relative paths. */
export function globToRegExp(pattern: string): RegExp {
  let re = '';
  let i = 0;
  const p = toPosix(pattern).replace(/^\.\//, '');
  while (i < p.length) {
    const c = p[i];
    if (c === '*' && p[i + 1] === '*') {
      const atStart = i === 0 || p[i - 1] === '/';
      const slashAfter = p[i + 2] === '/';
      if (atStart && slashAfter) {
        re += '(?:[^/]+/)*';
        i += 3;
        continue;
      }
      re += '.*';
      i += 2;
      continue;
    }
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    i += 1;
  }
  return new RegExp(`^${re}$`);
}

/** The directory a pattern's matches are under: its leading segments without wildcards. */
export function globBase(pattern: string): string {
  const segments = toPosix(pattern).split('/');
  const fixed: string[] = [];
  for (const s of segments.slice(0, -1)) {
    if (hasMagic(s)) break;
    fixed.push(s);
  }
  if (fixed.length === 0) return '.';
  return fixed.join('/') === '' ? '/' : fixed.join('/');
}

function toPosix(p: string): string {
  return sep === '/' ? p : p.split(sep).join('/');
}

function isReport(name: string): boolean {
  return REPORT_EXTENSIONS.some((ext) => name.toLowerCase().endsWith(ext));
}

/** A file, or a symbolic link to one (links to directories are not followed: no cycles). */
function isFileEntry(dir: string, entry: Dirent): boolean {
  if (entry.isFile()) return true;
  if (!entry.isSymbolicLink()) return false;
  return statSync(join(dir, entry.name), { throwIfNoEntry: false })?.isFile() === true;
}

function walk(dir: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (isFileEntry(dir, entry)) out.push(full);
  }
}

/** Expands the arguments into file paths (as given or relative to `cwd`), in order, without duplicates. */
export function expandFileArgs(args: readonly string[], cwd: string): string[] {
  const files: string[] = [];
  const seen = new Set<string>();
  const add = (p: string) => {
    const key = resolve(cwd, p);
    if (!seen.has(key)) {
      seen.add(key);
      files.push(p);
    }
  };
  for (const arg of args) {
    if (hasMagic(arg)) {
      const absolutePattern = toPosix(arg).startsWith('/');
      const base = globBase(arg);
      const re = globToRegExp(arg);
      const found: string[] = [];
      let baseStat;
      try {
        baseStat = statSync(resolve(cwd, base));
      } catch {
        baseStat = null;
      }
      if (baseStat?.isDirectory()) walk(resolve(cwd, base), found);
      const matches = found
        .map((f) => (absolutePattern ? toPosix(f) : toPosix(relative(cwd, f))))
        .filter((f) => re.test(f))
        .sort();
      if (matches.length === 0) throw new UsageError(`${arg}: no file matches`);
      matches.forEach(add);
      continue;
    }
    let stat;
    try {
      stat = statSync(resolve(cwd, arg));
    } catch {
      throw new UsageError(`${arg}: no such file or directory`);
    }
    if (stat.isDirectory()) {
      const inDir = readdirSync(resolve(cwd, arg), { withFileTypes: true })
        .filter((e) => isFileEntry(resolve(cwd, arg), e) && isReport(e.name))
        .map((e) => e.name)
        .sort();
      if (inDir.length === 0) throw new UsageError(`${arg}: no *.xml or *.json file in it`);
      inDir.forEach((name) => add(join(arg, name)));
    } else {
      add(arg);
    }
  }
  return files;
}
